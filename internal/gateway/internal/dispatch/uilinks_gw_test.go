package dispatch_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// uiUpstream is an Apps server over streamable HTTP (JSON answers) that records the URIs
// the gateway sends it for resources/read, subscribe and unsubscribe.
type uiUpstream struct {
	mu   sync.Mutex
	seen []string // method uri
}

func (u *uiUpstream) start(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				URI string `json:"uri"`
			} `json:"params"`
		}
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&m) != nil || len(m.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		result := `{}`
		switch m.Method {
		case "initialize":
			result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"resources":{"subscribe":true}},"serverInfo":{"name":"apps","version":"1"}}`
		case "tools/list":
			result = `{"tools":[{"name":"get-time","inputSchema":{"type":"object"},"_meta":{"ui":{"resourceUri":"ui://get-time/app.html"},"ui/resourceUri":"ui://get-time/app.html"}}]}`
		case "resources/list":
			result = `{"resources":[{"uri":"ui://get-time/app.html","name":"app","mimeType":"text/html;profile=mcp-app"}]}`
		case "resources/read":
			result = `{"contents":[{"uri":` + strings.TrimSpace(jsonString(m.Params.URI)) + `,"mimeType":"text/html;profile=mcp-app","text":"<html>app</html>"}]}`
		}
		if m.Method == "resources/read" || strings.HasSuffix(m.Method, "subscribe") {
			u.mu.Lock()
			u.seen = append(u.seen, m.Method+" "+m.Params.URI)
			u.mu.Unlock()
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + result + `}`))
	}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv.URL + "/mcp"
}

func jsonString(s string) string { b, _ := json.Marshal(s); return string(b) }

// The gateway's name for a ui:// resource routes read, subscribe and unsubscribe to the
// server under the server's own URI, and the read's content comes back under the
// gateway's name; an agent whose view lacks the server cannot reach it by that name.
func TestUIResourceRoutesUnderOwnURI(t *testing.T) {
	var up uiUpstream
	g := gatewaytest.Start(t, strings.Replace(gatewaytest.JSONUpstreamConfig, "URL", up.start(t), 1)+`
agents:
  main: {servers: [j]}
  other: {servers: []}
`)
	sid := g.InitializeAs(t, "main")
	const ex = "ui://j__get-time/app.html"
	r := callAsAgent(t, g, sid, "main", 1, "resources/read", `{"uri":"`+ex+`"}`)
	if !strings.Contains(string(r.Body), `"uri":"`+ex+`"`) || !strings.Contains(string(r.Body), `<html>app</html>`) {
		t.Fatalf("resources/read %s: %s", ex, r.Body)
	}
	for i, m := range []string{"resources/subscribe", "resources/unsubscribe"} {
		if r := callAsAgent(t, g, sid, "main", 2+i, m, `{"uri":"`+ex+`"}`); r.Status != http.StatusOK || strings.Contains(string(r.Body), `"error"`) {
			t.Fatalf("%s: %s", m, r.Body)
		}
	}
	up.mu.Lock()
	seen := strings.Join(up.seen, "; ")
	up.mu.Unlock()
	if want := "resources/read ui://get-time/app.html; resources/subscribe ui://get-time/app.html; resources/unsubscribe ui://get-time/app.html"; seen != want {
		t.Errorf("the upstream got %q, want %q", seen, want)
	}
	other := g.InitializeAs(t, "other")
	if r := callAsAgent(t, g, other, "other", 5, "resources/read", `{"uri":"`+ex+`"}`); !strings.Contains(string(r.Body), "-32002") {
		t.Errorf("an agent without the server read its UI: %s", r.Body)
	}
}

// callAsAgent sends a request on agent's session sid.
func callAsAgent(t *testing.T, g *gatewaytest.GW, sid, agent string, id int, method, params string) gatewaytest.Resp {
	t.Helper()
	h := gatewaytest.SessionHeaders(sid, "2025-11-25")
	h["X-Agent-ID"] = agent
	return g.Do(t, gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"` + method + `","params":` + params + `}`, Header: h})
}
