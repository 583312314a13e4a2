package gateway_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/upstream"
)

// TestTwoGatewaysInOneProcess: two gateways in one process, with different settings,
// keep them apart. A polls busily for its upstreams' answers (upstream.busy_poll 5ms), B
// does not; they run stdio upstreams under different guardians, restart a broken
// upstream with different back-off, report different versions, and reach the same HTTP
// upstream through pools of their own. Each is checked through what can be observed: the
// busy-poll counts of each (registry and /metrics), which guardian started which
// upstream, how often each restarted the broken one, the User-Agent the upstream saw
// from each, and the connections each one's requests came on.
func TestTwoGatewaysInOneProcess(t *testing.T) {
	dir := t.TempDir()
	web := newRecordingUpstream(t)
	type side struct {
		name, version, busyPoll string
		timing                  registry.Timing
		g                       *gatewaytest.GW
		guardianLog             string
	}
	sides := []*side{
		{name: "a", version: "a-1.0", busyPoll: "5ms", timing: registry.Timing{BackoffMin: 20 * time.Millisecond, BackoffMax: 40 * time.Millisecond}},
		{name: "b", version: "b-2.0", busyPoll: "0s", timing: registry.Timing{BackoffMin: time.Minute, BackoffMax: time.Minute}},
	}
	for _, s := range sides {
		s.guardianLog = filepath.Join(dir, "guardian-"+s.name+".log")
		guardian := filepath.Join(dir, "guardian-"+s.name)
		// A guardian that notes the command line it was given and runs it: args are
		// ChildArg, the command, its arguments.
		script := "#!/bin/sh\nshift\necho \"$*\" >> '" + s.guardianLog + "'\nexec \"$@\"\n"
		if err := os.WriteFile(guardian, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		d := upstream.NewDialer()
		d.GuardianPath, d.Version = guardian, s.version
		yaml := `
listen: {{listen}}
state_dir: {{state_dir}}
store: memory
upstream: {busy_poll: ` + s.busyPoll + `}
servers:
  ev:
    type: stdio
    command: sh
    args: ["-c", "exec \"$0\"", "` + gatewaytest.EverythingBin() + `", "ev-` + s.name + `"]
  web:
    type: http
    url: ` + web.url + `
  broken:
    type: stdio
    command: sh
    args: ["-c", "exit 3", "broken-` + s.name + `"]
`
		s.g = gatewaytest.StartWith(t, yaml, registry.Options{Dialer: d, Timing: s.timing})
	}
	a, b := sides[0], sides[1]

	// Settings: each registry has its own dialer, clients, busy polling and timing.
	ra, rb := a.g.Reg, b.g.Reg
	if ra.Dialer() == rb.Dialer() || ra.Dialer().HTTPClient() == rb.Dialer().HTTPClient() || ra.Dialer().Busy == rb.Dialer().Busy {
		t.Fatal("the two gateways share a dialer, an HTTP client or a busy poller")
	}
	if ra.Dialer().GuardianPath == rb.Dialer().GuardianPath || ra.Timing() == rb.Timing() {
		t.Fatalf("guardian %q / %q, timing %+v / %+v: the settings given were not kept apart", ra.Dialer().GuardianPath, rb.Dialer().GuardianPath, ra.Timing(), rb.Timing())
	}
	if ra.Dialer().Busy.On() != (runtime.GOOS == "linux" && runtime.NumCPU() >= 2) || rb.Dialer().Busy.On() {
		t.Fatalf("busy polling on in A: %v, in B: %v; want on (on Linux with two CPUs) and off", ra.Dialer().Busy.On(), rb.Dialer().Busy.On())
	}

	// Sequential calls to the stdio upstream and the HTTP one through each gateway.
	for _, s := range sides {
		sid := s.g.Initialize(t, "2025-11-25", "")
		for i := range 20 {
			for _, tool := range []string{"ev__test_simple_text", "web__echo"} {
				r := s.g.Call(t, sid, i+1, "tools/call", `{"name":"`+tool+`","arguments":{}}`)
				if m := r.Message(t); r.Status != http.StatusOK || m.Error != nil || isErrorResult(m.Result) {
					t.Fatalf("gateway %s: tools/call %s: HTTP %d %s", s.name, tool, r.Status, r.Body)
				}
			}
		}
	}

	// Busy polling: A's calls polled (and A's metrics say how they ended); B never did,
	// neither by its own setting nor through A's.
	polls := func(g *gatewaytest.GW) (total float64) {
		for _, o := range []string{"caught", "gave_way", "timed_out"} {
			v := g.MetricValue(t, `mcpgw_busy_poll_total{outcome="`+o+`",path="upstream"}`)
			if v < 0 {
				t.Fatalf("mcpgw_busy_poll_total{path=upstream,outcome=%s} missing from /metrics", o)
			}
			total += v
		}
		return total
	}
	total := func(s upstream.BusyStats) float64 { return float64(s.Caught + s.GaveWay + s.TimedOut) }
	st := ra.Dialer().Busy.Stats()
	if got, st1 := polls(a.g), ra.Dialer().Busy.Stats(); got < total(st) || got > total(st1) {
		t.Errorf("A's /metrics counts %v busy polls, its registry %+v before and %+v after", got, st, st1)
	}
	if ra.Dialer().Busy.On() {
		if st.Caught+st.TimedOut == 0 {
			t.Errorf("40 sequential calls through A, busy polling on: no poll caught an answer or timed out (%+v)", st)
		}
	} else {
		t.Logf("busy polling needs Linux and two CPUs (have %s, %d CPUs): A's polling not checked", runtime.GOOS, runtime.NumCPU())
	}
	if got, st := polls(b.g), rb.Dialer().Busy.Stats(); got != 0 || st != (upstream.BusyStats{}) {
		t.Errorf("B, busy polling off, counts busy polls: /metrics %v, registry %+v", got, st)
	}

	// Guardians: each gateway's stdio upstreams ran under its own guardian, and only
	// they did.
	for _, s := range sides {
		other := "a"
		if s.name == "a" {
			other = "b"
		}
		lines := readLines(t, s.guardianLog)
		if !containsLine(lines, "ev-"+s.name) || !containsLine(lines, "broken-"+s.name) {
			t.Errorf("gateway %s's guardian did not start its upstreams: %q", s.name, lines)
		}
		if containsLine(lines, "ev-"+other) || containsLine(lines, "broken-"+other) {
			t.Errorf("gateway %s's guardian started gateway %s's upstreams: %q", s.name, other, lines)
		}
	}

	// Back-off: A retries the broken upstream every 10-40 ms, B waits a minute.
	deadline := time.Now().Add(5 * time.Second)
	for ra.Server("broken").Status().Restarts < 5 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := ra.Server("broken").Status().Restarts; n < 5 {
		t.Errorf("A (back-off 20-40 ms) restarted the broken upstream %d times in 5 s, want at least 5", n)
	}
	if n := rb.Server("broken").Status().Restarts; n > 0 {
		t.Errorf("B (back-off a minute) restarted the broken upstream %d times: A's back-off reached it", n)
	}

	// Version and pools: the HTTP upstream saw each gateway's own User-Agent, and no
	// connection carried requests of both (a shared pool would hand B A's idle one).
	byUA := web.connsByUA()
	ca, cb := byUA["mcpgw/a-1.0"], byUA["mcpgw/b-2.0"]
	if len(ca) == 0 || len(cb) == 0 {
		t.Fatalf("the upstream saw POSTs by User-Agent %v; want mcpgw/a-1.0 and mcpgw/b-2.0", keysOf(byUA))
	}
	for c := range ca {
		if cb[c] {
			t.Errorf("connection %s carried POSTs of both gateways: their pools are shared", c)
		}
	}
	if len(byUA) != 2 {
		t.Errorf("User-Agents seen: %v; want exactly the two gateways' versions", keysOf(byUA))
	}
}

// recordingUpstream is a minimal stateless streamable HTTP MCP server with one tool,
// echo, that records the User-Agent and connection (remote address) of every POST.
type recordingUpstream struct {
	url  string
	mu   sync.Mutex
	seen map[string]map[string]bool // User-Agent → remote addresses
}

func newRecordingUpstream(t *testing.T) *recordingUpstream {
	t.Helper()
	u := &recordingUpstream{seen: map[string]map[string]bool{}}
	srv := httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(srv.Close)
	u.url = srv.URL + "/mcp"
	return u
}

func (u *recordingUpstream) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "only POST", http.StatusMethodNotAllowed)
		return
	}
	u.mu.Lock()
	ua := r.Header.Get("User-Agent")
	if u.seen[ua] == nil {
		u.seen[ua] = map[string]bool{}
	}
	u.seen[ua][r.RemoteAddr] = true
	u.mu.Unlock()
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if len(m.ID) == 0 { // a notification
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var result string
	switch m.Method {
	case "initialize":
		result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"recording","version":"1"}}`
	case "tools/list":
		result = `{"tools":[{"name":"echo","description":"says ok","inputSchema":{"type":"object"}}]}`
	case "tools/call":
		result = `{"content":[{"type":"text","text":"ok"}]}`
	case "ping":
		result = `{}`
	default:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, m.ID)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, result)
}

// connsByUA is, for each User-Agent, the connections its POSTs came on.
func (u *recordingUpstream) connsByUA() map[string]map[string]bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := map[string]map[string]bool{}
	for ua, conns := range u.seen {
		out[ua] = map[string]bool{}
		for c := range conns {
			out[ua][c] = true
		}
	}
	return out
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v (the guardian never ran)", path, err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// containsLine reports whether a line ends with the argument suffix.
func containsLine(lines []string, suffix string) bool {
	for _, l := range lines {
		if strings.HasSuffix(l, " "+suffix) {
			return true
		}
	}
	return false
}

func keysOf[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
