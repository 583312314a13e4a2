package e2e

// Load, large messages and the bridge's process lifecycle.

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBridgeLoad: 1,000 tools/call written to the bridge's stdin at once are all
// answered without error, each id exactly once, and the bridge's memory stays bounded.
func TestBridgeLoad(t *testing.T) {
	bridgeBin(t)
	up := startEverythingHTTP(t)
	_, sock := startBridgeGateway(t, shortStateDir(t), `
log: {level: info, format: text}
servers:
  everything:
    type: streamable_http
    url: `+up+`
`)
	bc := startBridge(t, "--socket", sock, "--agent", "load")
	bc.initialize(t)
	if names := bc.tools(t); !slices.Contains(names, "everything__test_simple_text") {
		t.Fatalf("tools: %v", names)
	}
	// Warm up, then measure.
	if _, err := bc.callTool("everything__test_simple_text", nil, 30*time.Second); err != nil {
		t.Fatalf("warm-up call: %v", err)
	}
	before, err := vmRSSKiB(bc.Pid)
	if err != nil {
		t.Fatal(err)
	}

	const n = 1000
	ids := make([]json.RawMessage, n)
	chans := make([]<-chan brMsg, n)
	var batch bytes.Buffer
	for i := range n {
		id, line := bc.newRequest("tools/call", toolCallParams("everything__test_simple_text", nil, ""))
		ids[i], chans[i] = id, bc.expect(id)
		batch.Write(line)
		batch.WriteByte('\n')
	}
	start := time.Now()
	bc.wmu.Lock()
	_, err = bc.stdin.Write(batch.Bytes()) // one write: every request is in the pipe at once
	bc.wmu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	peak := before
	deadline := time.After(90 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var failed []string
	for i := 0; i < n; {
		select {
		case m := <-chans[i]:
			if text, err := callText(m); err != nil || text != "This is a simple text response for testing." {
				failed = append(failed, fmt.Sprintf("id %s: %q %v", ids[i], text, err))
			}
			i++
		case <-tick.C:
			if kb, err := vmRSSKiB(bc.Pid); err == nil && kb > peak {
				peak = kb
			}
		case <-bc.eof:
			t.Fatalf("the bridge's stdout closed after %d of %d answers (exit %v)", i, n, bc.exitErr())
		case <-deadline:
			t.Fatalf("only %d of %d answers within 90 s", i, n)
		}
	}
	elapsed := time.Since(start)
	// A barrier instead of a pause: one more call round-trips through the bridge, the
	// socket and the gateway, so anything the burst still had on its way out (a late
	// duplicate) is written before its answer and shows up in the counts below. It also
	// proves the session still works after the burst.
	if _, err := bc.callTool("everything__test_simple_text", nil, 30*time.Second); err != nil {
		t.Errorf("call after the burst: %v", err)
	}
	after, err := vmRSSKiB(bc.Pid)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d concurrent calls answered in %s (%.0f/s); bridge VmRSS before %d KiB, peak (sampled) %d KiB, after %d KiB",
		n, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(), before, peak, after)
	if len(failed) > 0 {
		t.Errorf("%d of %d calls failed; first: %v", len(failed), n, failed[:min(5, len(failed))])
	}
	dups := 0
	for _, id := range ids {
		if c := bc.answerCount(id); c != 1 {
			dups++
			if dups <= 5 {
				t.Errorf("id %s answered %d times", id, c)
			}
		}
	}
	for _, p := range bc.protocolProblems() {
		t.Errorf("bridge output: %s", p)
	}
	const boundKiB = 200 << 10
	if peak > boundKiB || after > boundKiB {
		t.Errorf("bridge VmRSS peak %d KiB / after %d KiB, want < %d KiB", peak, after, boundKiB)
	}
}

// TestBridgeLargeMessage: a 16 MiB string argument round-trips intact through the bridge,
// the socket, the gateway and a stdio upstream (a go-sdk echo server: the npm
// server-everything's echo stops at 10 MiB over stdio and 4 MiB over HTTP), in both
// directions.
func TestBridgeLargeMessage(t *testing.T) {
	bridgeBin(t)
	state := shortStateDir(t)
	_, sock := startBridgeGateway(t, state, `
log: {level: info, format: text}
upstream: {call_timeout: 120s}
servers:
  big:
    type: stdio
    command: `+yamlQuote(selfExe(t))+`
    args: [`+bridgeHelperArg+`, echo-server]
`)
	bc := startBridge(t, "--socket", sock, "--agent", "big")
	bc.initialize(t)
	if names := bc.tools(t); !slices.Equal(names, []string{"big__echo"}) {
		t.Fatalf("tools: %v", names)
	}
	// 16 MiB of text with characters JSON must escape and multi-byte UTF-8 at both ends
	// and every 64 KiB, so that any re-encoding or truncation shows.
	const size = 16 << 20
	var sb strings.Builder
	sb.Grow(size + 64)
	special := "\"\\\n\t<&>é✓\u2028"
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 "
	sb.WriteString(special)
	for sb.Len() < size-len(special) {
		if sb.Len()%(64<<10) == 0 {
			sb.WriteString(special)
			continue
		}
		sb.WriteByte(alphabet[rng.IntN(len(alphabet))])
	}
	sb.WriteString(special)
	msg := sb.String()
	want := sha256.Sum256([]byte(msg))

	start := time.Now()
	m, err := bc.request("tools/call", toolCallParams("big__echo", map[string]any{"message": msg}, ""), 120*time.Second)
	if err != nil {
		t.Fatalf("16 MiB echo: %v", err)
	}
	text, err := callText(m)
	if err != nil {
		t.Fatalf("16 MiB echo: %v", err)
	}
	t.Logf("16 MiB (%d bytes) round trip in %s", len(msg), time.Since(start).Round(time.Millisecond))
	if b, err := os.ReadFile(filepath.Join(state, "audit.jsonl")); err == nil {
		t.Logf("audit: %s", bytes.TrimSpace(b))
	}
	if got := sha256.Sum256([]byte(text)); got != want {
		i := 0
		for i < len(text) && i < len(msg) && text[i] == msg[i] {
			i++
		}
		t.Fatalf("the echo came back changed: %d bytes (sent %d), first difference at byte %d", len(text), len(msg), i)
	}
	// The bridge is still fine for small messages afterwards.
	if text, err := bc.callTool("big__echo", map[string]any{"message": "small"}, 30*time.Second); err != nil || text != "small" {
		t.Errorf("small echo after the large one: %q %v", text, err)
	}
	for _, p := range bc.protocolProblems() {
		t.Errorf("bridge output: %s", p)
	}
}

// TestBridgeLifecycle: the bridge exits within 2 s when its stdin closes, and within 2 s
// when its parent dies (SIGKILL) while its stdin stays open.
func TestBridgeLifecycle(t *testing.T) {
	bridge := bridgeBin(t)
	up := startServerEverythingNode(t, "streamableHttp")
	_, sock := startBridgeGateway(t, shortStateDir(t), `
log: {level: info, format: text}
servers:
  ev:
    type: streamable_http
    url: `+up+`
`)

	t.Run("stdin closes", func(t *testing.T) {
		bc := startBridge(t, "--socket", sock, "--agent", "life")
		bc.initialize(t) // also opens the bridge's GET stream: something to leave behind
		bc.tools(t)
		start := time.Now()
		bc.stdin.Close()
		if !bc.waitExit(2 * time.Second) {
			t.Fatalf("the bridge did not exit within 2 s of its stdin closing")
		}
		t.Logf("exited %s after stdin closed: %v", time.Since(start).Round(time.Millisecond), bc.exitErr())
		if err := bc.exitErr(); err != nil {
			t.Errorf("exit on stdin EOF: %v, want status 0", err)
		}
	})

	t.Run("stdin closes at once", func(t *testing.T) {
		bc := startBridge(t, "--socket", sock, "--agent", "life")
		start := time.Now()
		bc.stdin.Close()
		if !bc.waitExit(2 * time.Second) {
			t.Fatalf("the bridge did not exit within 2 s of its stdin closing (no traffic)")
		}
		t.Logf("exited %s after stdin closed: %v", time.Since(start).Round(time.Millisecond), bc.exitErr())
	})

	// Stdin closed while a call was still running (`printf … | mcpgw-bridge`, or a client
	// that sent its last request and closed): the bridge waits for the answer, but only
	// --drain-for; then the call gets an error saying so, and the bridge exits 0.
	t.Run("stdin closes with a call in flight", func(t *testing.T) {
		bc := startBridge(t, "--socket", sock, "--agent", "life", "--drain-for", "1s")
		bc.initialize(t)
		_, ch, err := bc.send("tools/call", toolCallParams("ev__trigger-long-running-operation",
			map[string]any{"duration": 30, "steps": 30}, "life"))
		if err != nil {
			t.Fatal(err)
		}
		if !bc.waitNotification(15*time.Second, func(m brMsg) bool { return m.Method == "notifications/progress" }) {
			t.Fatalf("the long call never reported progress")
		}
		start := time.Now()
		bc.stdin.Close()
		if !bc.waitExit(4 * time.Second) {
			t.Fatalf("the bridge did not exit within 4 s of its stdin closing with --drain-for 1s and a 30 s call in flight")
		}
		took := time.Since(start)
		t.Logf("exited %s after stdin closed: %v", took.Round(time.Millisecond), bc.exitErr())
		if took < time.Second {
			t.Errorf("exited %s after stdin closed: before --drain-for 1s", took)
		}
		if err := bc.exitErr(); err != nil {
			t.Errorf("exit on stdin EOF: %v, want status 0", err)
		}
		m, err := bc.wait(ch, 2*time.Second)
		if err != nil || m.Error == nil || !strings.Contains(m.Error.Message, "stdin closed and the gateway did not answer within 1s") {
			t.Errorf("the unanswered call: %v %v, want an error saying the bridge stopped waiting", m, err)
		}
		if l := bc.log(); !strings.Contains(l, "1 request got no answer within 1s") {
			t.Errorf("the log does not say what happened:\n%s", l)
		}
	})

	t.Run("parent dies", func(t *testing.T) {
		pidFile := filepath.Join(t.TempDir(), "bridge.pid")
		// The test binary as the parent: it passes its stdio (the test's pipes) down to the
		// bridge, so the bridge's stdin stays open after the parent is killed.
		bc := startBridgeCmd(t, "bridge-parent", selfExe(t),
			[]string{bridgeHelperArg, "bridge-parent", pidFile, bridge, "--socket", sock, "--agent", "life"})
		bc.initialize(t)
		bc.tools(t)
		b, err := os.ReadFile(pidFile)
		if err != nil {
			t.Fatalf("bridge pid: %v", err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 {
			t.Fatalf("bridge pid %q: %v", b, err)
		}
		killPidsAtCleanup(t, func() []int { return []int{pid} })
		if p, ok := readProc(pid); !ok || p.PPid != bc.Pid {
			t.Fatalf("bridge pid %d: parent %d, want the helper %d", pid, p.PPid, bc.Pid)
		}
		start := time.Now()
		if err := syscall.Kill(bc.Pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		if !bc.waitExit(5 * time.Second) {
			t.Fatalf("the parent did not die")
		}
		desc, ok := waitFor(2*time.Second, func() (bool, string) {
			p, alive := readProc(pid)
			return !pidAlive(pid), fmt.Sprintf("alive %v, state %s, ppid %d", alive, p.State, p.PPid)
		})
		if !ok {
			t.Fatalf("the bridge (pid %d) is still running 2 s after its parent was killed: %s", pid, desc)
		}
		t.Logf("bridge exited %s after its parent was killed", time.Since(start).Round(time.Millisecond))
	})
}

// TestBridgeOversizedMessage: a line over the bridge's 64 MiB bound is refused, and the
// bridge goes on relaying the client's next messages.
func TestBridgeOversizedMessage(t *testing.T) {
	bridgeBin(t)
	up := startEverythingHTTP(t)
	_, sock := startBridgeGateway(t, shortStateDir(t), `
log: {level: info, format: text}
servers:
  everything:
    type: streamable_http
    url: `+up+`
`)
	bc := startBridge(t, "--socket", sock, "--agent", "big")
	bc.initialize(t)
	const size = 65 << 20
	var line bytes.Buffer
	line.Grow(size + 200)
	line.WriteString(`{"jsonrpc":"2.0","id":"too-big","method":"tools/call","params":{"name":"everything__test_simple_text","arguments":{"pad":"`)
	line.Write(bytes.Repeat([]byte("x"), size))
	line.WriteString(`"}}}`)
	ch := bc.expect(json.RawMessage(`"too-big"`))
	writeErr := make(chan error, 1)
	go func() { writeErr <- bc.write(line.Bytes()) }()
	select {
	case err := <-writeErr:
		if err != nil {
			t.Fatalf("writing the oversized line: %v (the bridge stopped reading: exit %v)", err, bc.exitErr())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("writing a 65 MiB line to the bridge took over 30 s")
	}
	// The next request is answered: the bridge is still there.
	m, err := bc.request("ping", nil, 15*time.Second)
	if err != nil {
		t.Fatalf("ping after an oversized message: %v (bridge exit: %v; log: %s)", err, bc.exitErr(), lastLine(bc.log()))
	}
	if m.Error != nil {
		t.Errorf("ping after an oversized message: %s", m)
	}
	select {
	case m := <-ch:
		if m.Error == nil {
			t.Errorf("the oversized request was answered with a result: %s", m)
		}
	default:
		t.Logf("the oversized request got no answer with its id (the bridge cannot read it)")
	}
}
