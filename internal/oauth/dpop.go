package oauth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// DPoPKey is the key a client proves possession of (RFC 9449): set ClientInfo.DPoP and the
// token requests carry a proof, the tokens come back bound to the key (token_type DPoP),
// and every request to the MCP server must carry a fresh Proof beside the token. It is a
// P-256 key; String, GoString and LogValue show only its thumbprint.
type DPoPKey struct {
	priv *ecdsa.PrivateKey
	jwk  map[string]string
}

// NewDPoPKey makes a fresh P-256 key.
func NewDPoPKey() (*DPoPKey, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("oauth: DPoP key: %w", err)
	}
	return DPoPKeyFrom(k)
}

// DPoPKeyFrom wraps a stored P-256 key.
func DPoPKeyFrom(k *ecdsa.PrivateKey) (*DPoPKey, error) {
	if k == nil || k.Curve != elliptic.P256() {
		return nil, fmt.Errorf("oauth: a DPoP key must be P-256")
	}
	pub, err := k.PublicKey.Bytes() // 0x04 || X || Y
	if err != nil {
		return nil, fmt.Errorf("oauth: DPoP key: %w", err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	return &DPoPKey{priv: k, jwk: map[string]string{
		"kty": "EC", "crv": "P-256", "x": enc(pub[1:33]), "y": enc(pub[33:]),
	}}, nil
}

// Thumbprint is the key's RFC 7638 SHA-256 thumbprint: the jkt a bound token names.
func (k *DPoPKey) Thumbprint() string {
	// The required members in lexicographic order, no spaces (RFC 7638 §3.2).
	canon := fmt.Sprintf(`{"crv":"P-256","kty":"EC","x":"%s","y":"%s"}`, k.jwk["x"], k.jwk["y"])
	sum := sha256.Sum256([]byte(canon))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func (k *DPoPKey) String() string   { return "oauth.DPoPKey{jkt=" + k.Thumbprint() + "}" }
func (k *DPoPKey) GoString() string { return k.String() }

// Proof is a DPoP proof JWT (RFC 9449 §4.2) for one request: method and target (its
// query and fragment are left out of htu), a fresh jti, iat now, ath when accessToken is
// given (requests to the MCP server), nonce when the server supplied one.
func (k *DPoPKey) Proof(method, target, accessToken, nonce string, now time.Time) (string, error) {
	u, err := url.Parse(target)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("oauth: DPoP target is not an absolute URL: %q", target)
	}
	u.RawQuery, u.Fragment, u.RawFragment = "", "", ""
	claims := jwt.MapClaims{"jti": randomString(), "htm": method, "htu": u.String(), "iat": now.Unix()}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		claims["ath"] = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	if nonce != "" {
		claims["nonce"] = nonce
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, claims)
	tok.Header["typ"] = "dpop+jwt"
	tok.Header["jwk"] = k.jwk
	s, err := tok.SignedString(k.priv)
	if err != nil {
		return "", fmt.Errorf("oauth: signing DPoP proof: %w", err)
	}
	return s, nil
}

// DPoPNonce is the nonce a server asks the next proof to carry (RFC 9449 §8, §9): the
// DPoP-Nonce header of a use_dpop_nonce answer, "" when none.
func DPoPNonce(h http.Header) string { return h.Get("DPoP-Nonce") }

// isUseNonce reports a token endpoint's use_dpop_nonce answer.
func isUseNonce(resp *response) bool {
	if resp.status != http.StatusBadRequest || DPoPNonce(resp.header) == "" {
		return false
	}
	var body struct {
		Error string `json:"error"`
	}
	return json.Unmarshal(resp.body, &body) == nil && body.Error == "use_dpop_nonce"
}
