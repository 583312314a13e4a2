package gateway

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/gateway/internal/peercred"
)

// TestTCPPeerUID: the kernel names the owner of a loopback connection's far end: this
// process's own uid, and, when the test may play another user (root with setpriv), that
// user's uid for a connection a process of theirs opened.
func TestTCPPeerUID(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only Linux names a TCP peer's user; elsewhere the local token is the credential")
	}
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
		uid, err := peercred.TCPPeerUID(s.RemoteAddr().(*net.TCPAddr), s.LocalAddr().(*net.TCPAddr))
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
	uid, err := peercred.TCPPeerUID(s.RemoteAddr().(*net.TCPAddr), s.LocalAddr().(*net.TCPAddr))
	if err != nil || uid != 65534 {
		t.Errorf("a connection of nobody's: peer uid %d, %v; want 65534", uid, err)
	}
	_, _ = s.Write([]byte("bye\n"))
	_, _ = bufio.NewReader(s).ReadString('\n')
}

// TestClientAddr: forwarding headers name the client only when the peer is a trusted
// proxy, and then the last address that is not a trusted proxy; from anyone else they
// make the request unreadable as local.
func TestClientAddr(t *testing.T) {
	g := &Gateway{}
	linkParts(g)
	proxies, err := config.ParseTrustedProxies([]string{"127.0.0.1", "10.0.0.0/8"})
	if err != nil {
		t.Fatal(err)
	}
	g.pol.Store(&policy{cfg: &config.Config{}, proxies: proxies})
	for _, c := range []struct {
		name, peer string
		hdr        map[string]string
		want       string
		via, ok    bool
	}{
		{"plain loopback", "127.0.0.1:5000", nil, "127.0.0.1", false, true},
		{"plain v6", "[::1]:5000", nil, "::1", false, true},
		{"XFF from an untrusted peer", "127.0.0.2:5000", map[string]string{"X-Forwarded-For": "127.0.0.1"}, "127.0.0.2", true, false},
		{"X-Real-IP from an untrusted peer", "127.0.0.2:5000", map[string]string{"X-Real-Ip": "127.0.0.1"}, "127.0.0.2", true, false},
		{"Forwarded from an untrusted peer", "127.0.0.2:5000", map[string]string{"Forwarded": "for=127.0.0.1"}, "127.0.0.2", true, false},
		{"remote client via a trusted proxy", "127.0.0.1:5000", map[string]string{"X-Forwarded-For": "203.0.113.9"}, "203.0.113.9", true, true},
		{"spoofed chain via a trusted proxy", "127.0.0.1:5000", map[string]string{"X-Forwarded-For": "127.0.0.1, 203.0.113.9"}, "203.0.113.9", true, true},
		{"two trusted hops", "127.0.0.1:5000", map[string]string{"X-Forwarded-For": "203.0.113.9, 10.1.2.3"}, "203.0.113.9", true, true},
		{"local client via a trusted proxy", "127.0.0.1:5000", map[string]string{"X-Forwarded-For": "::1"}, "::1", true, true},
		{"Forwarded with a port", "127.0.0.1:5000", map[string]string{"Forwarded": `for="[2001:db8::1]:4711";proto=http`}, "2001:db8::1", true, true},
		{"garbage", "127.0.0.1:5000", map[string]string{"X-Forwarded-For": "not-an-ip"}, "127.0.0.1", true, false},
	} {
		r := httptest.NewRequest("GET", "/mcp", nil)
		r.RemoteAddr = c.peer
		for k, v := range c.hdr {
			r.Header.Set(k, v)
		}
		a, via, ok := g.gate.clientAddr(r)
		if a.String() != c.want || via != c.via || ok != c.ok {
			t.Errorf("%s: %v via=%v ok=%v; want %s via=%v ok=%v", c.name, a, via, ok, c.want, c.via, c.ok)
		}
	}
}

// TestLocalOwner: only the gateway's own user on loopback, the socket, or a loopback
// client behind a trusted proxy is the local owner; a loopback address alone is not.
func TestLocalOwner(t *testing.T) {
	g := &Gateway{}
	linkParts(g)
	g.gate.local = localTrust{uid: 1000}
	g.pol.Store(&policy{cfg: &config.Config{}})
	peerIs := func(uid int) {
		g.gate.local.peerUID = func(_, _ *net.TCPAddr) (int, error) { return uid, nil }
	}
	req := func(remote string, hdr http.Header) *http.Request {
		r := httptest.NewRequest("POST", "/mcp", nil)
		r.RemoteAddr = remote
		for k, v := range hdr {
			r.Header[k] = v
		}
		la, _ := net.ResolveTCPAddr("tcp", "127.0.0.1:8080")
		return r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, la))
	}
	peerIs(1000)
	if who, ok := g.gate.localOwner(req("127.0.0.1:4000", nil)); !ok || who != "local:uid=1000" {
		t.Errorf("the owner's connection: %q %v", who, ok)
	}
	peerIs(65534)
	if who, ok := g.gate.localOwner(req("127.0.0.1:4000", nil)); ok {
		t.Errorf("another user's connection was taken for the owner: %q", who)
	}
	peerIs(1000)
	if who, ok := g.gate.localOwner(req("127.0.0.1:4000", http.Header{"X-Forwarded-For": {"203.0.113.9"}})); ok {
		t.Errorf("a request forwarded by an unlisted proxy was taken for the owner: %q", who)
	}
	if _, ok := g.gate.localOwner(req("192.0.2.7:4000", nil)); ok {
		t.Error("a remote peer was taken for the owner")
	}
	g.gate.local.peerUID = func(_, _ *net.TCPAddr) (int, error) { return -1, os.ErrPermission }
	if _, ok := g.gate.localOwner(req("127.0.0.1:4000", nil)); ok {
		t.Error("a peer whose user is unknown was taken for the owner")
	}
	proxies, _ := config.ParseTrustedProxies([]string{"127.0.0.1"})
	g.pol.Store(&policy{cfg: &config.Config{}, proxies: proxies})
	if who, ok := g.gate.localOwner(req("127.0.0.1:4000", http.Header{"X-Forwarded-For": {"127.0.0.1"}})); !ok || who != "proxy:127.0.0.1" {
		t.Errorf("a loopback client behind a trusted proxy: %q %v", who, ok)
	}
	if _, ok := g.gate.localOwner(req("127.0.0.1:4000", http.Header{"X-Forwarded-For": {"203.0.113.9"}})); ok {
		t.Error("a remote client behind a trusted proxy was taken for the owner")
	}
}
