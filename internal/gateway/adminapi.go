package gateway

import (
	"context"
	"crypto/subtle"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/connshare"
)

// adminCredential checks a bearer token as an admin credential: the config's admin_token,
// the local token, an admin key, or a JWT/OAuth token with the mcpgw:admin scope. valid
// reports a good credential that is not an admin's.
func (gk *gatekeeper) adminCredential(ctx context.Context, tok string) (actor string, ok, valid bool) {
	defer func() {
		if ok {
			connshare.Admit(ctx) // an admin's connection draws on the reserve (connshare)
		}
	}()
	g := gk.g
	pol := g.policy()
	if at := pol.cfg.Auth.AdminToken; at != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(at)) == 1 {
		return "admin_token", true, true
	}
	if gk.local.IsToken(tok) {
		return "local_token", true, true
	}
	return pol.authn.Admin(ctx, tok)
}
