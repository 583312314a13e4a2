package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/mcpgw/mcpgw/config"
)

// OAuthVerifier validates JWT access tokens issued by an OAuth 2.1 authorization server,
// with the server's keys from its JWKS (auth mode oauth).
type OAuthVerifier struct {
	cfg        config.OAuthConfig
	audience   string
	agentClaim string
	skew       time.Duration
	jwks       *jwksCache
	now        func() time.Time // tests replace it
}

// NewOAuthVerifier checks the settings; the JWKS is fetched on first use. client nil means a
// client with a 10 s timeout.
func NewOAuthVerifier(cfg config.OAuthConfig, client *http.Client) (*OAuthVerifier, error) {
	if cfg.JWKSURL == "" {
		return nil, errors.New("oauth: jwks_url is required")
	}
	u, err := url.Parse(cfg.JWKSURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("oauth: jwks_url %q is not an absolute URL", cfg.JWKSURL)
	}
	if u.Scheme != "https" && !(u.Scheme == "http" && isLoopbackHost(u.Hostname())) {
		return nil, fmt.Errorf("oauth: jwks_url %q must use https (http only for loopback)", cfg.JWKSURL)
	}
	v := &OAuthVerifier{cfg: cfg, audience: cfg.Audience, agentClaim: cfg.AgentClaim, skew: max(cfg.ClockSkew, 0), now: time.Now}
	if v.audience == "" {
		v.audience = cfg.Resource
	}
	if v.audience == "" {
		return nil, errors.New("oauth: audience or resource is required (tokens must be checked to be meant for this gateway, RFC 8707)")
	}
	if v.agentClaim == "" {
		v.agentClaim = "sub"
	}
	refresh := cfg.JWKSRefresh
	if refresh <= 0 {
		refresh = 10 * time.Minute
	}
	if client == nil {
		client = &http.Client{Timeout: jwksFetchTimeout}
	}
	v.jwks = &jwksCache{url: cfg.JWKSURL, client: client, refresh: refresh, now: func() time.Time { return v.now() }}
	return v, nil
}

func isLoopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// Refresh fetches the JWKS now (for a startup check); Verify does not need it.
func (v *OAuthVerifier) Refresh(ctx context.Context) error {
	v.jwks.fetchMu.Lock()
	defer v.jwks.fetchMu.Unlock()
	if err := v.jwks.fetchLocked(ctx); err != nil {
		return fmt.Errorf("%w: JWKS %s: %v", ErrKeysUnavailable, v.cfg.JWKSURL, err)
	}
	return nil
}

// Verify checks an access token: signature by a key from the JWKS pinned to the token's alg,
// exp (required), nbf, iat, iss (when configured) and aud containing the audience (default
// the resource, RFC 8707). Refusals wrap ErrInvalidToken; a JWKS that cannot be fetched (and
// no cached keys) gives ErrKeysUnavailable instead.
func (v *OAuthVerifier) Verify(ctx context.Context, token string) (*Claims, error) {
	var keyErr error
	keyfunc := func(t *jwt.Token) (any, error) {
		keys, err := v.keysFor(ctx, t)
		if err != nil {
			keyErr = err
			return nil, err
		}
		return keys, nil
	}
	opts := []jwt.ParserOption{
		jwt.WithLeeway(v.skew),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithAudience(v.audience),
		jwt.WithTimeFunc(func() time.Time { return v.now() }),
	}
	if v.cfg.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(v.cfg.Issuer))
	}
	return parseAndExtract(token, keyfunc, &keyErr, v.agentClaim, opts)
}

func (v *OAuthVerifier) keysFor(ctx context.Context, t *jwt.Token) (jwt.VerificationKeySet, error) {
	if err := checkHeader(t); err != nil {
		return jwt.VerificationKeySet{}, err
	}
	alg := t.Method.Alg()
	if isHMAC(alg) {
		return jwt.VerificationKeySet{}, invalid("algorithm not allowed")
	}
	kid, _ := t.Header["kid"].(string)
	keys, err := v.jwks.current(ctx)
	if err != nil {
		return jwt.VerificationKeySet{}, err
	}
	_, _, gen := v.jwks.snapshot()
	cands, kidKnown := match(keys, kid, alg)
	if len(cands) == 0 && !kidKnown {
		// Maybe the issuer rotated its keys: fetch again (rate-limited).
		if v.jwks.refetch(ctx, gen) {
			keys, _, _ = v.jwks.snapshot()
			cands, kidKnown = match(keys, kid, alg)
		}
	}
	if len(cands) == 0 {
		switch {
		case kidKnown:
			return jwt.VerificationKeySet{}, invalid("algorithm not allowed")
		case kid != "":
			return jwt.VerificationKeySet{}, invalid("no key for kid %s", quoteKid(kid))
		default:
			return jwt.VerificationKeySet{}, invalid("no key for alg %s", alg)
		}
	}
	ks := jwt.VerificationKeySet{Keys: make([]jwt.VerificationKey, len(cands))}
	for i, c := range cands {
		ks.Keys[i] = c
	}
	return ks, nil
}

// ProtectedResourceMetadata is the RFC 9728 document served at
// /.well-known/oauth-protected-resource. authorization_servers falls back to the issuer.
func ProtectedResourceMetadata(cfg config.OAuthConfig) []byte {
	doc := struct {
		Resource               string   `json:"resource"`
		AuthorizationServers   []string `json:"authorization_servers"`
		ScopesSupported        []string `json:"scopes_supported,omitempty"`
		BearerMethodsSupported []string `json:"bearer_methods_supported"`
		ResourceName           string   `json:"resource_name"`
	}{
		Resource:               cfg.Resource,
		AuthorizationServers:   cfg.AuthorizationServers,
		ScopesSupported:        cfg.Scopes,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "mcpgw",
	}
	if len(doc.AuthorizationServers) == 0 && cfg.Issuer != "" {
		doc.AuthorizationServers = []string{cfg.Issuer}
	}
	if doc.AuthorizationServers == nil {
		doc.AuthorizationServers = []string{}
	}
	b, _ := json.Marshal(doc) // cannot fail: strings only
	return b
}

// WWWAuthenticate builds the value of a WWW-Authenticate header for a 401 or 403:
// Bearer resource_metadata="…", scope="…", error="…", error_description="…", leaving out
// empty parts.
func WWWAuthenticate(resourceMetadataURL string, scopes []string, errCode, desc string) string {
	var parts []string
	add := func(name, val string) {
		if val != "" {
			parts = append(parts, name+"="+quote(val))
		}
	}
	add("resource_metadata", resourceMetadataURL)
	add("scope", strings.Join(scopes, " "))
	add("error", errCode)
	add("error_description", desc)
	if len(parts) == 0 {
		return "Bearer"
	}
	return "Bearer " + strings.Join(parts, ", ")
}

// quote makes an RFC 9110 quoted-string: backslash and double quote are escaped, control
// characters (which could split the header) become spaces, anything past ASCII "?".
func quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			b.WriteByte(' ')
		case r >= 0x7f:
			b.WriteByte('?') // RFC 6750 §3 allows printable ASCII only
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
