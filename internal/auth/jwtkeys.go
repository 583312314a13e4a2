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

	"github.com/mcpgw/mcpgw/config"
)

// supportedAlgs are the algorithms a key may pin.
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
