package localtrust

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/statedir"
)

// TestClientAddr: forwarding headers name the client only when the peer is a trusted
// proxy, and then the last address that is not a trusted proxy; from anyone else they
// make the request unreadable as local.
func TestClientAddr(t *testing.T) {
	proxies, err := config.ParseTrustedProxies([]string{"127.0.0.1", "10.0.0.0/8"})
	if err != nil {
		t.Fatal(err)
	}
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
		a, via, ok := ClientAddr(r, proxies)
		if a.String() != c.want || via != c.via || ok != c.ok {
			t.Errorf("%s: %v via=%v ok=%v; want %s via=%v ok=%v", c.name, a, via, ok, c.want, c.via, c.ok)
		}
	}
}

// TestLocalOwner: only the gateway's own user on loopback, the socket, or a loopback
// client behind a trusted proxy is the local owner; a loopback address alone is not.
func TestLocalOwner(t *testing.T) {
	lt := Trust{UID: 1000}
	var proxies []netip.Prefix
	peerIs := func(uid int) {
		lt.PeerUID = func(_, _ *net.TCPAddr) (int, error) { return uid, nil }
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
	if who, ok := lt.Owner(req("127.0.0.1:4000", nil), proxies); !ok || who != "local:uid=1000" {
		t.Errorf("the owner's connection: %q %v", who, ok)
	}
	peerIs(65534)
	if who, ok := lt.Owner(req("127.0.0.1:4000", nil), proxies); ok {
		t.Errorf("another user's connection was taken for the owner: %q", who)
	}
	peerIs(1000)
	if who, ok := lt.Owner(req("127.0.0.1:4000", http.Header{"X-Forwarded-For": {"203.0.113.9"}}), proxies); ok {
		t.Errorf("a request forwarded by an unlisted proxy was taken for the owner: %q", who)
	}
	if _, ok := lt.Owner(req("192.0.2.7:4000", nil), proxies); ok {
		t.Error("a remote peer was taken for the owner")
	}
	lt.PeerUID = func(_, _ *net.TCPAddr) (int, error) { return -1, os.ErrPermission }
	if _, ok := lt.Owner(req("127.0.0.1:4000", nil), proxies); ok {
		t.Error("a peer whose user is unknown was taken for the owner")
	}
	proxies, _ = config.ParseTrustedProxies([]string{"127.0.0.1"})
	if who, ok := lt.Owner(req("127.0.0.1:4000", http.Header{"X-Forwarded-For": {"127.0.0.1"}}), proxies); !ok || who != "proxy:127.0.0.1" {
		t.Errorf("a loopback client behind a trusted proxy: %q %v", who, ok)
	}
	if _, ok := lt.Owner(req("127.0.0.1:4000", http.Header{"X-Forwarded-For": {"203.0.113.9"}}), proxies); ok {
		t.Error("a remote client behind a trusted proxy was taken for the owner")
	}
}

// TestTokenAndMessages: the state dir's local token is the credential a caller without
// the owner's uid can show; the refusal names where it is, and the source of a loopback
// request names its user so one user's failures do not slow another's.
func TestTokenAndMessages(t *testing.T) {
	dir := t.TempDir()
	lt, err := New(dir, 1000)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := statedir.ReadToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !lt.HasToken() || lt.IsToken("") || lt.IsToken("wrong") || !lt.IsToken(tok) {
		t.Fatal("the state dir's token is not the one credential")
	}
	lt.PeerUID = func(_, _ *net.TCPAddr) (int, error) { return 65534, nil }
	r := httptest.NewRequest("POST", "/mcp", nil)
	r.RemoteAddr = "127.0.0.1:4000"
	la, _ := net.ResolveTCPAddr("tcp", "127.0.0.1:8080")
	r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, la))
	msg := lt.NotOwnerMessage(r, nil)
	if !strings.Contains(msg, "uid 65534") || !strings.Contains(msg, dir) {
		t.Errorf("refusal %q names neither the peer's uid nor the token's place", msg)
	}
	if src := lt.Source(r, nil); src != "127.0.0.1/uid=65534" {
		t.Errorf("source %q", src)
	}
	none, err := New("", 1000)
	if err != nil || none.HasToken() || none.IsToken("") {
		t.Errorf("no state dir: a token exists (%v)", err)
	}
	if msg := none.NotOwnerMessage(r, nil); strings.Contains(msg, "local token") {
		t.Errorf("without a state dir the refusal offers a token: %q", msg)
	}
}
