package bridge

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeDaemon is a fake the test can stop (as a daemon that exits: its socket goes, its
// connections close) and start again on the same address.
type fakeDaemon interface {
	start()
	stop()
	core() *fakeCore
}

// bridgeModes are the three ways the bridge reaches a gateway.
var bridgeModes = []string{"line", "socket-http", "url"}

// newDaemon makes a fake for mode, not started, and the options that reach it.
func newDaemon(t *testing.T, mode string) (fakeDaemon, Options) {
	t.Helper()
	switch mode {
	case "line":
		sock := shortSocket(t)
		return newFakeLine(t, sock), Options{Socket: sock}
	case "socket-http":
		sock := shortSocket(t)
		return newFakeHTTP(t, "unix", sock), Options{Socket: sock, SocketHTTP: true}
	case "url":
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		f := newFakeHTTP(t, "tcp", addr)
		return f, Options{URL: f.url()}
	}
	t.Fatalf("unknown mode %q", mode)
	return nil, Options{}
}

// started is newDaemon with the fake running.
func started(t *testing.T, mode string) (fakeDaemon, Options) {
	t.Helper()
	d, o := newDaemon(t, mode)
	d.start()
	return d, o
}

func forModes(t *testing.T, f func(t *testing.T, mode string)) {
	for _, mode := range bridgeModes {
		t.Run(mode, func(t *testing.T) { f(t, mode) })
	}
}

// TestFraming: how stdin is cut into messages, and that every message leaves as exactly
// one line, whatever CR or LF it carried.
func TestFraming(t *testing.T) {
	forModes(t, func(t *testing.T, mode string) {
		d, o := started(t, mode)
		o.MaxMessage = 4096
		c := startClient(t, o)
		c.initialize(d.core())

		// A message split across reads is relayed once it is whole.
		line := req(2, "ping")
		c.send(line[:17])
		c.send(line[17:30])
		c.send(line[30:])
		c.ok("2")

		// Several messages in one read are each relayed.
		c.send(req(3, "ping") + req(4, "tools/list") + req(5, "ping"))
		for _, id := range []string{"3", "4", "5"} {
			c.ok(id)
		}

		// Blank lines (with spaces or a CR) are skipped: the next output is the answer.
		c.send("\n   \n\r\n\t\n" + req(6, "ping"))
		if m := c.next(); string(m.ID) != "6" || m.Result == nil {
			t.Fatalf("after blank lines: want the answer to 6, got %+v", m)
		}

		// A raw CR between tokens, and escaped CR LF inside a string. The echo's answer
		// comes back with a raw CR (line mode) or as event-stream data over two lines
		// (HTTP): either way one line on stdout (c.read checks every line).
		c.send("{\"jsonrpc\":\"2.0\",\r\"id\":7,\"method\":\"echo\",\"params\":{\"s\":\"a\\r\\nb\"}}\n")
		var echoed struct{ S string }
		if err := json.Unmarshal(c.ok("7"), &echoed); err != nil || echoed.S != "a\r\nb" {
			t.Fatalf("echo: %q, %v; want the string a CR LF b back", echoed.S, err)
		}
		if mode == "line" {
			for _, l := range d.core().lines() {
				if strings.ContainsAny(l, "\r\n") {
					t.Errorf("the daemon got a line with a raw CR or LF: %q", l)
				}
			}
		}

		// Not JSON: a parse error, and the bridge goes on.
		c.send("{nope\n")
		if m := c.next(); m.Error == nil || m.Error.Code != -32700 || string(m.ID) != "null" && m.ID != nil {
			t.Fatalf("bad JSON: want a -32700 error with a null id, got %+v", m)
		}

		// Over the size limit: a JSON-RPC error with a null id, and the bridge goes on.
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":8,"method":"echo","params":{"pad":%q}}`+"\n", strings.Repeat("x", 5000)))
		m := c.next()
		if m.Error == nil || m.Error.Code != -32600 || !strings.Contains(m.Error.Message, "over 4096 bytes") {
			t.Fatalf("oversize line: want a -32600 error naming the limit, got %+v", m)
		}
		c.send(req(9, "ping"))
		c.ok("9")
	})
}

// TestReconnectInFlight: the daemon goes away with a call in flight and comes back within
// reconnect-for. The call in flight gets an error at once (it may or may not have run;
// docs/clients/bridge.md); a request sent while the daemon is away waits and is answered;
// the same session resumes (no initialize replayed).
func TestReconnectInFlight(t *testing.T) {
	forModes(t, func(t *testing.T, mode string) {
		d, o := started(t, mode)
		o.ReconnectFor = waitFor
		c := startClient(t, o)
		c.initialize(d.core())
		c.send(req(10, "test/hold"))
		d.core().waitHolding(t)
		d.stop()
		if msg := c.fails("10"); !strings.Contains(msg, "closed the connection before answering") {
			t.Errorf("in-flight call: %q, want it to say the gateway closed the connection before answering", msg)
		}
		c.send(req(11, "tools/list"))
		d.start()
		c.ok("11")
		if n := len(d.core().initializes()); n != 1 {
			t.Errorf("%d initializes reached the daemon, want 1 (the session resumes)", n)
		}
		switch f := d.(type) {
		case *fakeLine:
			hs := f.helloSessions()
			if len(hs) < 2 || hs[len(hs)-1] != "sess-1" {
				t.Errorf("hellos %q: want the last to resume sess-1", hs)
			}
		case *fakeHTTP:
			ss := f.postSessions()
			if ss[len(ss)-1] != "sess-1" {
				t.Errorf("POST sessions %q: want the last on sess-1", ss)
			}
		}
	})
}

// TestRestartLosesSession: the daemon comes back without the session. The bridge replays
// the client's initialize and notifications/initialized, swallows the replay's answer,
// and goes on with the new session; the client sees nothing of it.
func TestRestartLosesSession(t *testing.T) {
	forModes(t, func(t *testing.T, mode string) {
		d, o := started(t, mode)
		o.ReconnectFor = waitFor
		c := startClient(t, o)
		c.initialize(d.core())
		c.send(req(20, "tools/list"))
		c.ok("20")
		d.stop()
		d.core().forget()
		d.start()
		c.send(req(21, "tools/list"))
		c.ok("21")
		c.send(req(22, "ping"))
		if m := c.next(); string(m.ID) != "22" {
			t.Fatalf("after the restart: want only the answer to 22, got %+v (the replayed initialize leaked?)", m)
		}
		inits := d.core().initializes()
		if len(inits) != 2 {
			t.Fatalf("%d initializes reached the daemon, want 2 (the client's, the replay)", len(inits))
		}
		var p struct {
			ClientInfo struct{ Name, Version string }
		}
		if err := json.Unmarshal(inits[1].Params, &p); err != nil || p.ClientInfo.Name != "unit-test" || p.ClientInfo.Version != "7" {
			t.Errorf("replayed initialize params %s: want the client's", inits[1].Params)
		}
		if !eventually(func() bool {
			n := 0
			for _, l := range d.core().lines() {
				if strings.Contains(l, "notifications/initialized") {
					n++
				}
			}
			return n == 2
		}) {
			t.Errorf("notifications/initialized was not replayed once: %q", d.core().lines())
		}
		// The new session is the one used from now on.
		switch f := d.(type) {
		case *fakeLine:
			d.stop()
			d.start()
			c.send(req(23, "ping"))
			c.ok("23")
			hs := f.helloSessions()
			if hs[len(hs)-1] != "sess-2" {
				t.Errorf("hellos %q: want the last to resume the replacement session sess-2", hs)
			}
		case *fakeHTTP:
			ss := f.postSessions()
			if ss[len(ss)-1] != "sess-2" {
				t.Errorf("POST sessions %q: want the last on the replacement session sess-2", ss)
			}
		}
	})
}

// TestDaemonNeverBack: the daemon stays away. Every pending request gets an error naming
// where the bridge looked; the bridge waits reconnect-for once, not once per request;
// and when the daemon is back, the next request goes through.
func TestDaemonNeverBack(t *testing.T) {
	forModes(t, func(t *testing.T, mode string) {
		d, o := started(t, mode)
		o.ReconnectFor = time.Second
		c := startClient(t, o)
		c.initialize(d.core())
		d.stop()
		start := time.Now()
		for id := 30; id < 35; id++ {
			c.send(req(id, "ping"))
		}
		where := o.Socket
		if where == "" {
			where = o.URL
		}
		for id := 30; id < 35; id++ {
			msg := c.fails(fmt.Sprint(id))
			if !strings.Contains(msg, "gateway unreachable at "+where) {
				t.Errorf("id %d: %q, want it to name %s", id, msg, where)
			}
			want := "no socket there; is `mcpgw serve` running?"
			if mode == "url" {
				want = "connection refused"
			}
			if !strings.Contains(msg, want) {
				t.Errorf("id %d: %q, want %q", id, msg, want)
			}
		}
		if el := time.Since(start); el > 3*time.Second {
			t.Errorf("5 requests took %s to fail with reconnect-for 1s: the bridge waited per request", el)
		}
		d.start()
		c.send(req(40, "tools/list"))
		c.ok("40")
	})
}

// TestLateDaemon: the daemon starts after the client's initialize; the initialize waits
// and is answered (over HTTP, a ping without a session gets 400, which still means the
// gateway is there).
func TestLateDaemon(t *testing.T) {
	forModes(t, func(t *testing.T, mode string) {
		d, o := newDaemon(t, mode)
		o.ReconnectFor = waitFor
		c := startClient(t, o)
		c.send(initLine)
		if !eventually(func() bool { return strings.Contains(c.log.String(), "gateway unreachable; retrying") }) {
			t.Fatalf("the bridge did not retry: %s", c.log.String())
		}
		d.start()
		c.ok(`"init-1"`)
		c.send(req(2, "tools/list"))
		c.ok("2")
	})
}

// TestEOFDeliversInFlight: stdin closes with a call in flight; its answer still reaches
// stdout, Run returns nil, and the log says so.
func TestEOFDeliversInFlight(t *testing.T) {
	forModes(t, func(t *testing.T, mode string) {
		d, o := started(t, mode)
		c := startClient(t, o)
		c.initialize(d.core())
		c.send(req(50, "test/hold"))
		c.send(req(51, "ping"))
		c.ok("51")
		d.core().waitHolding(t)
		c.in.Close()
		if !eventually(func() bool { return strings.Contains(c.log.String(), "waiting for the answers in flight") }) {
			t.Fatalf("the bridge is not waiting for the answer in flight: %s", c.log.String())
		}
		d.core().release()
		if _, err := c.closeStdin(waitFor); err != nil {
			t.Fatalf("Run: %v, want nil after stdin EOF", err)
		}
		var held struct{ Held bool }
		if err := json.Unmarshal(c.ok("50"), &held); err != nil || !held.Held {
			t.Fatalf("the held call's answer: %v", err)
		}
		if l := c.log.String(); !strings.Contains(l, "stdin closed; delivered 1 answer") || strings.Contains(l, "level=WARN") {
			t.Errorf("log does not say the answer in flight was delivered (or warns):\n%s", l)
		}
	})
}

// TestEOFBoundedWait: stdin closes while the daemon never answers; the bridge waits
// drain-for, gives the request an error saying so, and returns.
func TestEOFBoundedWait(t *testing.T) {
	forModes(t, func(t *testing.T, mode string) {
		d, o := started(t, mode)
		o.DrainFor = 300 * time.Millisecond
		c := startClient(t, o)
		c.initialize(d.core())
		c.send(req(60, "test/hold"))
		d.core().waitHolding(t)
		took, err := c.closeStdin(waitFor)
		if err != nil {
			t.Fatalf("Run: %v, want nil after stdin EOF", err)
		}
		if took < o.DrainFor {
			t.Errorf("Run returned %s after stdin closed, before drain-for %s", took, o.DrainFor)
		}
		if msg := c.fails("60"); !strings.Contains(msg, "stdin closed and the gateway did not answer within 300ms") {
			t.Errorf("unanswered call: %q", msg)
		}
		if l := c.log.String(); !strings.Contains(l, "stdin closed; delivered 0 answers; 1 request got no answer within 300ms") {
			t.Errorf("log does not say what happened:\n%s", l)
		}
	})
}

// TestEOFNothingInFlight: nothing in flight, nothing to wait for.
func TestEOFNothingInFlight(t *testing.T) {
	d, o := started(t, "line")
	c := startClient(t, o)
	c.initialize(d.core())
	if took, err := c.closeStdin(waitFor); err != nil || took > 2*time.Second {
		t.Fatalf("Run: %v after %s", err, took)
	}
	if l := c.log.String(); !strings.Contains(l, "stdin closed; no requests were in flight") {
		t.Errorf("log:\n%s", l)
	}
}

// TestUnreachableSays: what the client is told when the socket is missing, refused, not a
// socket, not ours, or too long, and when the daemon does not speak the line mode.
func TestUnreachableSays(t *testing.T) {
	sockErr := func(path string) string {
		c := startClient(t, Options{Socket: path, ReconnectFor: 150 * time.Millisecond})
		c.send(initLine)
		return c.fails(`"init-1"`)
	}
	missing := shortSocket(t)
	if msg := sockErr(missing); !strings.Contains(msg, "gateway unreachable at "+missing+" (kept trying for 150ms): no socket there; "+startHint) {
		t.Errorf("missing socket: %q", msg)
	}

	stale := shortSocket(t)
	ln, err := net.Listen("unix", stale)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	if msg := sockErr(stale); !strings.Contains(msg, "connection refused: the socket file is there but no daemon accepts on it") ||
		!strings.Contains(msg, startHint) {
		t.Errorf("stale socket: %q", msg)
	}

	plain := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(plain, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if msg := sockErr(plain); !strings.Contains(msg, "the file there is not a socket") {
		t.Errorf("plain file: %q", msg)
	}

	long := "/tmp/" + strings.Repeat("d", 120) + "/mcpgw.sock"
	if msg := sockErr(long); !strings.Contains(msg, fmt.Sprintf("the socket path is %d bytes, longer than the 107", len(long))) {
		t.Errorf("long path: %q", msg)
	}

	// Another user's socket (root here cannot be refused, so the error is made up).
	denied := &unreachableError{where: "/run/x.sock", socket: true,
		err: &net.OpError{Op: "dial", Net: "unix", Err: os.NewSyscallError("connect", syscall.EACCES)}}
	if msg := denied.Error(); !strings.Contains(msg, "permission denied: the socket belongs to another user") {
		t.Errorf("permission: %q", msg)
	}

	// A daemon without the line mode answers the hello in HTTP: fail at once, say what to do.
	old := shortSocket(t)
	ln, err = net.Listen("unix", old)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n"))
			c.Close()
		}
	}()
	c := startClient(t, Options{Socket: old, ReconnectFor: waitFor})
	start := time.Now()
	c.send(initLine)
	if msg := c.fails(`"init-1"`); !strings.Contains(msg, "does not speak the bridge's line mode") || !strings.Contains(msg, "--socket-http") {
		t.Errorf("HTTP-only daemon: %q", msg)
	}
	if el := time.Since(start); el > waitFor/2 {
		t.Errorf("HTTP-only daemon: the error took %s; it cannot get better by waiting", el)
	}
}
