// size: being split (issue 41)
package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
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

// narrowKeys are the fields IssueJWT accepts under the "mcpgw" claim.
var narrowKeys = map[string]bool{"servers": true, "tools": true, "read_only": true, "task": true, "conversation": true, "connection_scope": true}

// algFamilies maps each supported algorithm to the kind of key it needs.
var supportedAlgs = map[string]bool{
	"HS256": true, "HS384": true, "HS512": true,
	"RS256": true, "RS384": true, "RS512": true,
	"PS256": true, "PS384": true, "PS512": true,
	"ES256": true, "ES384": true, "ES512": true,
	"EdDSA": true,
}

func isHMAC(alg string) bool { return strings.HasPrefix(alg, "HS") }

// hmacMinLen is RFC 7518 §3.2: the key is at least as long as the hash output.
func hmacMinLen(alg string) int {
	switch alg {
	case "HS384":
		return 48
	case "HS512":
		return 64
	}
	return 32
}

// verifyKey is one loaded key with its pinned algorithm.
type verifyKey struct {
	kid string
	alg string
	key any // []byte for HS*, *rsa.PublicKey, *ecdsa.PublicKey, ed25519.PublicKey
}

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

func kidNote(kid string) string {
	if kid == "" {
		return ""
	}
	return fmt.Sprintf(" (kid %q)", kid)
}

func loadVerifyKey(k config.JWTKey) (verifyKey, error) {
	vk := verifyKey{kid: k.Kid, alg: k.Alg}
	switch {
	case k.Alg == "":
		return vk, errors.New("missing alg (the algorithm is pinned per key)")
	case strings.EqualFold(k.Alg, "none"):
		return vk, errors.New(`alg "none" is never allowed`)
	case !supportedAlgs[k.Alg]:
		return vk, fmt.Errorf("unsupported alg %q", k.Alg)
	}
	if isHMAC(k.Alg) {
		if k.PublicKey != "" || k.PublicKeyFile != "" || k.PrivateKeyFile != "" {
			return vk, fmt.Errorf("%s takes a secret, not a public or private key", k.Alg)
		}
		if len(k.Secret) < hmacMinLen(k.Alg) {
			return vk, fmt.Errorf("%s secret must be at least %d bytes (RFC 7518 §3.2), got %d", k.Alg, hmacMinLen(k.Alg), len(k.Secret))
		}
		vk.key = []byte(k.Secret)
		return vk, nil
	}
	if k.Secret != "" {
		return vk, fmt.Errorf("%s takes public_key or public_key_file, not a secret", k.Alg)
	}
	pub, err := loadPublicKey(k)
	if err != nil {
		return vk, err
	}
	if err := checkKeyForAlg(k.Alg, pub); err != nil {
		return vk, err
	}
	vk.key = pub
	return vk, nil
}

// loadPublicKey reads public_key, public_key_file or, failing both, derives the public half
// of private_key_file.
func loadPublicKey(k config.JWTKey) (crypto.PublicKey, error) {
	switch {
	case k.PublicKey != "" && k.PublicKeyFile != "":
		return nil, errors.New("set public_key or public_key_file, not both")
	case k.PublicKey != "":
		pub, err := parsePublicKeyPEM([]byte(k.PublicKey))
		if err != nil {
			return nil, fmt.Errorf("public_key: %w", err)
		}
		return pub, nil
	case k.PublicKeyFile != "":
		data, err := os.ReadFile(k.PublicKeyFile)
		if err != nil {
			return nil, fmt.Errorf("public_key_file: %w", err)
		}
		pub, err := parsePublicKeyPEM(data)
		if err != nil {
			return nil, fmt.Errorf("public_key_file %s: %w", k.PublicKeyFile, err)
		}
		return pub, nil
	case k.PrivateKeyFile != "":
		priv, err := loadPrivateKeyFile(k.PrivateKeyFile)
		if err != nil {
			return nil, err
		}
		return priv.Public(), nil
	}
	return nil, fmt.Errorf("%s needs public_key or public_key_file", k.Alg)
}

// parsePublicKeyPEM accepts PKIX "PUBLIC KEY", PKCS#1 "RSA PUBLIC KEY" and "CERTIFICATE".
func parsePublicKeyPEM(data []byte) (crypto.PublicKey, error) {
	rest := data
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return nil, errors.New("no PEM public key found")
		}
		switch b.Type {
		case "PUBLIC KEY":
			pub, err := x509.ParsePKIXPublicKey(b.Bytes)
			if err != nil {
				return nil, fmt.Errorf("parse PKIX public key: %w", err)
			}
			return pub, nil
		case "RSA PUBLIC KEY":
			pub, err := x509.ParsePKCS1PublicKey(b.Bytes)
			if err != nil {
				return nil, fmt.Errorf("parse PKCS#1 public key: %w", err)
			}
			return pub, nil
		case "CERTIFICATE":
			cert, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				return nil, fmt.Errorf("parse certificate: %w", err)
			}
			return cert.PublicKey, nil
		case "PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY", "ENCRYPTED PRIVATE KEY":
			return nil, errors.New("found a private key where a public key belongs (use private_key_file for signing keys)")
		}
	}
}

// loadPrivateKeyFile reads a PKCS#1, PKCS#8 or SEC1 PEM private key.
func loadPrivateKeyFile(path string) (crypto.Signer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("private_key_file: %w", err)
	}
	s, err := parsePrivateKeyPEM(data)
	if err != nil {
		return nil, fmt.Errorf("private_key_file %s: %w", path, err)
	}
	return s, nil
}

func parsePrivateKeyPEM(data []byte) (crypto.Signer, error) {
	rest := data
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return nil, errors.New("no PEM private key found")
		}
		if _, enc := b.Headers["Proc-Type"]; enc || b.Type == "ENCRYPTED PRIVATE KEY" {
			return nil, errors.New("encrypted private keys are not supported")
		}
		switch b.Type {
		case "RSA PRIVATE KEY":
			k, err := x509.ParsePKCS1PrivateKey(b.Bytes)
			if err != nil {
				return nil, fmt.Errorf("parse PKCS#1 private key: %w", err)
			}
			return k, nil
		case "EC PRIVATE KEY":
			k, err := x509.ParseECPrivateKey(b.Bytes)
			if err != nil {
				return nil, fmt.Errorf("parse SEC1 private key: %w", err)
			}
			return k, nil
		case "PRIVATE KEY":
			k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
			if err != nil {
				return nil, fmt.Errorf("parse PKCS#8 private key: %w", err)
			}
			switch k := k.(type) {
			case *rsa.PrivateKey:
				return k, nil
			case *ecdsa.PrivateKey:
				return k, nil
			case ed25519.PrivateKey:
				return k, nil
			}
			return nil, fmt.Errorf("unsupported PKCS#8 key type %T", k)
		}
		// Anything else ("EC PARAMETERS" before an openssl EC key, say) is skipped.
	}
}

// checkKeyForAlg refuses a key whose type or size does not fit the pinned algorithm.
func checkKeyForAlg(alg string, pub crypto.PublicKey) error {
	switch alg[:2] {
	case "RS", "PS":
		k, ok := pub.(*rsa.PublicKey)
		if !ok {
			return fmt.Errorf("%s needs an RSA key, got %s", alg, keyKind(pub))
		}
		if k.N.BitLen() < 2048 {
			return fmt.Errorf("%s key is %d bits; at least 2048 are required", alg, k.N.BitLen())
		}
		return nil
	case "ES":
		k, ok := pub.(*ecdsa.PublicKey)
		if !ok {
			return fmt.Errorf("%s needs an EC key, got %s", alg, keyKind(pub))
		}
		want := curveForAlg(alg)
		if k.Curve != want {
			return fmt.Errorf("%s needs curve %s, got %s", alg, want.Params().Name, k.Curve.Params().Name)
		}
		return nil
	case "Ed":
		if _, ok := pub.(ed25519.PublicKey); !ok {
			return fmt.Errorf("%s needs an Ed25519 key, got %s", alg, keyKind(pub))
		}
		return nil
	}
	return fmt.Errorf("unsupported alg %q", alg)
}

func curveForAlg(alg string) elliptic.Curve {
	switch alg {
	case "ES384":
		return elliptic.P384()
	case "ES512":
		return elliptic.P521()
	}
	return elliptic.P256()
}

func keyKind(k any) string {
	switch k := k.(type) {
	case *rsa.PublicKey, *rsa.PrivateKey:
		return "an RSA key"
	case *ecdsa.PublicKey:
		return "an EC key (" + k.Curve.Params().Name + ")"
	case *ecdsa.PrivateKey:
		return "an EC key (" + k.Curve.Params().Name + ")"
	case ed25519.PublicKey, ed25519.PrivateKey:
		return "an Ed25519 key"
	}
	return fmt.Sprintf("a %T", k)
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

// IssueJWT signs a token for agent, valid for ttl, with the first key that can sign: an HS*
// secret or a key with private_key_file. narrow, when non-empty, becomes the "mcpgw" claim
// (keys: servers, tools, read_only, connection_scope, task, conversation).
func IssueJWT(cfg config.JWTConfig, agent string, ttl time.Duration, narrow map[string]any) (string, error) {
	return issueJWT(cfg, agent, ttl, narrow, nil, time.Now())
}

// IssueJWTWithScopes is IssueJWT with a "scope" claim (space-separated), e.g. mcpgw:admin.
func IssueJWTWithScopes(cfg config.JWTConfig, agent string, ttl time.Duration, narrow map[string]any, scopes []string) (string, error) {
	return issueJWT(cfg, agent, ttl, narrow, scopes, time.Now())
}

func issueJWT(cfg config.JWTConfig, agent string, ttl time.Duration, narrow map[string]any, scopes []string, now time.Time) (string, error) {
	if agent == "" {
		return "", errors.New("jwt issue: agent is empty")
	}
	if ttl <= 0 {
		return "", fmt.Errorf("jwt issue: ttl %v must be positive", ttl)
	}
	for k := range narrow {
		if !narrowKeys[k] {
			return "", fmt.Errorf("jwt issue: unknown narrowing field %q (want servers, tools, read_only, connection_scope, task, conversation)", k)
		}
	}
	idx := -1
	for i, k := range cfg.Keys {
		if (isHMAC(k.Alg) && k.Secret != "") || (!isHMAC(k.Alg) && k.PrivateKeyFile != "") {
			idx = i
			break
		}
	}
	if idx < 0 {
		return "", errors.New("jwt issue: no key can sign (need an HS* key with a secret, or a key with private_key_file)")
	}
	k := cfg.Keys[idx]
	signKey, err := loadSigningKey(k)
	if err != nil {
		return "", fmt.Errorf("jwt issue: key %d%s: %w", idx, kidNote(k.Kid), err)
	}
	method := jwt.GetSigningMethod(k.Alg)
	if method == nil {
		return "", fmt.Errorf("jwt issue: key %d: unsupported alg %q", idx, k.Alg)
	}
	agentClaim := cfg.AgentClaim
	if agentClaim == "" {
		agentClaim = "sub"
	}
	now = now.Truncate(time.Second)
	mc := jwt.MapClaims{
		"sub": agent,
		"iat": now.Unix(),
		"nbf": now.Unix(),
		"exp": now.Add(ttl).Unix(),
	}
	mc[agentClaim] = agent
	if cfg.Issuer != "" {
		mc["iss"] = cfg.Issuer
	}
	if cfg.Audience != "" {
		mc["aud"] = cfg.Audience
	}
	if len(narrow) > 0 {
		mc[narrowClaim] = narrow
	}
	if len(scopes) > 0 {
		mc["scope"] = strings.Join(scopes, " ")
	}
	t := jwt.NewWithClaims(method, mc)
	if k.Kid != "" {
		t.Header["kid"] = k.Kid
	}
	s, err := t.SignedString(signKey)
	if err != nil {
		return "", fmt.Errorf("jwt issue: sign: %w", err)
	}
	return s, nil
}

// loadSigningKey returns the HMAC secret or the private key, checked against the pinned alg
// and, when the key also has a public key configured, against that public key.
func loadSigningKey(k config.JWTKey) (any, error) {
	if !supportedAlgs[k.Alg] {
		return nil, fmt.Errorf("unsupported alg %q", k.Alg)
	}
	if isHMAC(k.Alg) {
		if len(k.Secret) < hmacMinLen(k.Alg) {
			return nil, fmt.Errorf("%s secret must be at least %d bytes (RFC 7518 §3.2), got %d", k.Alg, hmacMinLen(k.Alg), len(k.Secret))
		}
		return []byte(k.Secret), nil
	}
	priv, err := loadPrivateKeyFile(k.PrivateKeyFile)
	if err != nil {
		return nil, err
	}
	if err := checkKeyForAlg(k.Alg, priv.Public()); err != nil {
		return nil, err
	}
	if k.PublicKey != "" || k.PublicKeyFile != "" {
		pub, err := loadPublicKey(k)
		if err != nil {
			return nil, err
		}
		eq, ok := pub.(interface{ Equal(crypto.PublicKey) bool })
		if !ok || !eq.Equal(priv.Public()) {
			return nil, errors.New("private_key_file does not match the configured public key")
		}
	}
	return priv, nil
}
