package gateway

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

	"github.com/mcpgw/mcpgw/auth"
	"github.com/mcpgw/mcpgw/gateway/internal/peercred"
	"github.com/mcpgw/mcpgw/internal/statedir"
)

// Local trust: who on this host the gateway believes without a credential
// (docs/security.md#local-trust, docs/decisions.md). The host's other users are trusted
// for nothing. Over TCP, "local" is the user that runs the gateway, named by the kernel
// (Linux: the peer socket's owner), or a caller that shows the per-install local token;
// the Unix socket checks its peer's uid itself. A loopback address alone proves nothing:
// every user on the host has one, and so does a reverse proxy on the host.

// localTrust holds what local trust is decided from. Settings live here, on the gateway
// that owns them: a test gives each gateway its own.
type localTrust struct {
	// uid is the gateway's own user (-1 where the OS has no uids: Windows).
	uid int
	// token is the state directory's local token ("" when there is none: no state dir).
	token     string
	tokenPath string
	// peerUID names the user owning the far end of a loopback TCP connection (peercred.TCPPeerUID;
	// a test may replace it to play another user).
	peerUID func(remote, local *net.TCPAddr) (int, error)
}

// newLocalTrust reads (or makes) the local token of stateDir.
func newLocalTrust(stateDir string, uid int) (localTrust, error) {
	lt := localTrust{uid: uid, peerUID: peercred.TCPPeerUID}
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

// isToken reports whether tok is the local token (in constant time).
func (lt *localTrust) isToken(tok string) bool {
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
	return context.WithValue(ctx, connPeerKey{}, &connPeer{remote: ra, local: la})
}

// peerUser names the user at the far end of r's connection, where the OS tells: only for
// a loopback peer (-1, false otherwise).
func (gk *gatekeeper) peerUser(r *http.Request) (int, bool) {
	if cp, ok := r.Context().Value(connPeerKey{}).(*connPeer); ok {
		if !cp.remote.IP.IsLoopback() {
			return -1, false
		}
		cp.once.Do(func() { cp.uid, cp.err = gk.local.peerUID(cp.remote, cp.local) })
		return cp.uid, cp.err == nil
	}
	ra, err := net.ResolveTCPAddr("tcp", r.RemoteAddr)
	la, ok := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr)
	if err != nil || !ok || !ra.IP.IsLoopback() {
		return -1, false
	}
	uid, err := gk.local.peerUID(ra, la)
	return uid, err == nil
}

// forwardedFor reports whether r carries a header in which a proxy names another client.
func forwardedFor(r *http.Request) bool {
	h := r.Header
	return len(h.Values("Forwarded")) > 0 || len(h.Values("X-Forwarded-For")) > 0 || len(h.Values("X-Real-Ip")) > 0
}

// clientAddr is the address of the client r came from: the TCP peer, or, when the peer is
// a trusted proxy, the last address its X-Forwarded-For (or Forwarded) header names that is
// not itself a trusted proxy. viaProxy reports a request that carries forwarding headers;
// ok is false when they come from an untrusted peer or cannot be read.
func (gk *gatekeeper) clientAddr(r *http.Request) (addr netip.Addr, viaProxy, ok bool) {
	g := gk.g
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}, false, false
	}
	peer := ap.Addr().Unmap()
	if !forwardedFor(r) {
		return peer, false, true
	}
	proxies := g.policy().proxies
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

// localOwner reports whether r comes from the user that runs the gateway, and names it for
// the audit log: the Unix socket (its peer uid was checked), a loopback TCP peer whose
// socket the kernel says is the gateway's user's, or a loopback client that a trusted proxy
// forwards for (the operator vouched for the proxy).
func (gk *gatekeeper) localOwner(r *http.Request) (string, bool) {
	if auth.Trusted(r.Context()) {
		return "socket", true
	}
	client, viaProxy, ok := gk.clientAddr(r)
	if !ok || !client.IsLoopback() {
		return "", false
	}
	if viaProxy {
		return "proxy:" + client.String(), true
	}
	uid, known := gk.peerUser(r)
	if !known || uid != gk.local.uid || gk.local.uid < 0 {
		return "", false
	}
	return "local:uid=" + strconv.Itoa(uid), true
}

// sourceOf names where a request comes from, for slowing failed credentials: the client
// address, and on loopback the peer's user, so one local user's failures do not slow
// another's.
func (gk *gatekeeper) sourceOf(r *http.Request) string {
	client, _, ok := gk.clientAddr(r)
	if !ok {
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		return "peer:" + host
	}
	if client.IsLoopback() {
		if uid, known := gk.peerUser(r); known {
			return client.String() + "/uid=" + strconv.Itoa(uid)
		}
	}
	return client.String()
}

// localOnly is auth mode none's rule over TCP: only the gateway's own user, or a caller
// with the local token, may use the tools. nil admits r.
func (gk *gatekeeper) localOnly(r *http.Request) *auth.Failure {
	if _, ok := gk.localOwner(r); ok {
		return nil
	}
	tok, has := auth.BearerToken(r.Header.Get("Authorization"))
	if has && gk.local.token != "" {
		if fail := gk.slowed(r); fail != nil {
			return fail
		}
		if gk.local.isToken(tok) {
			return nil
		}
		gk.credentialFailed(r, "mcp")
	}
	return &auth.Failure{Status: http.StatusUnauthorized, Reason: "not_local_owner",
		WWWAuthenticate: `Bearer realm="mcpgw"`, Message: gk.notOwnerMessage(r)}
}

func (gk *gatekeeper) notOwnerMessage(r *http.Request) string {
	who := "this connection's user is not known"
	if client, via, ok := gk.clientAddr(r); via && !ok {
		who = "the request came through a proxy that http.trusted_proxies does not list"
	} else if via {
		who = "the client the proxy forwards for (" + client.String() + ") is not on this host"
	} else if uid, known := gk.peerUser(r); known {
		who = fmt.Sprintf("this connection belongs to uid %d", uid)
	}
	hint := "configure a credential (auth.mode api_key or jwt)"
	if gk.local.tokenPath != "" {
		hint = "send the gateway's local token (Authorization: Bearer, from " + gk.local.tokenPath + ") or configure a credential (auth.mode api_key or jwt)"
	}
	return fmt.Sprintf("Unauthorized: auth.mode none serves only the user who runs the gateway (uid %d), and %s; %s", gk.local.uid, who, hint)
}
