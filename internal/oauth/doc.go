// Package oauth is the OAuth 2.1 client side of the MCP authorization spec: it discovers an
// upstream's authorization server, registers, authorizes with PKCE and keeps tokens fresh.
//
// It holds no state of its own: every call takes a context and the values it works on
// (metadata, client, pending flow, token), and the caller stores what it returns. One flow:
//
//	ch := oauth.ParseChallenge(resp.Header)               // the upstream's 401
//	d, err := c.Discover(ctx, serverURL, ch)              // PRM, then AS metadata
//	cl, err := c.Register(ctx, d.Server, opts)            // pre-registered, CIMD or DCR
//	scopes := oauth.SelectScopes(ch, d.ResourceMetadata, d.Server, true)
//	u, p, err := oauth.NewAuthorization(oauth.AuthRequest{Server: d.Server, Client: cl,
//		RedirectURI: cb, Resource: d.Resource, Scopes: scopes}) // send the user to u; store p
//	code, err := p.Callback(query)                        // state, iss and error checks
//	tok, err := c.Exchange(ctx, p, cl, code)              // code + verifier + resource
//	tok, err = c.Refresh(ctx, d.Server, cl, tok.RefreshToken, d.Resource, nil)
//
// A 403 insufficient_scope is answered with StepUp and a new authorization; a client is
// kept per issuer (ClientInfo.Issuer) and never shown to another authorization server.
// Without a user: ClientCredentials, JWTBearer, and RequestIDJAG for enterprise-managed
// authorization. ClientInfo.DPoP binds tokens to a key (RFC 9449).
//
// Every document is read with exact, unique member names and a size cap; redirects are
// followed only for metadata GETs and only on the same host; plain http only to loopback
// unless Client.AllowHTTP. Errors and the String forms of Token, ClientInfo and Pending
// never contain a token, code, secret or verifier.
package oauth
