package sockconn

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// unixPair is both ends of a real Unix socket connection, closed when the test ends.
func unixPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	dir, err := os.MkdirTemp("", "mcpgw-sock")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	ln, err := net.Listen("unix", filepath.Join(dir, "s.sock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	client, err = net.DialTimeout("unix", ln.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	select {
	case sc, ok := <-accepted:
		if !ok {
			t.Fatal("accept failed")
		}
		t.Cleanup(func() { sc.Close() })
		return client, sc
	case <-time.After(5 * time.Second):
		t.Fatal("no connection accepted within 5 s")
	}
	return nil, nil
}

// TestCheckPeer: this process's own connection over a real socket passes the peer check of
// this OS, end to end; what is not a Unix socket does not.
func TestCheckPeer(t *testing.T) {
	_, sc := unixPair(t)
	if err := CheckPeer(sc); err != nil {
		t.Errorf("own connection refused: %v", err)
	}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if err := CheckPeer(a); err == nil {
		t.Error("a non-socket connection passed the peer check")
	}
}

// TestSniff: the first byte is read and kept (the Peeked connection reads it again), the
// peer's verdict comes with it, and the Listener hands the connection to Accept.
func TestSniff(t *testing.T) {
	cc, sc := unixPair(t)
	go func() { _, _ = cc.Write([]byte("GET / HTTP/1.1\r\n")) }()
	p, first, err := Sniff(sc)
	if err != nil || first != 'G' || p.PeerErr != nil {
		t.Fatalf("Sniff: %q, %v, peer %v", first, err, p.PeerErr)
	}
	l := NewListener(sc.LocalAddr())
	go func() { l.Offer(p) }()
	got, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 3)
	if _, err := io.ReadFull(got, b); err != nil || string(b) != "GET" {
		t.Errorf("read after sniffing: %q, %v", b, err)
	}
	l.Close()
	if _, err := l.Accept(); err == nil || l.Offer(p) {
		t.Error("a closed listener accepted or took a connection")
	}
}
