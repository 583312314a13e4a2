package peercred

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// TestTCPPeerUID: the kernel names the owner of a loopback connection's far end: this
// process's own uid, and, when the test may play another user (root with setpriv), that
// user's uid for a connection a process of theirs opened.
func TestTCPPeerUID(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Logf("%s: %v (no such loopback here)", addr, err)
			continue
		}
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		s, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		uid, err := TCPPeerUID(s.RemoteAddr().(*net.TCPAddr), s.LocalAddr().(*net.TCPAddr))
		if err != nil || uid != os.Getuid() {
			t.Errorf("%s: peer uid %d, %v; want %d", addr, uid, err, os.Getuid())
		}
		c.Close()
		s.Close()
		ln.Close()
	}

	setpriv, err := exec.LookPath("setpriv")
	if os.Getuid() != 0 || err != nil {
		t.Logf("the other-user half needs root and setpriv (uid %d, setpriv: %v); the e2e suite plays nobody too", os.Getuid(), err)
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "bash", "-c",
		"exec 3<>/dev/tcp/127.0.0.1/"+port+"; read -t 10 <&3")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	_ = ln.(*net.TCPListener).SetDeadline(time.Now().Add(10 * time.Second))
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	uid, err := TCPPeerUID(s.RemoteAddr().(*net.TCPAddr), s.LocalAddr().(*net.TCPAddr))
	if err != nil || uid != 65534 {
		t.Errorf("a connection of nobody's: peer uid %d, %v; want 65534", uid, err)
	}
	_, _ = s.Write([]byte("bye\n"))
	_, _ = bufio.NewReader(s).ReadString('\n')
}
