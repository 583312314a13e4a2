package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// assertionLifetime is how long a client assertion is valid: long enough for one request.
const assertionLifetime = 5 * time.Minute

// clientAssertion is a private_key_jwt client assertion (RFC 7523 §2.2, §3): issuer and
// subject the client_id, audience the authorization server's issuer identifier, a unique
// jti and a short life.
func clientAssertion(cl ClientInfo, audience string, now time.Time) (string, error) {
	if cl.SigningKey == nil {
		return "", fmt.Errorf("oauth: private_key_jwt needs a signing key")
	}
	alg := cl.SigningAlg
	if alg == "" {
		alg = algFor(cl.SigningKey)
	}
	method := jwt.GetSigningMethod(alg)
	if method == nil || alg == "none" || alg[0] == 'H' {
		return "", fmt.Errorf("oauth: unsupported client assertion algorithm %q", alg)
	}
	tok := jwt.NewWithClaims(method, jwt.RegisteredClaims{
		Issuer:    cl.ID,
		Subject:   cl.ID,
		Audience:  jwt.ClaimStrings{audience},
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(now.Add(assertionLifetime)),
		ID:        randomString(),
	})
	if cl.KeyID != "" {
		tok.Header["kid"] = cl.KeyID
	}
	s, err := tok.SignedString(cl.SigningKey)
	if err != nil {
		return "", fmt.Errorf("oauth: signing client assertion: %w", err)
	}
	return s, nil
}

// algFor is the usual JWS algorithm of a key.
func algFor(k crypto.Signer) string {
	switch key := k.(type) {
	case *ecdsa.PrivateKey:
		switch key.Curve {
		case elliptic.P384():
			return "ES384"
		case elliptic.P521():
			return "ES512"
		}
		return "ES256"
	case *rsa.PrivateKey:
		return "RS256"
	case ed25519.PrivateKey:
		return "EdDSA"
	}
	return ""
}

// ParsePrivateKeyPEM reads a PEM private key (PKCS #8, SEC 1 EC or PKCS #1 RSA) for
// ClientInfo.SigningKey.
func ParsePrivateKeyPEM(data []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("oauth: no PEM block in private key")
	}
	var key any
	var err error
	switch block.Type {
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return nil, fmt.Errorf("oauth: parsing private key: %w", err)
	}
	s, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("oauth: private key of type %T cannot sign", key)
	}
	return s, nil
}
