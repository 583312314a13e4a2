package ui

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/mux"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/admin"
	"github.com/mcpgw/mcpgw/internal/registry"
)

// upstreamPort is fakePort with OAuth upstreams and kept grants. A server name and a
// subject carry markup and a right-to-left override, as a hostile config or identity
// could.
type upstreamPort struct {
	fakePort
	grants  []registry.GrantInfo
	started []string
	revoked []string
}

const (
	evilServer  = `crm"><script>alert(1)</script>`
	evilSubject = "mallory<b>\u202eevil"
)

func (p *upstreamPort) Config() *config.Config {
	oauth := func(per string) *config.ServerDef {
		return &config.ServerDef{Type: "http", URL: "http://127.0.0.1:1/mcp", Auth: config.UpstreamAuth{Type: "oauth", Per: per, Grant: "authorization_code"}}
	}
	return &config.Config{Servers: map[string]*config.ServerDef{evilServer: oauth("server"), "mail": oauth("user"), "plain": {Type: "http"}}}
}
func (p *upstreamPort) UpstreamAuth() admin.UpstreamAuth { return p }
func (p *upstreamPort) Grants(subject string) ([]registry.GrantInfo, error) {
	return slices.Clone(p.grants), nil
}
func (p *upstreamPort) Revoke(server, subject string) error {
	p.revoked = append(p.revoked, server+"|"+subject)
	p.grants = slices.DeleteFunc(p.grants, func(g registry.GrantInfo) bool { return g.Server == server && g.Subject == subject })
	return nil
}
func (p *upstreamPort) ConsentURL(_ context.Context, server, subject string) (registry.Consent, error) {
	p.started = append(p.started, server+"|"+subject)
	return registry.Consent{URL: "https://gw.example/oauth/consent/st?x=\"><script>", Code: "ABCD-EFGH"}, nil
}

func newUpstreamUI(t *testing.T) (*upstreamPort, http.Handler) {
	t.Helper()
	now := time.Now()
	port := &upstreamPort{fakePort: fakePort{open: true}, grants: []registry.GrantInfo{
		{Server: evilServer, Issuer: "https://as.example", Scopes: []string{"mcp", "offline_access"}, Expires: now.Add(time.Hour), Refreshable: true, Updated: now},
		{Server: "mail", Subject: evilSubject, Issuer: "https://mail.example", Updated: now},
		{Server: "retired", Subject: "bob", Issuer: "https://old.example", Updated: now},
	}}
	u := New(port, "v-test", slog.New(slog.NewTextHandler(io.Discard, nil)))
	root := mux.NewRouter()
	root.NotFoundHandler = u.Mount(root, nil, nil)
	return port, root
}

// openPage opens the page as the local owner: its body, the session cookie and the CSRF
// token.
func openPage(t *testing.T, h http.Handler) (string, []*http.Cookie, string) {
	t.Helper()
	w := do(h, "GET", "/ui/upstream", nil, nil, nil)
	body := w.Body.String()
	if w.Code != http.StatusOK {
		t.Fatalf("the page: %d %s", w.Code, body)
	}
	csrf := between(body, `name="csrf-token" content="`, `"`)
	if csrf == "" || len(w.Result().Cookies()) == 0 {
		t.Fatalf("no CSRF token or session cookie:\n%s", body)
	}
	return body, w.Result().Cookies(), csrf
}

// TestUpstreamPage: every OAuth upstream is a section with a Connect form (a subject
// field for the per-user one), each grant a row with issuer, scopes and a Revoke form
// carrying the CSRF token; a grant of a server no longer configured is listed apart;
// markup and invisible characters from names and subjects are escaped or written out;
// the nav links the page.
func TestUpstreamPage(t *testing.T) {
	_, h := newUpstreamUI(t)
	body, _, csrf := openPage(t, h)
	// The subject goes back to the form as it is (a hidden field, a data- attribute:
	// neither shows), and nowhere else unmarked.
	shown := strings.NewReplacer("data-subject=\"mallory&lt;b&gt;\u202eevil\"", "", "name=\"subject\" value=\"mallory&lt;b&gt;\u202eevil\"", "").Replace(body)
	for _, bad := range []string{"<script>", "<b>", "\u202e"} {
		if strings.Contains(shown, bad) {
			t.Errorf("the page carries %q unescaped:\n%s", bad, body)
		}
	}
	mail := between(body, `<section class="card upstream-server" data-server="mail"`, "</section>")
	if mail == "" {
		t.Fatalf("no section for mail:\n%s", body)
	}
	for _, want := range []string{`<span class="badge">per user</span>`, `action="/ui/upstream/connect"`, `name="subject" required`,
		`<code>mallory&lt;b&gt;<span class="invis" title="a character that does not show">U&#43;202E</span>evil</code>`,
		`name="csrf" value="` + csrf + `"`, `action="/ui/upstream/revoke"`, `https://mail.example`} {
		if !strings.Contains(mail, want) {
			t.Errorf("mail's section has no %s:\n%s", want, mail)
		}
	}
	crm := between(body, `<section class="card upstream-server" data-server="crm&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"`, "</section>")
	if crm == "" {
		t.Fatalf("no section for the server with markup in its name:\n%s", body)
	}
	for _, want := range []string{`<span class="badge">per server</span>`, `server-wide`, `<code>mcp</code> <code>offline_access</code>`, `<td>yes</td>`} {
		if !strings.Contains(crm, want) {
			t.Errorf("the per-server section has no %s:\n%s", want, crm)
		}
	}
	if strings.Contains(crm, `name="subject" required`) {
		t.Errorf("the per-server Connect form asks for a subject:\n%s", crm)
	}
	if orphan := between(body, `<section class="card upstream-orphans"`, "</section>"); !strings.Contains(orphan, `data-server="retired" data-subject="bob"`) {
		t.Errorf("the grant of a server no longer configured is not listed apart:\n%s", body)
	}
	if strings.Contains(body, `data-server="plain"`) {
		t.Errorf("a server without OAuth is listed")
	}
	if !strings.Contains(body, `<a href="/ui/upstream" aria-current="page">Upstream sign-in</a>`) {
		t.Errorf("the nav does not link the page as current")
	}
}

// TestUpstreamPageForms: Connect and Revoke need the page's CSRF token (without it: 403,
// nothing starts, nothing is revoked); Connect shows the consent URL as a link that opens
// in a new window, escaped; a per-user Connect without a subject, or with a newline in
// it, is refused on the page; Revoke forgets the grant, is audited and goes back to the
// page; a grant not kept is a 404; a huge form is refused; GET on a form's path is 405.
func TestUpstreamPageForms(t *testing.T) {
	port, h := newUpstreamUI(t)
	_, cookies, csrf := openPage(t, h)
	if w := do(h, "POST", "/ui/upstream/connect", url.Values{"server": {"mail"}, "subject": {"alice"}}, cookies, nil); w.Code != http.StatusForbidden {
		t.Errorf("connect without the CSRF token: %d", w.Code)
	}
	if w := do(h, "POST", "/ui/upstream/revoke", url.Values{"server": {"mail"}, "subject": {evilSubject}, "csrf": {"wrong"}}, cookies, nil); w.Code != http.StatusForbidden {
		t.Errorf("revoke with a wrong CSRF token: %d", w.Code)
	}
	if w := do(h, "POST", "/ui/upstream/revoke", url.Values{"server": {"mail"}, "subject": {evilSubject}, "csrf": {csrf}}, nil, nil); w.Code != http.StatusUnauthorized {
		t.Errorf("revoke without a session: %d", w.Code)
	}
	if len(port.started)+len(port.revoked) != 0 {
		t.Fatalf("a refused form acted: started %v, revoked %v", port.started, port.revoked)
	}

	w := do(h, "POST", "/ui/upstream/connect", url.Values{"server": {"mail"}, "subject": {"alice"}, "csrf": {csrf}}, cookies, nil)
	consent := between(w.Body.String(), `<div class="ok-box consent" id="upstream-consent"`, "</div>")
	if w.Code != http.StatusOK || !strings.Contains(consent, `<a id="consent-link" href="https://gw.example/oauth/consent/st?x=%22%3e%3cscript%3e" target="_blank" rel="noopener noreferrer">`) ||
		!strings.Contains(consent, `<code>alice</code>`) || !strings.Contains(consent, `<strong id="consent-code">ABCD-EFGH</strong>`) {
		t.Errorf("connect: %d, consent box:\n%s", w.Code, consent)
	}
	if !slices.Equal(port.started, []string{"mail|alice"}) {
		t.Errorf("started %v", port.started)
	}
	for _, c := range []struct {
		form   url.Values
		status int
		says   string
	}{
		{url.Values{"server": {"mail"}}, 400, "the subject whose grant it is is required"},
		{url.Values{"server": {"mail"}, "subject": {"alice\nforged"}}, 400, "control characters"},
		{url.Values{"server": {"plain"}}, 404, "no OAuth upstream named"},
	} {
		c.form.Set("csrf", csrf)
		w := do(h, "POST", "/ui/upstream/connect", c.form, cookies, nil)
		if alert := between(w.Body.String(), `<div class="alert" id="upstream-alert" role="alert">`, "</div>"); w.Code != c.status || !strings.Contains(alert, c.says) {
			t.Errorf("connect %v: %d, alert %q", c.form, w.Code, alert)
		}
	}

	w = do(h, "POST", "/ui/upstream/revoke", url.Values{"server": {"mail"}, "subject": {evilSubject}, "csrf": {csrf}}, cookies, nil)
	if loc := w.Header().Get("Location"); w.Code != http.StatusSeeOther || !strings.HasPrefix(loc, "/ui/upstream?revoked=mail") {
		t.Errorf("revoke: %d to %q", w.Code, loc)
	}
	if !slices.Equal(port.revoked, []string{"mail|" + evilSubject}) {
		t.Errorf("revoked %v", port.revoked)
	}
	i := slices.IndexFunc(port.audits, func(ev auth.AuditEvent) bool { return ev.Outcome == "revoked" })
	if i < 0 || port.audits[i].Object != "upstream-grants/mail/"+evilSubject || port.audits[i].Actor != "ui:loopback" || port.audits[i].Action != "POST /ui/upstream/revoke" {
		t.Errorf("audit: %+v", port.audits)
	}
	if w := do(h, "GET", "/ui/upstream?revoked="+url.QueryEscape("mail for "+evilSubject), nil, cookies, nil); !strings.Contains(w.Body.String(), `id="upstream-revoked"`) || strings.Contains(w.Body.String(), "<b>") {
		t.Errorf("the page after revoking: %s", w.Body)
	}
	if w := do(h, "POST", "/ui/upstream/revoke", url.Values{"server": {"mail"}, "subject": {evilSubject}, "csrf": {csrf}}, cookies, nil); w.Code != http.StatusNotFound {
		t.Errorf("revoke again: %d, want 404", w.Code)
	}
	big := url.Values{"server": {"mail"}, "subject": {strings.Repeat("a", upstreamFormMax)}, "csrf": {csrf}}
	if w := do(h, "POST", "/ui/upstream/revoke", big, cookies, nil); w.Code != http.StatusForbidden && w.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("a huge form: %d", w.Code)
	}
	if w := do(h, "POST", "/ui/upstream/revoke", big, cookies, map[string]string{"X-CSRF-Token": csrf}); w.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("a huge form with the CSRF header: %d, want 413", w.Code)
	}
	if w := do(h, "GET", "/ui/upstream/revoke", nil, cookies, nil); w.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET on the revoke form's path: %d", w.Code)
	}
	if len(port.revoked) != 1 {
		t.Errorf("revoked %v", port.revoked)
	}
}
