package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"time"
)

// ErrKeysUnavailable means the issuer's JWKS could not be fetched and no cached keys exist:
// the token could not be checked at all (a server-side problem, answer 503 rather than 401).
var ErrKeysUnavailable = errors.New("signing keys unavailable")

// jwksRefetchInterval bounds refetches triggered by an unknown kid.
const jwksRefetchInterval = 10 * time.Second

// jwksMaxBytes bounds a JWKS document.
const jwksMaxBytes = 1 << 20

// jwksFetchTimeout applies to each fetch when the HTTP client has no timeout of its own.
const jwksFetchTimeout = 10 * time.Second

var rsaAlgs = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"}

// jwk is one usable key from a JWKS.
type jwk struct {
	kid  string
	algs []string // the algorithms this key may verify (pinned by "alg", else inferred)
	key  any      // *rsa.PublicKey, *ecdsa.PublicKey, ed25519.PublicKey
}

func (k *jwk) allows(alg string) bool {
	for _, a := range k.algs {
		if a == alg {
			return true
		}
	}
	return false
}

// rawJWK is the wire form of a JWK (RFC 7517, 7518, 8037).
type rawJWK struct {
	Kty    string   `json:"kty"`
	Kid    string   `json:"kid"`
	Alg    string   `json:"alg"`
	Use    string   `json:"use"`
	KeyOps []string `json:"key_ops"`
	Crv    string   `json:"crv"`
	N      string   `json:"n"`
	E      string   `json:"e"`
	X      string   `json:"x"`
	Y      string   `json:"y"`
}

// parseJWKS reads a JWK Set. Keys that are not for signatures, of unsupported types, or
// malformed are skipped (one bad key must not take the others down); a set with no usable
// key is an error that lists why each was skipped.
func parseJWKS(data []byte) ([]jwk, error) {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(data, &set); err != nil {
		return nil, fmt.Errorf("parse JWKS: %w", err)
	}
	var keys []jwk
	var skipped []string
	for i, raw := range set.Keys {
		var r rawJWK
		if err := json.Unmarshal(raw, &r); err != nil {
			skipped = append(skipped, fmt.Sprintf("key %d: %v", i, err))
			continue
		}
		k, err := parseJWK(r)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("key %d%s: %v", i, kidNote(r.Kid), err))
			continue
		}
		if k != nil {
			keys = append(keys, *k)
		}
	}
	if len(keys) == 0 {
		if len(skipped) == 0 {
			return nil, errors.New("JWKS has no signature keys")
		}
		return nil, fmt.Errorf("JWKS has no usable signature keys (%s)", strings.Join(skipped, "; "))
	}
	return keys, nil
}

// parseJWK returns nil, nil for a key that is not meant for verifying signatures.
func parseJWK(r rawJWK) (*jwk, error) {
	if !forSignatures(r) {
		return nil, nil
	}
	if strings.EqualFold(r.Alg, "none") || isHMAC(r.Alg) {
		return nil, fmt.Errorf("alg %q is not allowed", r.Alg)
	}
	var k *jwk
	var err error
	switch r.Kty {
	case "RSA":
		k, err = parseRSAJWK(r)
	case "EC":
		k, err = parseECJWK(r)
	case "OKP":
		k, err = parseOKPJWK(r)
	case "":
		return nil, errors.New("missing kty")
	default:
		return nil, fmt.Errorf("unsupported kty %q", r.Kty)
	}
	if err != nil {
		return nil, err
	}
	k.kid = r.Kid
	if r.Alg != "" {
		// "alg" pins the algorithm; it must fit the key type.
		if !k.allows(r.Alg) {
			return nil, fmt.Errorf("alg %q does not fit kty %q%s", r.Alg, r.Kty, crvNote(r.Crv))
		}
		k.algs = []string{r.Alg}
	}
	return k, nil
}

// forSignatures reports whether a JWK may verify signatures: "use" is absent or "sig", and
// "key_ops", when given, has "verify".
func forSignatures(r rawJWK) bool {
	if r.Use != "" && r.Use != "sig" {
		return false
	}
	if r.KeyOps == nil {
		return true
	}
	for _, op := range r.KeyOps {
		if op == "verify" {
			return true
		}
	}
	return false
}

// parseRSAJWK reads an RSA public key of at least 2048 bits.
func parseRSAJWK(r rawJWK) (*jwk, error) {
	n, err := b64uint(r.N, "n")
	if err != nil {
		return nil, err
	}
	e, err := b64uint(r.E, "e")
	if err != nil {
		return nil, err
	}
	if !e.IsInt64() || e.Int64() < 3 || e.Int64() > 1<<31-1 || e.Bit(0) == 0 {
		return nil, errors.New("bad RSA exponent")
	}
	if n.BitLen() < 2048 {
		return nil, fmt.Errorf("RSA key is %d bits; at least 2048 are required", n.BitLen())
	}
	return &jwk{key: &rsa.PublicKey{N: n, E: int(e.Int64())}, algs: rsaAlgs}, nil
}

// parseECJWK reads an ECDSA public key on P-256, P-384 or P-521.
func parseECJWK(r rawJWK) (*jwk, error) {
	var curve elliptic.Curve
	var alg string
	switch r.Crv {
	case "P-256":
		curve, alg = elliptic.P256(), "ES256"
	case "P-384":
		curve, alg = elliptic.P384(), "ES384"
	case "P-521":
		curve, alg = elliptic.P521(), "ES512"
	default:
		return nil, fmt.Errorf("unsupported EC curve %q", r.Crv)
	}
	size := (curve.Params().BitSize + 7) / 8
	x, err := b64fixed(r.X, "x", size)
	if err != nil {
		return nil, err
	}
	y, err := b64fixed(r.Y, "y", size)
	if err != nil {
		return nil, err
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(curve, append(append([]byte{4}, x...), y...))
	if err != nil {
		return nil, fmt.Errorf("bad EC point: %w", err)
	}
	return &jwk{key: pub, algs: []string{alg}}, nil
}

// parseOKPJWK reads an Ed25519 public key.
func parseOKPJWK(r rawJWK) (*jwk, error) {
	if r.Crv != "Ed25519" {
		return nil, fmt.Errorf("unsupported OKP curve %q", r.Crv)
	}
	x, err := b64(r.X, "x")
	if err != nil {
		return nil, err
	}
	if len(x) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("Ed25519 x is %d bytes, want %d", len(x), ed25519.PublicKeySize)
	}
	return &jwk{key: ed25519.PublicKey(x), algs: []string{"EdDSA"}}, nil
}

func crvNote(crv string) string {
	if crv == "" {
		return ""
	}
	return " crv " + crv
}

func b64(s, field string) ([]byte, error) {
	if s == "" {
		return nil, fmt.Errorf("missing %s", field)
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil {
		return nil, fmt.Errorf("bad base64url in %s", field)
	}
	return b, nil
}

func b64uint(s, field string) (*big.Int, error) {
	b, err := b64(s, field)
	if err != nil {
		return nil, err
	}
	return new(big.Int).SetBytes(b), nil
}

// b64fixed decodes a coordinate and left-pads it to size bytes (RFC 7518 wants it full
// length already; some issuers drop leading zeros).
func b64fixed(s, field string, size int) ([]byte, error) {
	b, err := b64(s, field)
	if err != nil {
		return nil, err
	}
	if len(b) > size {
		return nil, fmt.Errorf("%s is %d bytes, want %d", field, len(b), size)
	}
	out := make([]byte, size)
	copy(out[size-len(b):], b)
	return out, nil
}

// jwksCache holds an issuer's keys: fetched on first use, refreshed after refresh, and
// refetched (at most once per jwksRefetchInterval) when a token names an unknown key.
type jwksCache struct {
	url     string
	client  *http.Client
	refresh time.Duration
	now     func() time.Time

	mu      sync.RWMutex
	keys    []jwk
	fetched time.Time // last successful fetch
	gen     uint64    // bumped on every fetch attempt

	fetchMu     sync.Mutex // one fetch at a time
	lastAttempt time.Time  // guarded by fetchMu
}

func (c *jwksCache) snapshot() ([]jwk, time.Time, uint64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.keys, c.fetched, c.gen
}

// current returns the cached keys, fetching them first if there are none and refreshing them
// if they are older than refresh. A refresh that fails keeps the old keys.
func (c *jwksCache) current(ctx context.Context) ([]jwk, error) {
	keys, fetched, gen := c.snapshot()
	if keys != nil && c.now().Sub(fetched) < c.refresh {
		return keys, nil
	}
	if keys != nil {
		// Stale: one caller refreshes, the others go on with the keys they have.
		if !c.fetchMu.TryLock() {
			return keys, nil
		}
	} else {
		c.fetchMu.Lock()
	}
	defer c.fetchMu.Unlock()
	if k, _, g := c.snapshot(); g != gen && k != nil {
		return k, nil // someone fetched while we waited
	}
	var err error
	if c.now().Sub(c.lastAttempt) >= jwksRefetchInterval || c.lastAttempt.IsZero() {
		err = c.fetchLocked(ctx)
	} else if keys == nil {
		err = errors.New("last fetch failed less than 10s ago")
	}
	keys, _, _ = c.snapshot()
	if keys == nil {
		return nil, fmt.Errorf("%w: JWKS %s: %v", ErrKeysUnavailable, c.url, err)
	}
	return keys, nil
}

// refetch fetches the keys again because a token named a key we do not have, unless a fetch
// happened (or was tried) less than jwksRefetchInterval ago. It reports whether new keys may
// have arrived since gen.
func (c *jwksCache) refetch(ctx context.Context, gen uint64) bool {
	c.fetchMu.Lock()
	defer c.fetchMu.Unlock()
	if _, _, g := c.snapshot(); g != gen {
		return true // someone fetched while we waited
	}
	if c.now().Sub(c.lastAttempt) < jwksRefetchInterval {
		return false
	}
	return c.fetchLocked(ctx) == nil
}

// fetchLocked fetches and installs the JWKS. The caller holds fetchMu.
func (c *jwksCache) fetchLocked(ctx context.Context) error {
	c.lastAttempt = c.now()
	keys, err := c.fetch(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	if err != nil {
		return err
	}
	c.keys, c.fetched = keys, c.now()
	return nil
}

func (c *jwksCache) fetch(ctx context.Context) ([]jwk, error) {
	// The keys serve every caller: one caller giving up must not fail the fetch for all (and
	// hold off the next attempt for 10 s), so the fetch ignores cancellation and has its own
	// deadline.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), jwksFetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, jwksMaxBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > jwksMaxBytes {
		return nil, fmt.Errorf("JWKS larger than %d bytes", jwksMaxBytes)
	}
	return parseJWKS(data)
}

// match returns the keys that may check a token with this alg and kid: with a kid, the keys
// with that kid (or, if none has it, those without a kid); without one, every key. Only keys
// that allow alg are returned; kidKnown says whether some key carries the kid at all.
func match(keys []jwk, kid, alg string) (out []any, kidKnown bool) {
	var kidless []any
	for i := range keys {
		k := &keys[i]
		if kid != "" && k.kid == kid {
			kidKnown = true
		}
		if !k.allows(alg) {
			continue
		}
		switch {
		case kid == "" || k.kid == kid:
			out = append(out, k.key)
		case k.kid == "":
			kidless = append(kidless, k.key)
		}
	}
	if kid != "" && len(out) == 0 && !kidKnown {
		out = kidless
	}
	return out, kidKnown
}
