// Package localtrust decides who on this host the gateway believes without a credential:
// its own user as the kernel names it, a trusted proxy's loopback client, or the local token.
package localtrust

import (
	"context"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/peercred"
	"github.com/mcpgw/mcpgw/internal/statedir"
)

// Local trust: who on this host the gateway believes without a credential
// (docs/security.md#local-trust, docs/decisions.md). The host's other users are trusted
// for nothing. Over TCP, "local" is the user that runs the gateway, named by the kernel
// (Linux: the peer socket's owner), or a caller that shows the per-install local token;
// the Unix socket checks its peer's uid itself. A loopback address alone proves nothing:
// every user on the host has one, and so does a reverse proxy on the host.

// Trust holds what local trust is decided from. Settings live here, on the gateway that
// owns them: a test gives each gateway its own.
type Trust struct {
	// UID is the gateway's own user (-1 where the OS has no uids: Windows).
	UID int
	// token is the state directory's local token ("" when there is none: no state dir).
	token     string
	tokenPath string
	// PeerUID names the user owning the far end of a loopback TCP connection
	// (peercred.TCPPeerUID; a test may replace it to play another user).
	PeerUID func(remote, local *net.TCPAddr) (int, error)
}

// New reads (or makes) the local token of stateDir; uid is the gateway's own user.
func New(stateDir string, uid int) (Trust, error) {
	lt := Trust{UID: uid, PeerUID: peercred.TCPPeerUID}
	if stateDir == "" {
		return lt, nil
	}
	tok, err := statedir.EnsureToken(stateDir)
	if err != nil {
		return lt, err
	}
	lt.token, lt.tokenPath = tok, statedir.TokenPath(stateDir)
	return lt, nil
}

// HasToken reports whether there is a local token (there is none without a state dir).
func (lt *Trust) HasToken() bool { return lt.token != "" }

// IsToken reports whether tok is the local token (in constant time).
func (lt *Trust) IsToken(tok string) bool {
	return lt.token != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(lt.token)) == 1
}

type connPeerKey struct{}

// connPeer is one TCP connection's peer user, looked up once, on first need.
type connPeer struct {
	remote, local *net.TCPAddr
	once          sync.Once
	uid           int
	err           error
}

// ConnContext is an http.Server ConnContext for the gateway's listener: the peer's user
// of a connection is then looked up once per connection, not once per request. A handler
// mounted on a server without it still decides correctly, at one lookup per request.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	ra, ok1 := c.RemoteAddr().(*net.TCPAddr)
	la, ok2 := c.LocalAddr().(*net.TCPAddr)
	if !ok1 || !ok2 {
		return ctx
	}
	cp := &connPeer{remote: ra, local: la}
	if k, ok := c.(knownPeer); ok {
		if uid, known := k.PeerUID(); known {
			cp.once.Do(func() { cp.uid = uid })
		}
	}
	return context.WithValue(ctx, connPeerKey{}, cp)
}

// knownPeer is a connection whose listener already asked the kernel for its peer's user
// (the gateway's share listener does, to count connections by local user).
type knownPeer interface{ PeerUID() (int, bool) }

// PeerUser names the user at the far end of r's connection, where the OS tells: only for
// a loopback peer (-1, false otherwise).
func (lt *Trust) PeerUser(r *http.Request) (int, bool) {
	if cp, ok := r.Context().Value(connPeerKey{}).(*connPeer); ok {
		if !cp.remote.IP.IsLoopback() {
			return -1, false
		}
		cp.once.Do(func() { cp.uid, cp.err = lt.PeerUID(cp.remote, cp.local) })
		return cp.uid, cp.err == nil
	}
	ra, err := net.ResolveTCPAddr("tcp", r.RemoteAddr)
	la, ok := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr)
	if err != nil || !ok || !ra.IP.IsLoopback() {
		return -1, false
	}
	uid, err := lt.PeerUID(ra, la)
	return uid, err == nil
}

// forwardedFor reports whether r carries a header in which a proxy names another client.
func forwardedFor(r *http.Request) bool {
	h := r.Header
	return len(h.Values("Forwarded")) > 0 || len(h.Values("X-Forwarded-For")) > 0 || len(h.Values("X-Real-Ip")) > 0
}

// ClientAddr is the address of the client r came from: the TCP peer, or, when the peer is
// a trusted proxy (one of proxies), the last address its X-Forwarded-For (or Forwarded)
// header names that is not itself a trusted proxy. viaProxy reports a request that carries
// forwarding headers; ok is false when they come from an untrusted peer or cannot be read.
func ClientAddr(r *http.Request, proxies []netip.Prefix) (addr netip.Addr, viaProxy, ok bool) {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}, false, false
	}
	peer := ap.Addr().Unmap()
	if !forwardedFor(r) {
		return peer, false, true
	}
	if !inPrefixes(peer, proxies) {
		return peer, true, false
	}
	hops := forwardedHops(r.Header)
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(hops[i])
		if err != nil {
			return peer, true, false
		}
		if a = a.Unmap(); !inPrefixes(a, proxies) || i == 0 {
			return a, true, true
		}
	}
	return peer, true, false
}

// forwardedHops lists the client addresses of X-Forwarded-For, else of Forwarded's for=
// parameters, else X-Real-IP, oldest first.
func forwardedHops(h http.Header) []string {
	var hops []string
	for _, v := range h.Values("X-Forwarded-For") {
		for _, p := range strings.Split(v, ",") {
			hops = append(hops, strings.TrimSpace(p))
		}
	}
	if len(hops) > 0 {
		return hops
	}
	for _, v := range h.Values("Forwarded") {
		for _, elem := range strings.Split(v, ",") {
			for _, pair := range strings.Split(elem, ";") {
				k, val, _ := strings.Cut(strings.TrimSpace(pair), "=")
				if !strings.EqualFold(k, "for") {
					continue
				}
				val = strings.Trim(val, `"`)
				if ap, err := netip.ParseAddrPort(val); err == nil {
					val = ap.Addr().String()
				}
				hops = append(hops, strings.Trim(val, "[]"))
			}
		}
	}
	if len(hops) > 0 {
		return hops
	}
	return h.Values("X-Real-Ip")
}

func inPrefixes(a netip.Addr, ps []netip.Prefix) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Owner reports whether r comes from the user that runs the gateway, and names it for the
// audit log (proxies are the trusted proxies): the Unix socket (its peer uid was checked), a loopback TCP peer whose
// socket the kernel says is the gateway's user's, or a loopback client that a trusted proxy
// forwards for (the operator vouched for the proxy).
func (lt *Trust) Owner(r *http.Request, proxies []netip.Prefix) (string, bool) {
	if auth.Trusted(r.Context()) {
		return "socket", true
	}
	client, viaProxy, ok := ClientAddr(r, proxies)
	if !ok || !client.IsLoopback() {
		return "", false
	}
	if viaProxy {
		return "proxy:" + client.String(), true
	}
	uid, known := lt.PeerUser(r)
	if !known || uid != lt.UID || lt.UID < 0 {
		return "", false
	}
	return "local:uid=" + strconv.Itoa(uid), true
}

// Source names where a request comes from, for slowing failed credentials: the client
// address, and on loopback the peer's user, so one local user's failures do not slow
// another's.
func (lt *Trust) Source(r *http.Request, proxies []netip.Prefix) string {
	client, _, ok := ClientAddr(r, proxies)
	if !ok {
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		return "peer:" + host
	}
	if client.IsLoopback() {
		if uid, known := lt.PeerUser(r); known {
			return client.String() + "/uid=" + strconv.Itoa(uid)
		}
	}
	return client.String()
}

// NotOwnerMessage says why r is not the local owner, and what would let it in.
func (lt *Trust) NotOwnerMessage(r *http.Request, proxies []netip.Prefix) string {
	who := "this connection's user is not known"
	if client, via, ok := ClientAddr(r, proxies); via && !ok {
		who = "the request came through a proxy that http.trusted_proxies does not list"
	} else if via {
		who = "the client the proxy forwards for (" + client.String() + ") is not on this host"
	} else if uid, known := lt.PeerUser(r); known {
		who = fmt.Sprintf("this connection belongs to uid %d", uid)
	}
	hint := "configure a credential (auth.mode api_key or jwt)"
	if lt.tokenPath != "" {
		hint = "send the gateway's local token (Authorization: Bearer, from " + lt.tokenPath + ") or configure a credential (auth.mode api_key or jwt)"
	}
	return fmt.Sprintf("Unauthorized: auth.mode none serves only the user who runs the gateway (uid %d), and %s; %s", lt.UID, who, hint)
}
