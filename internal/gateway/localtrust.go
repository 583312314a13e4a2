package gateway

import (
	"context"
	"net"
	"net/http"

	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/connshare"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/localtrust"
)

// Local trust (internal/gateway/internal/localtrust): who on this host the gateway believes
// without a credential (docs/security.md#local-trust, docs/decisions.md). The gatekeeper
// decides with the trusted proxies of the current config.

// ConnContext is an http.Server ConnContext for the gateway's listener: the peer's user
// of a connection is then looked up once per connection, not once per request. A handler
// mounted on a server without it still decides correctly, at one lookup per request.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	// The share listener asked the kernel for the peer's user when it accepted c; local
	// trust takes its answer rather than ask again.
	return localtrust.ConnContext(connshare.ConnContext(ctx, c), c)
}

// localOwner reports whether r comes from the user that runs the gateway, and names it for
// the audit log (localtrust.Trust.Owner).
func (gk *gatekeeper) localOwner(r *http.Request) (string, bool) {
	return gk.local.Owner(r, gk.g.policy().proxies)
}

// sourceOf names where a request comes from, for slowing failed credentials
// (localtrust.Trust.Source).
func (gk *gatekeeper) sourceOf(r *http.Request) string {
	return gk.local.Source(r, gk.g.policy().proxies)
}

// localOnly is auth mode none's rule over TCP: only the gateway's own user, or a caller
// with the local token, may use the tools. nil admits r.
func (gk *gatekeeper) localOnly(r *http.Request) *auth.Failure {
	if _, ok := gk.localOwner(r); ok {
		return nil
	}
	tok, has := auth.BearerToken(r.Header.Get("Authorization"))
	if has && gk.local.HasToken() {
		if fail := gk.slowed(r); fail != nil {
			return fail
		}
		if gk.local.IsToken(tok) {
			return nil
		}
		gk.credentialFailed(r, "mcp")
	}
	return &auth.Failure{Status: http.StatusUnauthorized, Reason: "not_local_owner",
		WWWAuthenticate: `Bearer realm="mcpgw"`, Message: gk.local.NotOwnerMessage(r, gk.g.policy().proxies)}
}
