// Package oauth is the OAuth 2.1 client side of the MCP authorization spec: it discovers an
// upstream's authorization server, registers, authorizes with PKCE and keeps tokens fresh.
//
// It holds no state of its own: every call takes a context and the values it works on
// (metadata, client, pending flow, token), and the caller stores what it returns. One flow:
//
//	ch := oauth.ParseChallenge(resp.Header)               // the upstream's 401
//	d, err := c.Discover(ctx, serverURL, ch)              // PRM, then AS metadata
//	cl, err := c.Register(ctx, d.Server, opts)            // pre-registered, CIMD or DCR
//	u, p, err := oauth.NewAuthorization(oauth.AuthRequest{...})  // send the user to u; store p
//	code, err := p.Callback(query)                        // state, error and iss checks
//	tok, err := c.Exchange(ctx, p, cl, code)              // code + verifier + resource
//	tok, err = c.Refresh(ctx, d.Server, cl, tok.RefreshToken, p.Resource, nil)
package oauth
