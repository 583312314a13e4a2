package e2e

// A session outlives the gateway process (docs/sessions.md): after kill -9 and a new start on
// the same state dir (bbolt) and port, the client's next requests on the same
// Mcp-Session-Id work without a new initialize; per-session upstreams start again lazily.

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// restartReport is a JSON line of js/session-restart-client.mjs.
type restartReport struct {
	Event           string          `json:"event"`
	Error           json.RawMessage `json:"error"`
	SessionID       string          `json:"sessionId"`
	ProtocolVersion string          `json:"protocolVersion"`
	Tools           []string        `json:"tools"`
	ListOK          bool            `json:"listOK"`
	ListError       json.RawMessage `json:"listError"`
	Calls           []struct {
		Name   string          `json:"name"`
		OK     bool            `json:"ok"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	} `json:"calls"`
	Wire struct {
		Methods            map[string]int `json:"methods"`
		RequestSessionIDs  []string       `json:"requestSessionIds"`
		ResponseSessionIDs []string       `json:"responseSessionIds"`
		Statuses           []string       `json:"statuses"`
	} `json:"wire"`
	TransportErrors []string `json:"transportErrors"`
	GetReopened     bool     `json:"getReopened"`
}

func readRestartReport(t *testing.T, n *sessNode, want string, timeout time.Duration) *restartReport {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for i := 0; i < 1000; i++ {
		line, ok := n.next(time.Until(deadline))
		if !ok {
			t.Fatalf("restart client: no %q line within %s", want, timeout)
		}
		var r restartReport
		if json.Unmarshal([]byte(line), &r) != nil {
			t.Logf("restart client: %s", line)
			continue
		}
		if r.Event == "error" {
			t.Fatalf("restart client failed: %s (line %s)", r.Error, line)
		}
		if r.Event == want {
			return &r
		}
	}
	t.Fatalf("restart client: no %q line", want)
	return nil
}

// checkCalls asserts that every call of a phase worked and answered the fixture's text.
func (r *restartReport) checkCalls(t *testing.T, phase string, want []string) {
	t.Helper()
	if !r.ListOK {
		t.Errorf("%s: tools/list failed: %s", phase, r.ListError)
	}
	for _, name := range want {
		if !slices.Contains(r.Tools, name) {
			t.Errorf("%s: tools/list lacks %s (%d tools)", phase, name, len(r.Tools))
		}
	}
	if len(r.Calls) != len(want) {
		t.Fatalf("%s: %d calls for %d tools", phase, len(r.Calls), len(want))
	}
	for _, c := range r.Calls {
		text, isErr := sessResultText(c.Result)
		if !c.OK || isErr || !strings.Contains(text, sessSimpleText) {
			t.Errorf("%s: call %s: ok=%v isError=%v text %q error %s", phase, c.Name, c.OK, isErr, text, c.Error)
		}
	}
}

func TestRestartKeepsSession(t *testing.T) {
	needGatewayBin(t)
	httpURL := startEverythingHTTP(t)
	g := startGateway(t, `
log: {level: debug, format: text}
store: bolt
servers:
  ev: {type: stdio, command: {{everything_server}}, mode: per_session}
  evh: {type: streamable_http, url: `+httpURL+`}
`)
	calls := []string{"ev__test_simple_text", "evh__test_simple_text"}
	args := []string{"--url", g.URL, "--timeout", "120000"}
	for _, c := range calls {
		args = append(args, "--call", c)
	}
	client := sessStartNode(t, "js/session-restart-client.mjs", args...)

	p1 := readRestartReport(t, client, "phase1", 60*time.Second)
	p1.checkCalls(t, "before the restart", calls)
	if p1.SessionID == "" {
		t.Fatalf("no session id before the restart: %+v", p1)
	}
	if n := p1.Wire.Methods["initialize"]; n != 1 {
		t.Fatalf("before the restart the client sent %d initialize requests, want 1", n)
	}
	m, err := getMetrics(g)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := metricValue(m, "mcpgw_upstream_instances_started_total", map[string]string{"server": "ev"}); v != 1 {
		t.Fatalf("first gateway: %v per-session instances of ev started, want 1", v)
	}
	// The per-session instance and the guardians: reaped at cleanup if they outlive the kill.
	kids := descendants(g.Pid)
	killPidsAtCleanup(t, func() []int {
		var pids []int
		for _, p := range kids {
			pids = append(pids, p.Pid)
		}
		return pids
	})

	// Crash: no chance to save anything more, nor to close the bolt file.
	g.Kill9()
	if !g.Exited() {
		t.Fatalf("mcpgw pid %d survived kill -9", g.Pid)
	}
	if desc, ok := waitFor(10*time.Second, func() (bool, string) {
		var alive []procInfo
		for _, p := range kids {
			if pidAlive(p.Pid) {
				if q, ok := readProc(p.Pid); ok {
					alive = append(alive, q)
				}
			}
		}
		return len(alive) == 0, describeProcs(alive)
	}); !ok {
		// Not the subject of this test; noted for the report.
		t.Logf("upstream processes of the killed gateway still alive after 10 s:%s", desc)
	}

	g2 := sessRestartGateway(t, g, "mcpgw-restarted")
	m, err = getMetrics(g2)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := metricValue(m, "mcpgw_upstream_instances_started_total", map[string]string{"server": "ev"}); v != 0 {
		t.Errorf("restarted gateway started %v instances of ev before any session used it (want lazy start)", v)
	}

	if err := client.send("continue"); err != nil {
		t.Fatalf("restart client: %v", err)
	}
	p2 := readRestartReport(t, client, "done", 90*time.Second)
	t.Logf("session %s (protocol %s); after the restart: %d tools, wire %v, statuses %v, transport errors %q",
		p2.SessionID, p1.ProtocolVersion, len(p2.Tools), p2.Wire.Methods, p2.Wire.Statuses, p2.TransportErrors)
	p2.checkCalls(t, "after the restart", calls)
	if p2.SessionID != p1.SessionID {
		t.Errorf("session id changed across the restart: %q → %q", p1.SessionID, p2.SessionID)
	}
	if n := p2.Wire.Methods["initialize"]; n != 1 {
		t.Errorf("the client sent %d initialize requests in all, want 1 (no re-initialize after the restart)", n)
	}
	if ids := p2.Wire.RequestSessionIDs; len(ids) != 1 || ids[0] != p1.SessionID {
		t.Errorf("the client sent session ids %q, want only %q", ids, p1.SessionID)
	}
	if ids := p2.Wire.ResponseSessionIDs; len(ids) != 1 || ids[0] != p1.SessionID {
		t.Errorf("the gateways answered with session ids %q, want only %q", ids, p1.SessionID)
	}
	for _, st := range p2.Wire.Statuses {
		if strings.HasSuffix(st, " 404") || strings.HasSuffix(st, " 400") {
			t.Errorf("a request got %s: the session was not recognised after the restart (all: %v)", st, p2.Wire.Statuses)
			break
		}
	}
	if !p2.GetReopened {
		// The SDK gives up after two attempts a second apart; not the gateway's doing
		// unless the GET was refused (which the status check above would show).
		t.Logf("note: the client's GET stream did not come back within 5 s (statuses %v)", p2.Wire.Statuses)
	}
	slices.Sort(p1.Tools)
	slices.Sort(p2.Tools)
	if !slices.Equal(p1.Tools, p2.Tools) {
		t.Errorf("tools differ across the restart:\n before %v\n after  %v", p1.Tools, p2.Tools)
	}

	m, err = getMetrics(g2)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := metricValue(m, "mcpgw_upstream_instances_started_total", map[string]string{"server": "ev"}); v != 1 {
		t.Errorf("restarted gateway: %v per-session instances of ev started, want 1 (started again lazily)", v)
	}
	if !strings.Contains(g2.Log(), "session resumed from store") {
		t.Errorf("the restarted gateway's log does not say it resumed the session from the store")
	}
	if strings.Count(g2.Log(), p1.SessionID) == 0 {
		t.Logf("note: the restarted gateway's log never names session %s", p1.SessionID)
	}

	// The restarted gateway still refuses an id it never issued (the store is consulted,
	// not trusted blindly).
	a, err := sessPost(g2.URL, map[string]string{"Mcp-Session-Id": "not-a-session", "MCP-Protocol-Version": sessProtocol},
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if err != nil || a.Status != http.StatusNotFound {
		t.Errorf("unknown session id after the restart: %v %s (want 404)", err, a)
	}
}
