package gateway

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// checkPeer accepts this process's own connection over a real socket (the peer check of
// this OS, end to end) and refuses what is not a Unix socket.
func TestCheckPeer(t *testing.T) {
	dir, err := os.MkdirTemp("", "mcpgw-peer")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	ln, err := ListenSocket(filepath.Join(dir, "s.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	c, err := net.DialTimeout("unix", ln.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	select {
	case sc, ok := <-accepted:
		if !ok {
			t.Fatal("accept failed")
		}
		defer sc.Close()
		if err := checkPeer(sc); err != nil {
			t.Errorf("own connection refused: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no connection accepted within 5 s")
	}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if err := checkPeer(a); err == nil {
		t.Error("a non-socket connection passed the peer check")
	}
}

// A socket path longer than the OS takes is refused up front with what to change, not
// with the kernel's bare "invalid argument".
func TestListenSocketPathTooLong(t *testing.T) {
	dir, err := os.MkdirTemp("", "mcpgw-long")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	long := filepath.Join(dir, strings.Repeat("d", 120), "mcpgw.sock")
	ln, err := ListenSocket(long)
	if err == nil {
		ln.Close()
		t.Fatalf("ListenSocket(%d-byte path) succeeded", len(long))
	}
	if !strings.Contains(err.Error(), "state_dir") || !strings.Contains(err.Error(), "bytes") {
		t.Errorf("error %q does not say the path is too long and what to change", err)
	}
	if _, serr := os.Stat(filepath.Dir(long)); serr == nil {
		t.Error("the directory was created for a path that cannot be used")
	}
}
