package bridge

import (
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// peerGone sees an open connection as open (also with unread data) and one whose peer has
// closed as gone, without reading.
func TestPeerGone(t *testing.T) {
	dir, err := os.MkdirTemp("", "mcpgw-gone")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	ln, err := net.Listen("unix", filepath.Join(dir, "s.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
		close(accepted)
	}()
	c, err := net.DialTimeout("unix", ln.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var srv net.Conn
	select {
	case srv = <-accepted:
	case <-time.After(5 * time.Second):
	}
	if srv == nil {
		t.Fatal("no connection accepted within 5 s")
	}
	if peerGone(c) {
		t.Fatal("an open connection reported gone")
	}
	if _, err := srv.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if peerGone(c) {
		t.Fatal("a connection with unread data reported gone")
	}
	var b [1]byte
	if _, err := c.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	srv.Close()
	deadline := time.Now().Add(5 * time.Second)
	for !peerGone(c) {
		if time.Now().After(deadline) {
			t.Fatal("a closed peer not reported gone within 5 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if peerGone(nil) {
		t.Error("a nil connection reported gone")
	}
}
