package gateway_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/auth"
)

// uiClient is a browser stand-in: a cookie jar, redirects not followed.
type uiClient struct {
	t    *testing.T
	base string
	hc   *http.Client
}

type uiAnswer struct {
	status int
	header http.Header
	body   string
}

func newUIClient(t *testing.T, g *testGW) *uiClient {
	jar, _ := cookiejar.New(nil)
	return &uiClient{t: t, base: g.base, hc: &http.Client{Jar: jar, Timeout: client.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (c *uiClient) do(method, path, body string, hdr map[string]string) uiAnswer {
	c.t.Helper()
	r, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	res, err := c.hc.Do(r)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return uiAnswer{res.StatusCode, res.Header, string(b)}
}

func (c *uiClient) form(path string, v url.Values) uiAnswer {
	c.t.Helper()
	return c.do("POST", path, v.Encode(), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
}

func (c *uiClient) cookie() *http.Cookie {
	u, _ := url.Parse(c.base + "/ui/")
	for _, ck := range c.hc.Jar.Cookies(u) {
		if ck.Name == "mcpgw_ui" {
			return ck
		}
	}
	return nil
}

var (
	csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	csrfMeta  = regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)">`)
)

func find(t *testing.T, re *regexp.Regexp, body string) string {
	t.Helper()
	m := re.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("%v not in:\n%s", re, body)
	}
	return m[1]
}

// checkUIHeaders: every UI answer carries a CSP without inline script and the usual
// anti-framing and no-sniff headers.
func checkUIHeaders(t *testing.T, what string, a uiAnswer) {
	t.Helper()
	csp := a.header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "unsafe") {
		t.Errorf("%s: Content-Security-Policy %q", what, csp)
	}
	if a.header.Get("X-Content-Type-Options") != "nosniff" || a.header.Get("X-Frame-Options") != "DENY" {
		t.Errorf("%s: headers %v", what, a.header)
	}
}

// TestUISignInWithAdminToken: with auth.admin_token set, pages send the browser to the
// sign-in form; the form needs its CSRF token and the right token; signing in starts a
// new session (the pre-sign-in cookie is worthless); writes through /ui/api need the
// page's CSRF token; signing out ends the session.
func TestUISignInWithAdminToken(t *testing.T) {
	g := startGateway(t, adminYAML+"auth: {mode: none, admin_token: tok-0123456789}\n")
	c := newUIClient(t, g)

	a := c.do("GET", "/ui/servers", "", nil)
	checkUIHeaders(t, "GET /ui/servers", a)
	if a.status != http.StatusSeeOther || a.header.Get("Location") != "/ui/login?next=%2Fui%2Fservers" {
		t.Fatalf("GET /ui/servers without a session: %d %v", a.status, a.header)
	}
	if a := c.do("GET", "/ui/api/servers", "", nil); a.status != http.StatusUnauthorized {
		t.Errorf("GET /ui/api/servers without a session: %d %s", a.status, a.body)
	}
	a = c.do("GET", "/ui/login?next=/ui/tasks", "", nil)
	checkUIHeaders(t, "GET /ui/login", a)
	pre := c.cookie()
	if a.status != 200 || pre == nil {
		t.Fatalf("GET /ui/login: %d, cookie %v", a.status, pre)
	}
	setCookie := a.header.Get("Set-Cookie")
	for _, want := range []string{"HttpOnly", "SameSite=Strict", "Path=/ui"} {
		if !strings.Contains(setCookie, want) {
			t.Errorf("Set-Cookie %q lacks %s", setCookie, want)
		}
	}
	find(t, csrfField, a.body) // the form carries its CSRF token

	if a := c.form("/ui/login", url.Values{"token": {"tok-0123456789"}, "next": {"/ui/tasks"}}); a.status != http.StatusForbidden {
		t.Errorf("sign-in without the form's CSRF token: %d", a.status)
	}
	csrf := find(t, csrfField, c.do("GET", "/ui/login", "", nil).body)
	if a := c.form("/ui/login", url.Values{"csrf": {csrf}, "token": {"wrong"}}); a.status != http.StatusUnauthorized || !strings.Contains(a.body, "not an admin credential") {
		t.Errorf("sign-in with a wrong token: %d %s", a.status, a.body)
	}
	pre = c.cookie()
	a = c.form("/ui/login", url.Values{"csrf": {csrf}, "token": {"tok-0123456789"}, "next": {"/ui/tasks"}})
	if a.status != http.StatusSeeOther || a.header.Get("Location") != "/ui/tasks" {
		t.Fatalf("sign-in: %d %v %s", a.status, a.header, a.body)
	}
	if post := c.cookie(); post == nil || post.Value == pre.Value {
		t.Fatal("signing in kept the pre-sign-in session id")
	}
	a = c.do("GET", "/ui/servers", "", nil)
	if a.status != 200 || !strings.Contains(a.body, `data-name="everything"`) {
		t.Fatalf("GET /ui/servers signed in: %d %s", a.status, a.body)
	}
	token := find(t, csrfMeta, a.body)
	if a := c.do("POST", "/ui/api/tasks", `{"id":"t1"}`, map[string]string{"Content-Type": "application/json"}); a.status != http.StatusForbidden {
		t.Errorf("POST /ui/api/tasks without the CSRF token: %d %s", a.status, a.body)
	}
	if a := c.do("POST", "/ui/api/tasks", `{"id":"t1"}`, map[string]string{"Content-Type": "application/json", "X-CSRF-Token": "x" + token}); a.status != http.StatusForbidden {
		t.Errorf("POST /ui/api/tasks with a wrong CSRF token: %d %s", a.status, a.body)
	}
	if a := c.do("POST", "/ui/api/tasks", `{"id":"t1"}`, map[string]string{"Content-Type": "application/json", "X-CSRF-Token": token}); a.status != http.StatusCreated {
		t.Errorf("POST /ui/api/tasks with the CSRF token: %d %s", a.status, a.body)
	}
	// The old pre-sign-in cookie does not sign anyone in.
	other := newUIClient(t, g)
	u, _ := url.Parse(g.base + "/ui/")
	other.hc.Jar.SetCookies(u, []*http.Cookie{{Name: "mcpgw_ui", Value: pre.Value, Path: "/ui"}})
	if a := other.do("GET", "/ui/servers", "", nil); a.status != http.StatusSeeOther {
		t.Errorf("the pre-sign-in cookie opened a page: %d", a.status)
	}
	// A foreign Origin is refused before anything else.
	if a := c.do("POST", "/ui/api/tasks", `{"id":"t2"}`, map[string]string{"Origin": "http://evil.example", "X-CSRF-Token": token}); a.status != http.StatusForbidden {
		t.Errorf("a foreign Origin: %d %s", a.status, a.body)
	}
	if a := c.form("/ui/logout", url.Values{"csrf": {token}}); a.status != http.StatusSeeOther {
		t.Fatalf("sign out: %d %s", a.status, a.body)
	}
	if a := c.do("GET", "/ui/servers", "", nil); a.status != http.StatusSeeOther {
		t.Errorf("a page after signing out: %d", a.status)
	}
	for _, p := range []string{"/ui/static/ui.js", "/ui/static/ui.css"} {
		if a := c.do("GET", p, "", nil); a.status != 200 || len(a.body) < 100 {
			t.Errorf("GET %s: %d", p, a.status)
		}
	}
	if a := c.do("GET", "/ui/no-such-page", "", nil); a.status != http.StatusNotFound {
		t.Errorf("GET /ui/no-such-page: %d", a.status)
	}
}

// TestUIOpenOnLoopback: without an admin token, on loopback in auth mode none, every page
// opens at once, and writes still need the page's CSRF token.
func TestUIOpenOnLoopback(t *testing.T) {
	g := startGateway(t, adminYAML)
	c := newUIClient(t, g)
	pages := map[string]string{"/ui/servers": `data-name="everything"`, "/ui/tasks": "New task", "/ui/projects": "New project", "/ui/sessions": "Sessions",
		"/ui/usage": "Tool calls per minute", "/ui/agents": "Agents", "/ui/executors": "Executors",
		"/ui/agents/default/explain": "Explain", "/ui/integrity": "Nothing waits for a decision."}
	var token string
	for p, want := range pages {
		a := c.do("GET", p, "", nil)
		checkUIHeaders(t, p, a)
		if a.status != 200 || !strings.Contains(a.body, want) {
			t.Errorf("GET %s: %d, %q missing\n%s", p, a.status, want, a.body)
			continue
		}
		if strings.Contains(a.body, "<script>") || strings.Contains(a.body, " style=") || strings.Contains(a.body, " on") && regexp.MustCompile(` on[a-z]+=`).MatchString(a.body) {
			t.Errorf("GET %s has inline script or style", p)
		}
		token = find(t, csrfMeta, a.body)
	}
	if a := c.do("DELETE", "/ui/api/sessions/none", "", nil); a.status != http.StatusForbidden {
		t.Errorf("DELETE without the CSRF token: %d", a.status)
	}
	if a := c.do("DELETE", "/ui/api/sessions/none", "", map[string]string{"X-CSRF-Token": token}); a.status != http.StatusNotFound {
		t.Errorf("DELETE of an unknown session: %d %s", a.status, a.body)
	}
}

// TestUISignInWithAdminKey: with a real auth mode and no admin token, the UI asks for a
// sign-in and takes an admin key (mcpgw token create-key --admin), not an agent's key.
func TestUISignInWithAdminKey(t *testing.T) {
	g := startGateway(t, adminYAML+"auth: {mode: api_key}\n")
	c := newUIClient(t, g)
	if a := c.do("GET", "/ui/servers", "", nil); a.status == http.StatusOK {
		t.Errorf("GET /ui/servers without signing in: %d", a.status)
	}
	kf, err := auth.OpenKeyFile(filepath.Join(g.reg.Config().StateDir, "api_keys.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	agentKey, _, err := kf.Add("a1")
	if err != nil {
		t.Fatal(err)
	}
	adminKey, _, err := kf.AddAdmin()
	if err != nil {
		t.Fatal(err)
	}
	login := c.do("GET", "/ui/login", "", nil)
	if login.status != http.StatusOK {
		t.Fatalf("GET /ui/login: %d", login.status)
	}
	csrf := find(t, csrfField, login.body)
	if a := c.form("/ui/login", url.Values{"csrf": {csrf}, "token": {agentKey}, "next": {"/ui/tasks"}}); a.status != http.StatusUnauthorized {
		t.Errorf("signing in with an agent's key: %d", a.status)
	}
	deadline := time.Now().Add(5 * time.Second) // the gateway reads the key file at most once a second
	for {
		csrf := find(t, csrfField, c.do("GET", "/ui/login", "", nil).body)
		a := c.form("/ui/login", url.Values{"csrf": {csrf}, "token": {adminKey}, "next": {"/ui/tasks"}})
		if a.status == http.StatusOK || a.status == http.StatusSeeOther {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("signing in with an admin key: %d %s", a.status, a.body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if a := c.do("GET", "/ui/servers", "", nil); a.status != http.StatusOK {
		t.Errorf("GET /ui/servers after signing in with an admin key: %d", a.status)
	}
}

// TestAdminSessionsAndServerTest: a session's page shows its view, an admin can end it
// (its next request is a 404), the Usage page counts its call, and POST
// /api/servers/test lists a reachable server's tools, names an unreachable one's error
// and refuses a shared stdio server with the exact message.
func TestAdminSessionsAndServerTest(t *testing.T) {
	g := startGateway(t, adminYAML)
	sid := g.initialize(t, "2025-11-25", "")
	if r := g.call(t, sid, 1, "tools/call", `{"name":"everything__test_simple_text","arguments":{}}`); r.status != 200 || strings.Contains(string(r.body), `"error"`) {
		t.Fatalf("tools/call: %d %s", r.status, r.body)
	}
	a := g.api(t, "GET", "/api/sessions/"+sid, "", nil)
	if a.status != 200 || a.obj["calls"] != float64(1) || !strings.Contains(string(a.raw), `"everything__test_simple_text"`) {
		t.Fatalf("GET /api/sessions/{id}: %s", a)
	}
	c := newUIClient(t, g)
	if u := c.do("GET", "/ui/usage", "", nil); !strings.Contains(u.body, `<span class="big" id="total-calls">1</span>`) || !strings.Contains(u.body, "test_simple_text") {
		t.Errorf("the Usage page does not show the call:\n%s", u.body)
	}
	if u := c.do("GET", "/ui/sessions/"+sid, "", nil); u.status != 200 || !strings.Contains(u.body, "everything__test_simple_text") {
		t.Errorf("the session page: %d", u.status)
	}
	if a := g.api(t, "DELETE", "/api/sessions/"+sid, "", nil); a.status != http.StatusNoContent {
		t.Fatalf("DELETE /api/sessions/{id}: %s", a)
	}
	if r := g.call(t, sid, 2, "tools/list", ""); r.status != http.StatusNotFound {
		t.Errorf("a request of the ended session: %d %s", r.status, r.body)
	}
	if a := g.api(t, "DELETE", "/api/sessions/"+sid, "", nil); a.status != http.StatusNotFound {
		t.Errorf("DELETE of an ended session: %s", a)
	}

	a = g.api(t, "POST", "/api/servers/test", `{"name":"again","type":"streamable_http","url":"`+everythingURL+`"}`, nil)
	if a.status != 200 || a.obj["ok"] != true || !strings.Contains(string(a.raw), `"again__test_simple_text"`) {
		t.Errorf("test of a reachable server: %s", a)
	}
	a = g.api(t, "POST", "/api/servers/test", `{"name":"gone","type":"streamable_http","url":"http://127.0.0.1:1/mcp","timeouts":{"connect":"2s"}}`, nil)
	if a.status != 200 || a.obj["ok"] != false || a.obj["error"] == "" {
		t.Errorf("test of an unreachable server: %s", a)
	}
	a = g.api(t, "POST", "/api/servers/test", `{"name":"x","type":"stdio","command":"true","mode":"shared"}`, nil)
	if a.status != 400 || !strings.Contains(string(a.raw), strings.ReplaceAll(config.SharedStdioError("x"), `"`, `\"`)) {
		t.Errorf("test of a shared stdio server: %s", a)
	}
	if a := g.api(t, "GET", "/api/servers", "", nil); strings.Contains(string(a.raw), `"again"`) {
		t.Errorf("a tested server was stored: %s", a)
	}
}
