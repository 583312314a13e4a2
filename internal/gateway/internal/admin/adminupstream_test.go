package admin_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// TestAdminUpstreamGrants: a gateway whose upstream crm requires OAuth (per server) lists
// it with no grant; POST .../crm/connect answers a consent URL, which a browser follows
// (the authorization server approves, the gateway's /oauth/callback completes); the list
// then shows the grant (issuer, scopes, refreshable) and crm comes up with its tool;
// DELETE revokes it (the list shows none, a second DELETE is 404); no answer (the API's,
// the callback's, /readyz) carries a token the authorization server issued; the writes
// are audit lines; the next call after revoking goes without a token and asks for consent
// again; without the admin credential every route is 401, a per-server connect
// with a subject or an unknown server is refused, and no authorization starts for them.
func TestAdminUpstreamGrants(t *testing.T) {
	up := gatewaytest.NewFakeOAuth(t)
	const admin = "upstream-grants-admin-token-0123456789"
	g := gatewaytest.Start(t, `
listen: {{listen}}
state_dir: {{state_dir}}
store: memory
auth:
  mode: none
  admin_token: `+admin+`
servers:
  crm:
    type: http
    url: `+up.Srv.URL+`/mcp
    auth: {type: oauth, per: server}
`)
	auth := map[string]string{"Authorization": "Bearer " + admin}
	var answers [][]byte
	api := func(method, path, body string, hdr map[string]string) gatewaytest.APIAnswer {
		t.Helper()
		a := g.API(t, method, path, body, hdr)
		answers = append(answers, a.Raw)
		return a
	}
	type listed struct {
		Servers []struct {
			Name, Per, Grant string
			Granted, Connect bool
		}
		Grants []struct {
			Server, Subject, Issuer string
			Scopes                  []string
			Refreshable             bool
		}
	}
	list := func() listed {
		t.Helper()
		a := api("GET", "/api/upstream-grants", "", auth)
		var l listed
		if a.Status != 200 || json.Unmarshal(a.Raw, &l) != nil {
			t.Fatalf("list: %s", a)
		}
		return l
	}

	for _, c := range []struct{ method, path, body string }{
		{"GET", "/api/upstream-grants", ""}, {"POST", "/api/upstream-grants/crm/connect", "{}"}, {"DELETE", "/api/upstream-grants/crm", ""},
	} {
		if a := api(c.method, c.path, c.body, nil); a.Status != http.StatusUnauthorized {
			t.Errorf("%s %s without a credential: %s", c.method, c.path, a)
		}
	}
	l := list()
	if len(l.Servers) != 1 || l.Servers[0].Name != "crm" || l.Servers[0].Per != "server" || l.Servers[0].Grant != "authorization_code" || l.Servers[0].Granted || !l.Servers[0].Connect || len(l.Grants) != 0 {
		t.Fatalf("before any grant: %+v", l)
	}
	if a := api("POST", "/api/upstream-grants/crm/connect", `{"subject": "alice"}`, auth); a.Status != 400 {
		t.Errorf("a subject for a per-server grant: %s", a)
	}
	if a := api("POST", "/api/upstream-grants/nosuch/connect", `{}`, auth); a.Status != 404 {
		t.Errorf("an unknown server: %s", a)
	}
	if a := api("DELETE", "/api/upstream-grants/crm", "", auth); a.Status != 404 {
		t.Errorf("revoke before any grant: %s", a)
	}

	a := api("POST", "/api/upstream-grants/crm/connect", `{}`, auth)
	consent, _ := a.Obj["url"].(string)
	code, _ := a.Obj["code"].(string)
	if a.Status != 200 || !strings.HasPrefix(consent, g.Base+"/oauth/consent/") || code == "" {
		t.Fatalf("connect: %s", a)
	}
	// The browser: the consent page takes the code, the authorization server approves
	// and sends it to the gateway's callback (every hop on loopback).
	cresp, err := gatewaytest.NewBrowser().PostForm(consent, url.Values{"code": {code}})
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(io.LimitReader(cresp.Body, 1<<16))
	cresp.Body.Close()
	answers = append(answers, page)
	if cresp.StatusCode != 200 || !strings.Contains(string(page), "may now use crm") {
		t.Fatalf("the callback: %d %s", cresp.StatusCode, page)
	}

	l = list()
	if len(l.Servers) != 1 || !l.Servers[0].Granted || len(l.Grants) != 1 {
		t.Fatalf("after consent: %+v", l)
	}
	if gr := l.Grants[0]; gr.Server != "crm" || gr.Subject != "" || gr.Issuer != up.Srv.URL+"/as" || !gr.Refreshable || strings.Join(gr.Scopes, " ") != "crm.read offline_access" {
		t.Errorf("the grant: %+v", gr)
	}
	// The grant works: crm comes up (the callback restarted it) and its tool is served.
	deadline := time.Now().Add(15 * time.Second)
	for {
		a := api("GET", "/api/servers/crm", "", auth)
		if live, _ := a.Obj["live"].(map[string]any); live != nil && live["state"] == "up" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("crm not up within 15 s of the grant: %s", a)
		}
		time.Sleep(20 * time.Millisecond)
	}
	ini := g.Do(t, gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`})
	sid := ini.Header.Get("Mcp-Session-Id")
	tools := g.Do(t, gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, Header: map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"}})
	hdr := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"}
	var listed2 struct {
		Result struct{ Tools []struct{ Name string } }
	}
	_ = json.Unmarshal(tools.Body, &listed2)
	accounts := ""
	for _, tl := range listed2.Result.Tools {
		if strings.HasSuffix(tl.Name, "accounts") {
			accounts = tl.Name
		}
	}
	if accounts == "" {
		t.Fatalf("tools/list with the grant has no accounts tool: %s", tools.Body)
	}
	callAccounts := func(id int) gatewaytest.Resp {
		return g.Do(t, gatewaytest.Req{Body: fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, id, accounts), Header: hdr})
	}
	if c := callAccounts(3); !strings.Contains(string(c.Body), "acme") {
		t.Errorf("a call with the grant: %s", c.Body)
	}
	readyz := g.Do(t, gatewaytest.Req{Method: "GET", Path: "/readyz"})
	answers = append(answers, readyz.Body, tools.Body)

	if a := api("DELETE", "/api/upstream-grants/crm?subject=alice", "", auth); a.Status != 404 {
		t.Errorf("revoke a subject's grant of a per-server upstream: %s", a)
	}
	a = api("DELETE", "/api/upstream-grants/crm", "", auth)
	if rv, _ := a.Obj["revoked"].(map[string]any); a.Status != 200 || rv["issuer"] != up.Srv.URL+"/as" {
		t.Errorf("revoke: %s", a)
	}
	if l = list(); len(l.Grants) != 0 || l.Servers[0].Granted {
		t.Errorf("after revoking: %+v", l)
	}
	// The revocation holds at once: the next call goes without the token, the upstream
	// refuses it, and the answer asks for consent again instead of reaching the tool.
	after := callAccounts(4)
	answers = append(answers, after.Body)
	if strings.Contains(string(after.Body), "acme") || !strings.Contains(string(after.Body), "needs your authorization") {
		t.Errorf("a call after revoking: %s", after.Body)
	}
	if a := api("DELETE", "/api/upstream-grants/crm", "", auth); a.Status != 404 {
		t.Errorf("revoke again: %s", a)
	}

	up.Mu.Lock()
	issued, calls := len(up.Issued), up.Calls
	up.Mu.Unlock()
	if issued == 0 || calls == 0 {
		t.Fatalf("the upstream issued %d tokens and served %d requests with one: the search for leaks below would prove nothing", issued, calls)
	}
	for _, b := range answers {
		if tok := up.Leaked(b); len(tok) > 0 {
			t.Errorf("an answer carries the tokens %v: %s", tok, b)
		}
	}
	if tok := up.Leaked([]byte(g.Log.String())); len(tok) > 0 {
		t.Errorf("the gateway's log carries the tokens %v", tok)
	}
	auditPath := filepath.Join(g.Gateway.FileConfig().StateDir, "audit.jsonl")
	lines := gatewaytest.WaitAudit(t, auditPath, func(ls []map[string]any) bool {
		var started, revoked bool
		for _, l := range ls {
			started = started || (l["object"] == "upstream-grants/crm" && l["outcome"] == "started")
			revoked = revoked || (l["object"] == "upstream-grants/crm" && l["outcome"] == "revoked")
		}
		return started && revoked
	})
	raw, _ := json.Marshal(lines)
	if tok := up.Leaked(raw); len(tok) > 0 {
		t.Errorf("the audit log carries the tokens %v", tok)
	}
}

// TestAdminUpstreamGrantsAttacks: through the whole gateway's router, a path-traversal
// server name never reaches a grant handler (the muxes redirect to the clean path, or find
// no route), a subject with a newline is refused (no forged audit line), a body over the
// admin API's bound is a 413, a wrong method a 405 with Allow, a wrong credential a 401,
// and no answer carries a consent URL or a revocation.
func TestAdminUpstreamGrantsAttacks(t *testing.T) {
	up := gatewaytest.NewFakeOAuth(t)
	const admin = "upstream-grants-attack-token-0123456789"
	g := gatewaytest.Start(t, `
listen: {{listen}}
state_dir: {{state_dir}}
store: memory
auth:
  mode: none
  admin_token: `+admin+`
servers:
  crm:
    type: http
    url: `+up.Srv.URL+`/mcp
    auth: {type: oauth, per: server}
`)
	auth := map[string]string{"Authorization": "Bearer " + admin}
	noRedirect := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, p := range []string{"/api/upstream-grants/..%2Fservers%2Fcrm/connect", "/api/upstream-grants/../servers/crm", "/api/upstream-grants/%2e%2e/connect", "/api/upstream-grants/crm%2F..%2F..%2Fruntime"} {
		for _, m := range []string{"POST", "DELETE"} {
			r, _ := http.NewRequest(m, g.Base+p, strings.NewReader("{}"))
			r.Header.Set("Authorization", "Bearer "+admin)
			resp, err := noRedirect.Do(r)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
			resp.Body.Close()
			// Go's ServeMux answers a raw ".." with a 307 to the clean path, gorilla/mux an
			// encoded one with a 301; a name with an encoded slash matches no route.
			if c := resp.StatusCode; c != http.StatusMovedPermanently && c != http.StatusTemporaryRedirect && c != http.StatusNotFound {
				t.Errorf("%s %s: %d %s, want a redirect to the clean path or a 404", m, p, c, b)
			}
			if loc := resp.Header.Get("Location"); strings.Contains(loc, "..") {
				t.Errorf("%s %s: redirected to %q", m, p, loc)
			}
			if strings.Contains(string(b), `"url"`) || strings.Contains(string(b), `"revoked"`) {
				t.Errorf("%s %s reached a grant: %s", m, p, b)
			}
		}
	}
	if a := g.API(t, "POST", "/api/upstream-grants/crm/connect", "{\"subject\": \"x\\nadmin revoked everything\"}", auth); a.Status != 400 || !strings.Contains(a.String(), "control characters") {
		t.Errorf("a subject with a newline: %s", a)
	}
	if a := g.API(t, "DELETE", "/api/upstream-grants/crm?subject=x%0D%0Aforged", "", auth); a.Status != 400 {
		t.Errorf("a revoke subject with CR LF: %s", a)
	}
	huge := `{"subject": "` + strings.Repeat("a", 2<<20) + `"}`
	if a := g.API(t, "POST", "/api/upstream-grants/crm/connect", huge, auth); a.Status != http.StatusRequestEntityTooLarge {
		t.Errorf("a 2 MiB body: %s", a)
	}
	for _, c := range []struct{ method, path, allow string }{
		{"PUT", "/api/upstream-grants", "GET"}, {"GET", "/api/upstream-grants/crm/connect", "POST"}, {"PATCH", "/api/upstream-grants/crm", "DELETE"},
	} {
		if a := g.API(t, c.method, c.path, "{}", auth); a.Status != http.StatusMethodNotAllowed || a.Header.Get("Allow") != c.allow {
			t.Errorf("%s %s: %d Allow %q, want 405 Allow %q", c.method, c.path, a.Status, a.Header.Get("Allow"), c.allow)
		}
	}
	if a := g.API(t, "GET", "/api/upstream-grants", "", map[string]string{"Authorization": "Bearer wrong"}); a.Status != http.StatusUnauthorized {
		t.Errorf("a wrong credential: %s", a)
	}
	if a := g.API(t, "GET", "/api/upstream-grants", "", auth); a.Status != 200 || !strings.Contains(a.String(), `"grants": []`) {
		t.Errorf("after the attacks: %s", a)
	}
}

// TestAdminUpstreamGrantsPerUser: for a per-user upstream, connect needs the subject whose
// grant it is; the URL an admin starts for agent:a1 and hands over completes a1's own
// grant (a1's call then carries it, a2 still has none); the list shows it by subject;
// revoking needs the subject (the server-wide or another subject's is a 404), and after
// it a1's next call asks a1 to sign in again.
func TestAdminUpstreamGrantsPerUser(t *testing.T) {
	up := gatewaytest.NewFakeOAuth(t)
	const admin = "upstream-grants-peruser-token-0123456789"
	g := gatewaytest.Start(t, `
listen: {{listen}}
state_dir: {{state_dir}}
store: memory
auth:
  mode: none
  admin_token: `+admin+`
servers:
  crm:
    type: http
    url: `+up.Srv.URL+`/mcp
    auth: {type: oauth, per: user}
`)
	auth := map[string]string{"Authorization": "Bearer " + admin}
	call := func(agent string) string {
		t.Helper()
		h := map[string]string{"Mcp-Protocol-Version": "2025-11-25", "X-Agent-ID": agent}
		h["Mcp-Session-Id"] = g.InitAs(t, agent, "{}")
		var tool string
		for i := 0; i < 100 && tool == ""; i++ {
			lr := g.Do(t, gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, Header: h})
			var res struct {
				Tools []struct{ Name string } `json:"tools"`
			}
			if m := lr.Message(t); m.Error == nil && json.Unmarshal(m.Result, &res) == nil {
				if tool = gatewaytest.ToolNamed(res.Tools, "whoami"); tool != "" {
					break
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
		if tool == "" {
			t.Fatalf("%s: crm's tools never listed", agent)
		}
		m := g.Do(t, gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + tool + `","arguments":{}}}`, Header: h}).Message(t)
		var res gatewaytest.ToolResult
		if m.Error != nil || json.Unmarshal(m.Result, &res) != nil {
			return "error " + string(m.Error)
		}
		if res.IsError {
			return "isError " + res.Text()
		}
		return res.Text()
	}

	if a := g.API(t, "GET", "/api/upstream-grants", "", auth); a.Status != 200 || !strings.Contains(a.String(), `"per": "user"`) || !strings.Contains(a.String(), `"grants": []`) {
		t.Fatalf("before: %s", a)
	}
	if a := g.API(t, "POST", "/api/upstream-grants/crm/connect", "{}", auth); a.Status != 400 || !strings.Contains(a.String(), "subject") {
		t.Errorf("connect a per-user server without a subject: %s", a)
	}
	a := g.API(t, "POST", "/api/upstream-grants/crm/connect", `{"subject": "agent:a1"}`, auth)
	u, _ := a.Obj["url"].(string)
	if a.Status != 200 || !strings.HasPrefix(u, g.Base+"/oauth/consent/") {
		t.Fatalf("connect for agent:a1: %s", a)
	}
	gatewaytest.OpenConsent(t, u, a.Obj["code"].(string)) // the person a1 opens what the admin handed over, with its code
	a = g.API(t, "GET", "/api/upstream-grants?subject=agent:a1", "", auth)
	var l struct {
		Servers []struct{ Granted bool }
		Grants  []struct{ Server, Subject string }
	}
	if a.Status != 200 || json.Unmarshal(a.Raw, &l) != nil || len(l.Grants) != 1 || l.Grants[0].Subject != "agent:a1" || len(l.Servers) != 1 || !l.Servers[0].Granted {
		t.Fatalf("a1's grant: %s", a)
	}
	if got := call("a1"); got != "grant=g1" {
		t.Errorf("a1's call after the admin-started consent: %q, want grant=g1", got)
	}
	if got := call("a2"); !strings.HasPrefix(got, "isError ") || !strings.Contains(got, g.Base+"/oauth/consent/") || gatewaytest.ConsentCode(got) == "" {
		t.Errorf("a2's call (no grant): %q, want its own sign-in URL", got)
	}
	for _, p := range []string{"/api/upstream-grants/crm", "/api/upstream-grants/crm?subject=agent:a2", "/api/upstream-grants/crm?subject=a1"} {
		if a := g.API(t, "DELETE", p, "", auth); a.Status != 404 {
			t.Errorf("DELETE %s: %s, want 404", p, a)
		}
	}
	if a := g.API(t, "DELETE", "/api/upstream-grants/crm?subject=agent:a1", "", auth); a.Status != 200 {
		t.Fatalf("revoke a1's grant: %s", a)
	}
	if a := g.API(t, "GET", "/api/upstream-grants", "", auth); !strings.Contains(a.String(), `"grants": []`) {
		t.Errorf("after revoking: %s", a)
	}
	if got := call("a1"); !strings.HasPrefix(got, "isError ") || !strings.Contains(got, g.Base+"/oauth/consent/") || gatewaytest.ConsentCode(got) == "" {
		t.Errorf("a1's call after the revocation: %q, want a sign-in URL again", got)
	}
}
