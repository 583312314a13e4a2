package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
	"github.com/mcpgw/mcpgw/internal/wire"
)

var signInURL = func(s string) string {
	i := strings.Index(s, "http")
	if i < 0 {
		return ""
	}
	u := s[i:]
	if j := strings.IndexAny(u, " \"\n"); j >= 0 {
		u = u[:j]
	}
	return u
}

// TestOAuthPerUser: each identity of a per-user OAuth upstream calls it with its own
// grant. The server's tools are listed once any identity authorized it; an identity
// without a grant is answered with its own sign-in URL (a tool result with isError, or the
// URLElicitationRequired error for a client that declared URL-mode elicitation); after it
// signs in the same call goes through on its own grant; a grant the authorization server
// revoked asks its owner again.
func TestOAuthPerUser(t *testing.T) {
	up := gatewaytest.NewFakeOAuth(t)
	g := gatewaytest.Start(t, `
listen: {{listen}}
state_dir: {{state_dir}}
store: memory
servers:
  crm:
    type: http
    url: `+up.Srv.URL+`/mcp
    auth: {type: oauth}
`)
	as := func(agent string) map[string]string {
		h := map[string]string{"Mcp-Protocol-Version": "2025-11-25"}
		if agent != "" {
			h["X-Agent-ID"] = agent
		}
		return h
	}
	// Nobody has authorized crm: its tools wait, and the first identity connects.
	h := as("a1")
	h["Mcp-Session-Id"] = g.InitAs(t, "a1", "{}")
	if lr := g.Do(t, req2(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, h)); strings.Contains(string(lr.Body), "whoami") {
		t.Errorf("tools listed before any identity authorized crm: %s", lr.Body)
	}
	var ready string
	for i := 0; i < 100 && !strings.Contains(ready, "no identity has authorized crm yet"); i++ {
		ready = string(g.Do(t, gatewaytest.Req{Method: http.MethodGet, Path: "/readyz"}).Body)
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(ready, "no identity has authorized crm yet") {
		t.Errorf("/readyz before any identity authorized crm: %s", ready)
	}
	req, _ := http.NewRequest(http.MethodGet, g.Base+"/oauth/connect/crm", nil)
	req.Header.Set("X-Agent-ID", "a1")
	resp, err := gatewaytest.NewBrowser().Do(req) // the caller proved who it is here: its browser is bound at once
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "may now use crm") {
		t.Fatalf("a1 connects: HTTP %d %s", resp.StatusCode, b)
	}
	var last map[string]string // the headers of the last call's session
	call := func(agent, caps string) *wire.Msg {
		t.Helper()
		h := as(agent)
		last = h
		r := g.Do(t, req2(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"clientInfo":{"name":"t","version":"1"}}}`, h))
		h["Mcp-Session-Id"] = r.Header.Get("Mcp-Session-Id")
		g.Do(t, req2(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, h))
		var tool string
		for i := 0; i < 100 && tool == ""; i++ {
			lr := g.Do(t, req2(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, h))
			if s := string(lr.Body); strings.Contains(s, "whoami") {
				var res struct {
					Tools []struct{ Name string } `json:"tools"`
				}
				_ = json.Unmarshal(lr.Message(t).Result, &res)
				tool = gatewaytest.ToolNamed(res.Tools, "whoami")
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if tool == "" {
			t.Fatalf("%s: crm's tools never listed after a1 authorized it", agent)
		}
		return g.Do(t, req2(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"`+tool+`","arguments":{}}}`, h)).Message(t)
	}
	text := func(m *wire.Msg) string {
		var res gatewaytest.ToolResult
		if m.Error != nil || json.Unmarshal(m.Result, &res) != nil {
			return "error " + string(m.Error)
		}
		if res.IsError {
			return "isError " + res.Text()
		}
		return res.Text()
	}
	if got := text(call("a1", "{}")); got != "grant=g1" {
		t.Errorf("a1's call: %q, want grant=g1", got)
	}
	// a2 has no grant: its call answers with a sign-in URL of its own.
	got := text(call("a2", "{}"))
	u := signInURL(got)
	if !strings.HasPrefix(got, "isError ") || !strings.HasPrefix(u, g.Base+"/oauth/consent/") || gatewaytest.ConsentCode(got) == "" {
		t.Fatalf("a2's first call: %q, want isError with the consent page and its code", got)
	}
	gatewaytest.OpenConsent(t, u, gatewaytest.ConsentCode(got))
	if got := text(call("a2", "{}")); got != "grant=g2" {
		t.Errorf("a2's call after signing in: %q, want grant=g2", got)
	}
	if got := text(call("a1", "{}")); got != "grant=g1" {
		t.Errorf("a1's call after a2 signed in: %q, want its own grant=g1", got)
	}
	// A client that declared URL-mode elicitation gets the URLElicitationRequired error.
	m := call("a3", `{"elicitation":{"url":{}}}`)
	var data struct {
		Elicitations []struct{ Mode, ElicitationID, URL, Message string } `json:"elicitations"`
	}
	var e struct {
		Code int             `json:"code"`
		Data json.RawMessage `json:"data"`
	}
	if m.Error == nil || json.Unmarshal(m.Error, &e) != nil || e.Code != wire.CodeURLElicitationRequired ||
		json.Unmarshal(e.Data, &data) != nil || len(data.Elicitations) != 1 || data.Elicitations[0].Mode != "url" ||
		data.Elicitations[0].ElicitationID == "" || !strings.HasPrefix(data.Elicitations[0].URL, g.Base+"/oauth/consent/") || gatewaytest.ConsentCode(data.Elicitations[0].Message) == "" {
		t.Fatalf("a3 (URL elicitation) first call: %s %s, want error -32042 with one url elicitation", m.Error, m.Result)
	}
	// Once a3 signed in, its session is told the elicitation completed.
	gatewaytest.OpenConsent(t, data.Elicitations[0].URL, gatewaytest.ConsentCode(data.Elicitations[0].Message))
	if got := readStreamFor(t, g.Base, last, "notifications/elicitation/complete"); !strings.Contains(got, `"elicitationId":"`+data.Elicitations[0].ElicitationID+`"`) {
		t.Errorf("a3's stream after signing in: %q, want elicitation/complete for %s", got, data.Elicitations[0].ElicitationID)
	}
	// The authorization server revokes a2's grant: a2 is asked again; a1 goes on.
	up.Revoke("g2")
	if got := text(call("a2", "{}")); !strings.HasPrefix(got, "isError ") || signInURL(got) == "" {
		t.Errorf("a2 after its grant was revoked: %q, want a sign-in URL", got)
	}
	if got := text(call("a1", "{}")); got != "grant=g1" {
		t.Errorf("a1 after a2's grant was revoked: %q", got)
	}
	if strings.Contains(g.Log.String(), "at-") || strings.Contains(g.Log.String(), "rt-") {
		t.Errorf("a token reached the log:\n%s", g.Log.String())
	}
}

func req2(body string, h map[string]string) gatewaytest.Req {
	c := make(map[string]string, len(h))
	for k, v := range h {
		c[k] = v
	}
	return gatewaytest.Req{Body: body, Header: c}
}

// readStreamFor opens the session's GET stream and returns the first event line holding
// want ("" after 5 s).
func readStreamFor(t *testing.T, base string, h map[string]string, want string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/mcp", nil)
	for k, v := range h {
		r.Header.Set(k, v)
	}
	r.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatalf("GET stream: %v", err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.Contains(sc.Text(), want) {
			return sc.Text()
		}
	}
	return ""
}
