package e2e

// A session's first list is what the session can call (docs/sessions.md, "The first
// list"): a per_session server's catalogue may depend on the capabilities the client
// declared (the npm server-everything registers get-roots-list, trigger-sampling-request,
// trigger-elicitation-request and trigger-url-elicitation only for clients that declare
// roots, sampling or elicitation), so the first list is the session's own instance's, and
// after kill -9 and a new start it is the same list, not an empty one.

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// capGated are the npm server-everything tools its instance registers only for a client
// that declares roots, sampling or elicitation (with url mode).
var capGated = []string{"ev__get-roots-list", "ev__trigger-sampling-request", "ev__trigger-elicitation-request",
	"ev__trigger-url-elicitation"}

// firstListConfig is a gateway over the npm server-everything as a per_session stdio server.
func firstListConfig(t *testing.T, extra string) string {
	return `
log: {level: debug, format: text}
http: {page_size: 500}
` + extra + `
servers:
  ev:
    type: stdio
    command: ` + yamlQuote(node(t)) + `
    args: [` + yamlQuote(serverEverythingScript(t)) + `, stdio]
    mode: per_session
`
}

// firstListOpen initializes a raw session whose client declares caps (a JSON object).
func firstListOpen(t *testing.T, url, caps string) *sessRaw {
	t.Helper()
	a, err := sessPost(url, nil, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":%s,"clientInfo":{"name":"mcpgw-e2e-firstlist","version":"1.0.0"}}}`, sessProtocol, caps))
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	sid := a.Header.Get("Mcp-Session-Id")
	if !a.ok() || sid == "" {
		t.Fatalf("initialize: %s", a)
	}
	s := &sessRaw{URL: url, ID: sid, next: 1}
	n, err := sessPost(url, s.headers(), `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if err != nil || n.Status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %v %s", err, n)
	}
	return s
}

// toolNames lists the session's tools (one page) and returns their names, sorted.
func (s *sessRaw) toolNames(t *testing.T) []string {
	t.Helper()
	_, l := s.list(t)
	names := make([]string, 0, len(l.Tools))
	for _, d := range l.Tools {
		names = append(names, sessToolName(d))
	}
	slices.Sort(names)
	return names
}

// TestFirstListIsTheSessionsOwn: a client that declares no roots, sampling or elicitation
// is not listed the tools its own instance does not have, on its very first list; a client
// that declares them all is. Either client's first list stays its list once its instance
// has served a call.
func TestFirstListIsTheSessionsOwn(t *testing.T) {
	needGatewayBin(t)
	g := startGatewayChecked(t, firstListConfig(t, ""))
	for _, c := range []struct {
		name, caps string
		gated      bool // the gated tools are the session's
	}{
		{"no capabilities", `{}`, false},
		{"roots, sampling, elicitation", `{"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{},"url":{}}}`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := firstListOpen(t, g.URL, c.caps)
			start := time.Now()
			first := s.toolNames(t)
			t.Logf("first list: %d tools in %s", len(first), time.Since(start).Round(time.Millisecond))
			if !slices.Contains(first, "ev__echo") {
				t.Fatalf("first list lacks ev__echo: %v", first)
			}
			for _, name := range capGated {
				if slices.Contains(first, name) != c.gated {
					t.Errorf("first list: %s listed=%v, want %v (list %v)", name, !c.gated, c.gated, first)
				}
			}
			// A gated tool listed to a client that declared nothing must at least be found
			// by its first call (its arguments aside). (The other client's gated tools
			// would ask it for roots, a sample or input, which this client cannot give.)
			for _, name := range capGated {
				if c.gated || !slices.Contains(first, name) {
					continue
				}
				a := s.call(t, "tools/call", map[string]any{"name": name, "arguments": map[string]any{"bogus": 1}})
				if a.Error != nil && strings.Contains(strings.ToLower(a.Error.Message), "not found") {
					t.Errorf("listed %s: its first call answers %d %q", name, a.Error.Code, a.Error.Message)
				}
			}
			start = time.Now()
			text, isErr, _ := s.toolCall(t, "ev__echo", map[string]any{"message": "first"})
			t.Logf("first call: %s", time.Since(start).Round(time.Millisecond))
			if isErr || !strings.Contains(text, "first") {
				t.Fatalf("echo: isError=%v %q", isErr, text)
			}
			if after := s.toolNames(t); !slices.Equal(first, after) {
				t.Errorf("the list changed once the session's instance served a call:\n first %v\n after %v", first, after)
			}
		})
	}
}

// TestRestartResumedFirstList: a session of a per_session stdio server, resumed after
// kill -9 and a new start on the same bbolt state, answers its first tools/list with the
// list it had before the restart (its instance not started yet), not an empty one; a
// session whose first request after the restart is a call finds the tool it was listed.
func TestRestartResumedFirstList(t *testing.T) {
	needGatewayBin(t)
	g := startGateway(t, firstListConfig(t, "store: bolt"))
	s := firstListOpen(t, g.URL, `{}`)
	if _, isErr, _ := s.toolCall(t, "ev__echo", map[string]any{"message": "before"}); isErr {
		t.Fatal("echo before the restart answered isError")
	}
	before := s.toolNames(t)
	if len(before) == 0 {
		t.Fatal("no tools before the restart")
	}
	// Another session's first request after the restart is a call by a name it was listed.
	caller := firstListOpen(t, g.URL, `{}`)
	if !slices.Equal(caller.toolNames(t), before) {
		t.Fatal("two sessions of one client kind were listed different tools")
	}
	kids := descendants(g.Pid)
	killPidsAtCleanup(t, func() []int {
		var pids []int
		for _, p := range kids {
			pids = append(pids, p.Pid)
		}
		return pids
	})
	g.Kill9()
	if !g.Exited() {
		t.Fatalf("mcpgw pid %d survived kill -9", g.Pid)
	}
	// The client asks as soon as the port answers, as a client retrying after a dropped
	// connection does: not once /readyz says the servers are up.
	p := startProcess(t, "mcpgw-restarted", needGatewayBin(t), []string{"serve", "--config", g.Config}, nil)
	if err := waitHTTP(p, g.Base+"/healthz", http.StatusOK, readyTimeout); err != nil {
		t.Fatalf("the restarted gateway did not become healthy on %s: %v", g.Addr, err)
	}

	// Both sessions' first requests go at once: one lists, the other calls.
	called := make(chan sessAnswer, 1)
	go func() {
		a, err := caller.try(caller.URL, "tools/call", map[string]any{"name": "ev__get-sum", "arguments": map[string]any{"a": 2, "b": 3}})
		if err != nil {
			a.Body = []byte(err.Error())
		}
		called <- a
	}()
	start := time.Now()
	after := s.toolNames(t)
	t.Logf("resumed session's first list: %d tools in %s", len(after), time.Since(start).Round(time.Millisecond))
	if !slices.Equal(before, after) {
		t.Errorf("resumed session's first list differs from its list before the restart:\n before %v\n after  %v", before, after)
	}
	if text, isErr, _ := s.toolCall(t, "ev__echo", map[string]any{"message": "after"}); isErr || !strings.Contains(text, "after") {
		t.Errorf("echo after the restart: isError=%v %q", isErr, text)
	}
	a := <-called // bounded by sessHTTP's timeout
	if text, isErr := sessResultText(a.Result); !a.ok() || isErr || !strings.Contains(text, "5") {
		t.Errorf("the other session's first request after the restart, a call of get-sum: %s", a)
	}
}
