//go:build unix

package gateway_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// TestStartConcurrencyBounded: at start-up the gateway starts at most
// upstream.start_concurrency servers at once, and every server still comes up. Each
// server is the everything-server behind a shell that, before it becomes the server,
// marks itself as starting in <dir>, counts the marks it sees, holds its start for a
// moment and removes its mark. A start holds its slot until its catalogue is read, after
// the mark is gone, so no count may exceed the limit; with every server started at once
// the counts reach the number of servers.
func TestStartConcurrencyBounded(t *testing.T) {
	const servers, limit = 10, 3
	dir := t.TempDir()
	script := `d="$1"; touch "$d/starting.$$"; ls "$d" | grep -c '^starting\.' >> "$d/counts"; sleep 0.3; rm "$d/starting.$$"; exec "$0"`
	var b strings.Builder
	fmt.Fprintf(&b, "listen: {{listen}}\nstate_dir: {{state_dir}}\nstore: memory\nlog: {level: debug}\nupstream: {start_concurrency: %d}\nservers:\n", limit)
	for i := 0; i < servers; i++ {
		fmt.Fprintf(&b, "  s%d:\n    type: stdio\n    mode: shared\n    stdio_proxy: true\n    command: sh\n    args: [\"-c\", %q, %q, %q]\n",
			i, script, gatewaytest.EverythingBin(), dir)
	}
	g := gatewaytest.Start(t, b.String())
	deadline := time.Now().Add(30 * time.Second)
	for {
		up := 0
		for _, st := range g.Reg.Statuses() {
			if st.State == "up" {
				up++
			}
		}
		if up == servers {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d servers up after 30 s: %+v", up, servers, g.Reg.Statuses())
		}
		time.Sleep(50 * time.Millisecond)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "counts"))
	if err != nil {
		t.Fatal(err)
	}
	counts := strings.Fields(string(raw))
	if len(counts) != servers {
		t.Fatalf("%d starts recorded, want %d (one per server): %q", len(counts), servers, counts)
	}
	most := 0
	for _, c := range counts {
		n, err := strconv.Atoi(c)
		if err != nil {
			t.Fatalf("counts: %v", err)
		}
		most = max(most, n)
	}
	t.Logf("servers starting at once, as each start saw it: %v", counts)
	if most > limit {
		t.Errorf("%d servers were starting at once, more than upstream.start_concurrency %d", most, limit)
	}
}
