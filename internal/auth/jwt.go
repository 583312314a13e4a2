package auth

import (
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/mcpgw/mcpgw/config"
)

// ErrInvalidToken is wrapped by every error that means "this credential is not acceptable"
// (answer 401). The error's text says why in plain words; errors.As with *TokenError gives
// the reason alone, for a WWW-Authenticate error_description.
var ErrInvalidToken = errors.New("invalid token")

// TokenError is a refused credential. It unwraps to ErrInvalidToken.
type TokenError struct {
	Reason string // plain words: "token expired", "wrong audience", …
}

func (e *TokenError) Error() string { return "invalid token: " + e.Reason }
func (e *TokenError) Unwrap() error { return ErrInvalidToken }

func invalid(format string, args ...any) error {
	return &TokenError{Reason: fmt.Sprintf(format, args...)}
}

// Claims is what a verified credential says about the caller.
type Claims struct {
	Subject      string
	Agent        string   // from the configured agent claim (default "sub")
	Conversation string   // mcpgw.conversation, optional
	Task         string   // mcpgw.task, optional
	Servers      []string // narrows the servers the caller may use (nil = no narrowing; empty = none)
	Tools        []string // glob allow-list narrowing tools (nil = no narrowing; empty = none)
	ReadOnly     bool
	// ConnectionScope narrows the plugin connections the caller may use (nil = no
	// narrowing; empty = none): mcpgw.connection_scope of a token, or an API key's.
	ConnectionScope []string
	Scopes          []string // "scope" (space-separated string) or "scp" (array)
	Expiry          time.Time
}

// narrowClaim is the private claim that carries the narrowing fields.
const narrowClaim = "mcpgw"

// JWTVerifier checks tokens signed with the configured keys (auth mode jwt).
type JWTVerifier struct {
	cfg        config.JWTConfig
	agentClaim string
	skew       time.Duration
	keys       []verifyKey
	now        func() time.Time // tests replace it
}

// NewJWTVerifier loads every configured key. Errors name the key's index and the problem.
func NewJWTVerifier(cfg config.JWTConfig) (*JWTVerifier, error) {
	if len(cfg.Keys) == 0 {
		return nil, errors.New("jwt: no keys configured")
	}
	v := &JWTVerifier{cfg: cfg, agentClaim: cfg.AgentClaim, skew: max(cfg.ClockSkew, 0), now: time.Now}
	if v.agentClaim == "" {
		v.agentClaim = "sub"
	}
	for i, k := range cfg.Keys {
		vk, err := loadVerifyKey(k)
		if err != nil {
			return nil, fmt.Errorf("jwt key %d%s: %w", i, kidNote(k.Kid), err)
		}
		v.keys = append(v.keys, vk)
	}
	return v, nil
}

// Verify checks the token's signature against the keys pinned to its alg, then exp (required),
// nbf, iat, iss and aud, and returns its claims. Every refusal wraps ErrInvalidToken.
func (v *JWTVerifier) Verify(token string) (*Claims, error) {
	var keyErr error
	keyfunc := func(t *jwt.Token) (any, error) {
		keys, err := v.keysFor(t)
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
		jwt.WithTimeFunc(func() time.Time { return v.now() }),
	}
	if v.cfg.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(v.cfg.Issuer))
	}
	if v.cfg.Audience != "" {
		opts = append(opts, jwt.WithAudience(v.cfg.Audience))
	}
	return parseAndExtract(token, keyfunc, &keyErr, v.agentClaim, opts)
}

// keysFor returns the keys allowed to check t: those whose alg equals the header's alg and,
// when the token names a kid, those with that kid (or, if none has it, those without a kid).
func (v *JWTVerifier) keysFor(t *jwt.Token) (jwt.VerificationKeySet, error) {
	alg := t.Method.Alg()
	if err := checkHeader(t); err != nil {
		return jwt.VerificationKeySet{}, err
	}
	kid, _ := t.Header["kid"].(string)
	var exact, kidless []jwt.VerificationKey
	for _, k := range v.keys {
		if k.alg != alg {
			continue
		}
		switch {
		case k.kid == "":
			kidless = append(kidless, k.key)
		case kid == "" || k.kid == kid:
			exact = append(exact, k.key)
		}
	}
	keys := exact
	if kid == "" {
		keys = append(exact, kidless...)
	} else if len(exact) == 0 {
		keys = kidless
	}
	if len(keys) == 0 {
		if kid != "" && v.hasAlg(alg) {
			return jwt.VerificationKeySet{}, invalid("no key for alg %s and kid %s", alg, quoteKid(kid))
		}
		return jwt.VerificationKeySet{}, invalid("no key for alg %s", alg)
	}
	return jwt.VerificationKeySet{Keys: keys}, nil
}

// quoteKid quotes a kid from a token header for an error message, cut to a sane length (the
// reason may end up in a WWW-Authenticate header).
func quoteKid(kid string) string {
	const maxKid = 64
	if len(kid) > maxKid {
		return fmt.Sprintf("%q...", kid[:maxKid])
	}
	return fmt.Sprintf("%q", kid)
}

func (v *JWTVerifier) hasAlg(alg string) bool {
	for _, k := range v.keys {
		if k.alg == alg {
			return true
		}
	}
	return false
}

// checkHeader refuses alg none, unknown algorithms and critical header extensions.
func checkHeader(t *jwt.Token) error {
	alg := t.Method.Alg()
	if !supportedAlgs[alg] {
		return invalid("algorithm not allowed")
	}
	if _, ok := t.Header["crit"]; ok {
		return invalid("unsupported critical header")
	}
	return nil
}

// parseAndExtract runs the jwt parser, turns its errors into plain reasons and builds Claims.
// keyErr is where the keyfunc leaves its own (already plain) error.
func parseAndExtract(token string, keyfunc jwt.Keyfunc, keyErr *error, agentClaim string, opts []jwt.ParserOption) (*Claims, error) {
	if token == "" {
		return nil, invalid("empty token")
	}
	mc := jwt.MapClaims{}
	_, err := jwt.NewParser(opts...).ParseWithClaims(token, mc, keyfunc)
	if err != nil {
		if *keyErr != nil {
			return nil, *keyErr
		}
		return nil, plainError(err, mc)
	}
	return claimsFrom(mc, agentClaim)
}

// plainError maps a golang-jwt error to one reason. The parser checks the signature before
// the claims, so a claims reason is only ever given for a correctly signed token.
func plainError(err error, mc jwt.MapClaims) error {
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		return invalid("malformed token")
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return invalid("signature invalid")
	case errors.Is(err, jwt.ErrTokenUnverifiable):
		// alg missing or unknown to the library.
		return invalid("algorithm not allowed")
	}
	if _, ok := mc["exp"]; !ok {
		return invalid("missing exp claim")
	}
	switch {
	case errors.Is(err, jwt.ErrInvalidType):
		return invalid("malformed claims")
	case errors.Is(err, jwt.ErrTokenExpired):
		return invalid("token expired")
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		return invalid("token not valid yet")
	case errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return invalid("token issued in the future")
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return invalid("wrong issuer")
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return invalid("wrong audience")
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		if _, ok := mc["iss"]; !ok {
			return invalid("wrong issuer")
		}
		return invalid("wrong audience")
	}
	return invalid("token refused")
}
