package gateway

import (
	"context"
	"crypto/subtle"
	"net/http"

	"github.com/mcpgw/mcpgw/auth"
	"github.com/mcpgw/mcpgw/gateway/internal/admin"
)

// adminCredential checks a bearer token as an admin credential: the config's admin_token,
// the local token, an admin key, or a JWT/OAuth token with the mcpgw:admin scope. valid
// reports a good credential that is not an admin's.
func (g *Gateway) adminCredential(ctx context.Context, tok string) (actor string, ok, valid bool) {
	pol := g.policy()
	if at := pol.cfg.Auth.AdminToken; at != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(at)) == 1 {
		return "admin_token", true, true
	}
	if g.local.isToken(tok) {
		return "local_token", true, true
	}
	return pol.authn.Admin(ctx, tok)
}

// auditAdmin writes one audit line for an admin write.
func (g *Gateway) auditAdmin(r *http.Request, object, outcome string, before, after any) {
	g.audit.Record(auth.AuditEvent{Kind: "admin", Actor: admin.Actor(r), Action: r.Method + " " + r.URL.Path,
		Object: object, Outcome: outcome, Before: hashJSON(before), After: hashJSON(after)})
}
