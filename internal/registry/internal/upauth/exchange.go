package upauth

import (
	"context"
	"errors"
	"fmt"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/oauth"
	"github.com/mcpgw/mcpgw/internal/store"
)

// Token exchange (RFC 8693, grant token_exchange): an identity's grant is obtained from
// the token the caller itself presented, at a security token service, without a person.
// Plain, the service returns the upstream's token; with id_jag (enterprise-managed
// authorization) it returns an identity assertion that the upstream's own authorization
// server takes as a jwt-bearer grant. An exchanged grant is not refreshed: near its
// expiry, or once the upstream refuses it, the caller's latest token is exchanged again.

// maxCallerTokens bounds the callers' tokens kept for exchange (the least recently seen
// go first: such a caller's next request brings its token again).
const maxCallerTokens = 10000

// callerTokens are the latest bearer tokens callers presented, by subject: in memory
// only, never stored, and read only to exchange them.
type callerTokens struct{ c *lru.Cache[string, string] }

func newCallerTokens() callerTokens {
	c, _ := lru.New[string, string](maxCallerTokens)
	return callerTokens{c}
}

// NoteCallerToken keeps token as subject's latest, for its exchanges; it reports whether
// no caller had brought one before.
func (m *Manager) NoteCallerToken(subject, token string) (first bool) {
	if subject == "" || token == "" {
		return false
	}
	first = m.callers.c.Len() == 0
	if old, ok := m.callers.c.Peek(subject); ok && old == token {
		return false
	}
	m.callers.c.Add(subject, token)
	return first
}

// AnyCaller names a subject whose token is kept (the most recently seen; ok false when
// none is).
func (m *Manager) AnyCaller() (string, bool) {
	keys := m.callers.c.Keys() // oldest first
	if len(keys) == 0 {
		return "", false
	}
	return keys[len(keys)-1], true
}

// NoCallerToken: the upstream takes a token exchanged for the caller's own, and the
// caller brought none.
type NoCallerToken struct{ Server string }

func (e *NoCallerToken) Error() string {
	return "upstream " + e.Server + " takes a token exchanged for yours: send your identity provider's token as Authorization: Bearer"
}

// tokenTypeURI is the RFC 8693 token type URI of a token_exchange.subject_token_type.
func tokenTypeURI(t string) string {
	switch t {
	case config.SubjectIDToken:
		return oauth.TokenTypeIDToken
	case config.SubjectJWT:
		return "urn:ietf:params:oauth:token-type:jwt"
	}
	return "urn:ietf:params:oauth:token-type:access_token"
}

// exchange obtains sub's grant at srv from sub's latest token and stores it (over rev).
func (m *Manager) exchange(ctx context.Context, srv Server, sub string, rev int64) (oauth.Token, error) {
	subjectToken, ok := m.callers.c.Get(sub)
	if !ok {
		return oauth.Token{}, &NoCallerToken{Server: srv.Name}
	}
	a, te := srv.Auth, srv.Auth.TokenExchange
	d, err := m.discover(ctx, srv, nil)
	if err != nil && (te.IDJAG || te.Audience == "") {
		return oauth.Token{}, fmt.Errorf("upstream %s: %w", srv.Name, err)
	}
	resource, audience := srv.URL, te.Audience
	var as oauth.ServerMetadata
	if d != nil {
		resource, as = d.Resource, *d.Server
		if audience == "" {
			audience = as.Issuer
		}
	}
	sts := oauth.ClientInfo{ID: te.ClientID, Secret: te.ClientSecret, AuthMethod: oauth.AuthNone}
	if te.ClientSecret != "" {
		sts.AuthMethod = oauth.AuthBasic
	}
	var tok oauth.Token
	if te.IDJAG {
		jag, err := m.oc.RequestIDJAG(ctx, te.Endpoint, sts, subjectToken, audience, resource, a.Scopes)
		if err != nil {
			return oauth.Token{}, fmt.Errorf("upstream %s: the identity provider did not exchange your token: %w", srv.Name, err)
		}
		cl, err := m.clientInfo(srv, storedClient{ID: a.ClientID, Secret: a.ClientSecret})
		if err != nil {
			return oauth.Token{}, err
		}
		cl.AuthMethod = oauth.ChooseAuthMethod(as.TokenEndpointAuthMethodsSupported, cl.Secret != "", cl.SigningKey != nil)
		if tok, err = m.oc.JWTBearer(ctx, &as, cl, jag.AccessToken, resource, a.Scopes); err != nil {
			return oauth.Token{}, fmt.Errorf("upstream %s: its authorization server did not take the identity assertion: %w", srv.Name, err)
		}
	} else {
		tok, err = m.oc.TokenExchange(ctx, te.Endpoint, "", sts, oauth.TokenExchangeRequest{
			SubjectToken: subjectToken, SubjectTokenType: tokenTypeURI(te.SubjectTokenType),
			RequestedTokenType: tokenTypeURI(config.SubjectAccessToken),
			Audience:           audience, Resource: resource, Scopes: a.Scopes})
		if err != nil {
			return oauth.Token{}, fmt.Errorf("upstream %s: the token service did not exchange your token: %w", srv.Name, err)
		}
	}
	tok.RefreshToken = "" // exchanged again, from the caller's latest token
	g := &grant{Token: tok, Server: as, Resource: resource}
	if err := m.putGrant(srv.Name, sub, g, rev); err != nil && !errors.Is(err, store.ErrConflict) {
		return oauth.Token{}, err
	}
	return tok, nil
}

// exchangeRefused answers the upstream's refusal of sub's exchanged token g (nil: none
// was sent): the token is dropped and, when the caller's token can be exchanged again,
// the request is tried once more with the new one.
func (m *Manager) exchangeRefused(srv Server, sub string, g *grant) error {
	if g != nil {
		if err := m.o.Store.DeleteCredential(kindGrant, srv.Name, sub); err != nil {
			return err
		}
	}
	if _, ok := m.callers.c.Peek(sub); !ok {
		return &NoCallerToken{Server: srv.Name}
	}
	return nil
}
