package e2e

// Warm pools and per_call instances with the real daemon and the npm server-everything
// over stdio. Each instance is started through a shell that writes its pid to a file and
// then becomes node (exec), so the test knows every process the gateway started.

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// poolOf reads a server's pool counts from /readyz.
func poolOf(g *Gateway, server string) (ready, inUse int, err error) {
	resp, err := getReadyzRaw(g)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, 0, err
	}
	var r struct {
		Upstreams []struct {
			Name string
			Pool *struct {
				Ready int `json:"ready"`
				InUse int `json:"in_use"`
			}
		}
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return 0, 0, err
	}
	for _, u := range r.Upstreams {
		if u.Name == server && u.Pool != nil {
			return u.Pool.Ready, u.Pool.InUse, nil
		}
	}
	return 0, 0, nil
}

func pidsIn(t *testing.T, file string) []int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		out = append(out, n)
	}
	return out
}

// TestInstancesPoolAndPerCall: a pooled per_session server answers a new session's first
// call from a ready instance (no process started for the session but the refill), and
// the session's instance stops with the session; a per_call server starts one process per
// call and leaves none running.
func TestInstancesPoolAndPerCall(t *testing.T) {
	needGatewayBin(t)
	script := serverEverythingScript(t)
	dir := t.TempDir()
	wrapped := func(file string) string {
		return `["-c", "echo $$ >> ` + filepath.Join(dir, file) + `; exec \"$0\" \"$1\"", "{{node}}", ` + yamlQuote(script) + `]`
	}
	g := startGatewayChecked(t, `
log: {level: debug, format: text}
servers:
  pooled:
    type: stdio
    command: sh
    args: `+wrapped("pooled")+`
    pool: {warm: 2, max: 4}
  percall:
    type: stdio
    command: sh
    args: `+wrapped("percall")+`
    mode: per_call
`)
	pooledPids, percallPids := filepath.Join(dir, "pooled"), filepath.Join(dir, "percall")
	killPidsAtCleanup(t, func() []int { return append(pidsIn(t, pooledPids), pidsIn(t, percallPids)...) })
	if desc, ok := waitFor(60*time.Second, func() (bool, string) {
		ready, _, err := poolOf(g, "pooled")
		return err == nil && ready == 2, "ready " + strconv.Itoa(ready)
	}); !ok {
		t.Fatalf("pool never had 2 ready instances: %s", desc)
	}
	if _, ok := waitFor(30*time.Second, func() (bool, string) {
		st, err := upstreamState(g, "percall")
		return err == nil && st.State == "up", ""
	}); !ok {
		t.Fatal("per_call server's catalogue never came up")
	}
	startedBefore := len(pidsIn(t, pooledPids))

	c := connectGoClient(t, &mcp.StreamableClientTransport{Endpoint: g.URL})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "pooled__echo", Arguments: map[string]any{"message": "warm"}})
	took := time.Since(start)
	if err != nil || res.IsError || !strings.Contains(resultText(res), "Echo: warm") {
		t.Fatalf("pooled call: %v %q", err, resultText(res))
	}
	t.Logf("first call on a pooled instance took %v", took)
	if _, ok := waitFor(30*time.Second, func() (bool, string) {
		ready, inUse, err := poolOf(g, "pooled")
		return err == nil && ready == 2 && inUse == 1, ""
	}); !ok {
		t.Fatal("pool did not refill to 2 ready with 1 in use")
	}
	if n := len(pidsIn(t, pooledPids)) - startedBefore; n != 1 {
		t.Fatalf("%d processes started for one session, want 1 (the refill)", n)
	}

	var seen []int
	for i := 1; i <= 3; i++ {
		res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "percall__echo", Arguments: map[string]any{"message": "call " + strconv.Itoa(i)}})
		if err != nil || res.IsError || !strings.Contains(resultText(res), "Echo: call "+strconv.Itoa(i)) {
			t.Fatalf("per_call call %d: %v %q", i, err, resultText(res))
		}
		all := pidsIn(t, percallPids)
		p := all[len(all)-1]
		if slices.Contains(seen, p) {
			t.Fatalf("call %d ran on instance %d again", i, p)
		}
		seen = append(seen, p)
		if _, ok := waitFor(10*time.Second, func() (bool, string) { return !pidAlive(p), "" }); !ok {
			t.Fatalf("per_call instance %d still runs after call %d", p, i)
		}
	}
	for _, p := range pidsIn(t, percallPids) {
		if pidAlive(p) {
			t.Errorf("per_call process %d is still running", p)
		}
	}

	// The session's pooled instance stops with the session; the ready ones stay.
	_ = c.Close()
	if _, ok := waitFor(30*time.Second, func() (bool, string) {
		live := 0
		for _, p := range pidsIn(t, pooledPids) {
			if pidAlive(p) {
				live++
			}
		}
		_, inUse, err := poolOf(g, "pooled")
		return err == nil && inUse == 0 && live == 2, strconv.Itoa(live) + " live"
	}); !ok {
		t.Error("after the session ended, the pooled server does not run exactly its 2 ready instances")
	}
}
