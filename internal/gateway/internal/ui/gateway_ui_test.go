package ui_test

import (
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

var (
	csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
)

// checkUIHeaders: every UI answer carries a CSP without inline script and the usual
// anti-framing and no-sniff headers.
func checkUIHeaders(t *testing.T, what string, a gatewaytest.UIAnswer) {
	t.Helper()
	csp := a.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "unsafe") {
		t.Errorf("%s: Content-Security-Policy %q", what, csp)
	}
	if a.Header.Get("X-Content-Type-Options") != "nosniff" || a.Header.Get("X-Frame-Options") != "DENY" {
		t.Errorf("%s: headers %v", what, a.Header)
	}
}

// TestUISignInWithAdminToken: with auth.admin_token set, pages send the browser to the
// sign-in form; the form needs its CSRF token and the right token; signing in starts a
// new session (the pre-sign-in cookie is worthless); writes through /ui/api need the
// page's CSRF token; signing out ends the session.
func TestUISignInWithAdminToken(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.AdminYAML+"auth: {mode: none, admin_token: tok-0123456789}\n")
	c := gatewaytest.NewUIClient(t, g)

	a := c.Do("GET", "/ui/servers", "", nil)
	checkUIHeaders(t, "GET /ui/servers", a)
	if a.Status != http.StatusSeeOther || a.Header.Get("Location") != "/ui/login?next=%2Fui%2Fservers" {
		t.Fatalf("GET /ui/servers without a session: %d %v", a.Status, a.Header)
	}
	if a := c.Do("GET", "/ui/api/servers", "", nil); a.Status != http.StatusUnauthorized {
		t.Errorf("GET /ui/api/servers without a session: %d %s", a.Status, a.Body)
	}
	a = c.Do("GET", "/ui/login?next=/ui/tasks", "", nil)
	checkUIHeaders(t, "GET /ui/login", a)
	pre := c.Cookie()
	if a.Status != 200 || pre == nil {
		t.Fatalf("GET /ui/login: %d, cookie %v", a.Status, pre)
	}
	setCookie := a.Header.Get("Set-Cookie")
	for _, want := range []string{"HttpOnly", "SameSite=Strict", "Path=/ui"} {
		if !strings.Contains(setCookie, want) {
			t.Errorf("Set-Cookie %q lacks %s", setCookie, want)
		}
	}
	gatewaytest.Find(t, csrfField, a.Body) // the form carries its CSRF token

	if a := c.Form("/ui/login", url.Values{"token": {"tok-0123456789"}, "next": {"/ui/tasks"}}); a.Status != http.StatusForbidden {
		t.Errorf("sign-in without the form's CSRF token: %d", a.Status)
	}
	csrf := gatewaytest.Find(t, csrfField, c.Do("GET", "/ui/login", "", nil).Body)
	if a := c.Form("/ui/login", url.Values{"csrf": {csrf}, "token": {"wrong"}}); a.Status != http.StatusUnauthorized || !strings.Contains(a.Body, "not an admin credential") {
		t.Errorf("sign-in with a wrong token: %d %s", a.Status, a.Body)
	}
	pre = c.Cookie()
	a = c.Form("/ui/login", url.Values{"csrf": {csrf}, "token": {"tok-0123456789"}, "next": {"/ui/tasks"}})
	if a.Status != http.StatusSeeOther || a.Header.Get("Location") != "/ui/tasks" {
		t.Fatalf("sign-in: %d %v %s", a.Status, a.Header, a.Body)
	}
	if post := c.Cookie(); post == nil || post.Value == pre.Value {
		t.Fatal("signing in kept the pre-sign-in session id")
	}
	a = c.Do("GET", "/ui/servers", "", nil)
	if a.Status != 200 || !strings.Contains(a.Body, `data-name="everything"`) {
		t.Fatalf("GET /ui/servers signed in: %d %s", a.Status, a.Body)
	}
	token := gatewaytest.Find(t, gatewaytest.CSRFMeta, a.Body)
	if a := c.Do("POST", "/ui/api/tasks", `{"id":"t1"}`, map[string]string{"Content-Type": "application/json"}); a.Status != http.StatusForbidden {
		t.Errorf("POST /ui/api/tasks without the CSRF token: %d %s", a.Status, a.Body)
	}
	if a := c.Do("POST", "/ui/api/tasks", `{"id":"t1"}`, map[string]string{"Content-Type": "application/json", "X-CSRF-Token": "x" + token}); a.Status != http.StatusForbidden {
		t.Errorf("POST /ui/api/tasks with a wrong CSRF token: %d %s", a.Status, a.Body)
	}
	if a := c.Do("POST", "/ui/api/tasks", `{"id":"t1"}`, map[string]string{"Content-Type": "application/json", "X-CSRF-Token": token}); a.Status != http.StatusCreated {
		t.Errorf("POST /ui/api/tasks with the CSRF token: %d %s", a.Status, a.Body)
	}
	// The old pre-sign-in cookie does not sign anyone in.
	other := gatewaytest.NewUIClient(t, g)
	u, _ := url.Parse(g.Base + "/ui/")
	other.HTTP.Jar.SetCookies(u, []*http.Cookie{{Name: "mcpgw_ui", Value: pre.Value, Path: "/ui"}})
	if a := other.Do("GET", "/ui/servers", "", nil); a.Status != http.StatusSeeOther {
		t.Errorf("the pre-sign-in cookie opened a page: %d", a.Status)
	}
	// A foreign Origin is refused before anything else.
	if a := c.Do("POST", "/ui/api/tasks", `{"id":"t2"}`, map[string]string{"Origin": "http://evil.example", "X-CSRF-Token": token}); a.Status != http.StatusForbidden {
		t.Errorf("a foreign Origin: %d %s", a.Status, a.Body)
	}
	if a := c.Form("/ui/logout", url.Values{"csrf": {token}}); a.Status != http.StatusSeeOther {
		t.Fatalf("sign out: %d %s", a.Status, a.Body)
	}
	if a := c.Do("GET", "/ui/servers", "", nil); a.Status != http.StatusSeeOther {
		t.Errorf("a page after signing out: %d", a.Status)
	}
	for _, p := range []string{"/ui/static/ui.js", "/ui/static/ui.css"} {
		if a := c.Do("GET", p, "", nil); a.Status != 200 || len(a.Body) < 100 {
			t.Errorf("GET %s: %d", p, a.Status)
		}
	}
	if a := c.Do("GET", "/ui/no-such-page", "", nil); a.Status != http.StatusNotFound {
		t.Errorf("GET /ui/no-such-page: %d", a.Status)
	}
}

// TestUIOpenOnLoopback: without an admin token, on loopback in auth mode none, every page
// opens at once, and writes still need the page's CSRF token.
func TestUIOpenOnLoopback(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.AdminYAML)
	c := gatewaytest.NewUIClient(t, g)
	pages := map[string]string{"/ui/servers": `data-name="everything"`, "/ui/tasks": "New task", "/ui/projects": "New project", "/ui/sessions": "Sessions",
		"/ui/usage": "Tool calls per minute", "/ui/agents": "Agents", "/ui/executors": "Executors",
		"/ui/agents/default/explain": "Explain", "/ui/integrity": "Nothing waits for a decision."}
	var token string
	for p, want := range pages {
		a := c.Do("GET", p, "", nil)
		checkUIHeaders(t, p, a)
		if a.Status != 200 || !strings.Contains(a.Body, want) {
			t.Errorf("GET %s: %d, %q missing\n%s", p, a.Status, want, a.Body)
			continue
		}
		if strings.Contains(a.Body, "<script>") || strings.Contains(a.Body, " style=") || strings.Contains(a.Body, " on") && regexp.MustCompile(` on[a-z]+=`).MatchString(a.Body) {
			t.Errorf("GET %s has inline script or style", p)
		}
		token = gatewaytest.Find(t, gatewaytest.CSRFMeta, a.Body)
	}
	if a := c.Do("DELETE", "/ui/api/sessions/none", "", nil); a.Status != http.StatusForbidden {
		t.Errorf("DELETE without the CSRF token: %d", a.Status)
	}
	if a := c.Do("DELETE", "/ui/api/sessions/none", "", map[string]string{"X-CSRF-Token": token}); a.Status != http.StatusNotFound {
		t.Errorf("DELETE of an unknown session: %d %s", a.Status, a.Body)
	}
}

// TestUISignInWithAdminKey: with a real auth mode and no admin token, the UI asks for a
// sign-in and takes an admin key (mcpgw token create-key --admin), not an agent's key.
func TestUISignInWithAdminKey(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.AdminYAML+"auth: {mode: api_key}\n")
	c := gatewaytest.NewUIClient(t, g)
	if a := c.Do("GET", "/ui/servers", "", nil); a.Status == http.StatusOK {
		t.Errorf("GET /ui/servers without signing in: %d", a.Status)
	}
	kf, err := auth.OpenKeyFile(filepath.Join(g.Reg.Config().StateDir, "api_keys.jsonl"))
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
	login := c.Do("GET", "/ui/login", "", nil)
	if login.Status != http.StatusOK {
		t.Fatalf("GET /ui/login: %d", login.Status)
	}
	csrf := gatewaytest.Find(t, csrfField, login.Body)
	if a := c.Form("/ui/login", url.Values{"csrf": {csrf}, "token": {agentKey}, "next": {"/ui/tasks"}}); a.Status != http.StatusUnauthorized {
		t.Errorf("signing in with an agent's key: %d", a.Status)
	}
	deadline := time.Now().Add(5 * time.Second) // the gateway reads the key file at most once a second
	for {
		csrf := gatewaytest.Find(t, csrfField, c.Do("GET", "/ui/login", "", nil).Body)
		a := c.Form("/ui/login", url.Values{"csrf": {csrf}, "token": {adminKey}, "next": {"/ui/tasks"}})
		if a.Status == http.StatusOK || a.Status == http.StatusSeeOther {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("signing in with an admin key: %d %s", a.Status, a.Body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if a := c.Do("GET", "/ui/servers", "", nil); a.Status != http.StatusOK {
		t.Errorf("GET /ui/servers after signing in with an admin key: %d", a.Status)
	}
}

// TestAdminSessionsAndServerTest: a session's page shows its view, an admin can end it
// (its next request is a 404), the Usage page counts its call, and POST
// /api/servers/test lists a reachable server's tools, names an unreachable one's error
// and refuses a shared stdio server with the exact message.
func TestAdminSessionsAndServerTest(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.AdminYAML)
	sid := g.Initialize(t, "2025-11-25", "")
	if r := g.Call(t, sid, 1, "tools/call", `{"name":"everything__test_simple_text","arguments":{}}`); r.Status != 200 || strings.Contains(string(r.Body), `"error"`) {
		t.Fatalf("tools/call: %d %s", r.Status, r.Body)
	}
	a := g.API(t, "GET", "/api/sessions/"+sid, "", nil)
	if a.Status != 200 || a.Obj["calls"] != float64(1) || !strings.Contains(string(a.Raw), `"everything__test_simple_text"`) {
		t.Fatalf("GET /api/sessions/{id}: %s", a)
	}
	c := gatewaytest.NewUIClient(t, g)
	if u := c.Do("GET", "/ui/usage", "", nil); !strings.Contains(u.Body, `<span class="big" id="total-calls">1</span>`) || !strings.Contains(u.Body, "test_simple_text") {
		t.Errorf("the Usage page does not show the call:\n%s", u.Body)
	}
	if u := c.Do("GET", "/ui/sessions/"+sid, "", nil); u.Status != 200 || !strings.Contains(u.Body, "everything__test_simple_text") {
		t.Errorf("the session page: %d", u.Status)
	}
	if a := g.API(t, "DELETE", "/api/sessions/"+sid, "", nil); a.Status != http.StatusNoContent {
		t.Fatalf("DELETE /api/sessions/{id}: %s", a)
	}
	if r := g.Call(t, sid, 2, "tools/list", ""); r.Status != http.StatusNotFound {
		t.Errorf("a request of the ended session: %d %s", r.Status, r.Body)
	}
	if a := g.API(t, "DELETE", "/api/sessions/"+sid, "", nil); a.Status != http.StatusNotFound {
		t.Errorf("DELETE of an ended session: %s", a)
	}

	a = g.API(t, "POST", "/api/servers/test", `{"name":"again","type":"streamable_http","url":"`+gatewaytest.EverythingURL()+`"}`, nil)
	if a.Status != 200 || a.Obj["ok"] != true || !strings.Contains(string(a.Raw), `"again__test_simple_text"`) {
		t.Errorf("test of a reachable server: %s", a)
	}
	a = g.API(t, "POST", "/api/servers/test", `{"name":"gone","type":"streamable_http","url":"http://127.0.0.1:1/mcp","timeouts":{"connect":"2s"}}`, nil)
	if a.Status != 200 || a.Obj["ok"] != false || a.Obj["error"] == "" {
		t.Errorf("test of an unreachable server: %s", a)
	}
	a = g.API(t, "POST", "/api/servers/test", `{"name":"x","type":"stdio","command":"true","mode":"shared"}`, nil)
	if a.Status != 400 || !strings.Contains(string(a.Raw), strings.ReplaceAll(config.SharedStdioError("x"), `"`, `\"`)) {
		t.Errorf("test of a shared stdio server: %s", a)
	}
	if a := g.API(t, "GET", "/api/servers", "", nil); strings.Contains(string(a.Raw), `"again"`) {
		t.Errorf("a tested server was stored: %s", a)
	}
}
