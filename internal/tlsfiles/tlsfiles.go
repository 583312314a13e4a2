// Package tlsfiles reads the TLS settings an upstream names in the config (CA bundle,
// client certificate and key, server name) into a tls.Config, with a digest of them.
package tlsfiles

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
)

// Files are an upstream's TLS settings as the config names them (servers.<name>.tls,
// docs/config.md): a CA bundle to check the server's certificate with instead of the
// system's roots, a client certificate and its key to present, and the name the server's
// certificate must carry when it is not the URL's host. The zero value is the defaults.
type Files struct {
	CAFile     string
	CertFile   string
	KeyFile    string
	ServerName string
}

// IsZero reports whether f holds no settings.
func (f Files) IsZero() bool { return f == Files{} }

// Load reads and checks the files and returns the configuration they make. An error
// names the key (ca_file, cert_file, key_file) at fault.
func (f Files) Load() (*tls.Config, error) {
	conf, _, err := f.LoadDigest()
	return conf, err
}

// LoadDigest is Load, and a digest of the settings and the files' contents, which tells
// two loads of changed files apart (and two sets of settings).
func (f Files) LoadDigest() (*tls.Config, string, error) {
	h := sha256.New()
	for _, s := range []string{f.CAFile, f.CertFile, f.KeyFile, f.ServerName} {
		fmt.Fprintf(h, "%d:%s", len(s), s)
	}
	read := func(key, path string) ([]byte, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		fmt.Fprintf(h, "%d:", len(b))
		h.Write(b)
		return b, nil
	}
	conf := &tls.Config{ServerName: f.ServerName}
	if f.CAFile != "" {
		b, err := read("ca_file", f.CAFile)
		if err != nil {
			return nil, "", err
		}
		roots, err := parseCABundle(b)
		if err != nil {
			return nil, "", fmt.Errorf("ca_file %s: %w", f.CAFile, err)
		}
		conf.RootCAs = roots
	}
	switch {
	case f.CertFile != "" && f.KeyFile != "":
		certPEM, err := read("cert_file", f.CertFile)
		if err != nil {
			return nil, "", err
		}
		keyPEM, err := read("key_file", f.KeyFile)
		if err != nil {
			return nil, "", err
		}
		if err := hasPEM(certPEM, "CERTIFICATE"); err != nil {
			return nil, "", fmt.Errorf("cert_file %s: %w", f.CertFile, err)
		}
		if err := hasPEM(keyPEM, "PRIVATE KEY"); err != nil {
			return nil, "", fmt.Errorf("key_file %s: %w", f.KeyFile, err)
		}
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, "", fmt.Errorf("cert_file %s and key_file %s: %w", f.CertFile, f.KeyFile, err)
		}
		conf.Certificates = []tls.Certificate{cert}
	case f.CertFile != "":
		return nil, "", errors.New("cert_file needs key_file as well")
	case f.KeyFile != "":
		return nil, "", errors.New("key_file needs cert_file as well")
	}
	return conf, hex.EncodeToString(h.Sum(nil)[:12]), nil
}

// parseCABundle reads PEM certificates, every one of which must parse.
func parseCABundle(b []byte) (*x509.CertPool, error) {
	roots := x509.NewCertPool()
	n := 0
	for {
		var block *pem.Block
		block, b = pem.Decode(b)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("certificate %d: %w", n+1, err)
		}
		roots.AddCert(cert)
		n++
	}
	if n == 0 {
		return nil, errors.New("no PEM certificate in it")
	}
	return roots, nil
}

// hasPEM says what is wrong when b holds no PEM block whose type ends in suffix.
func hasPEM(b []byte, suffix string) error {
	for {
		var block *pem.Block
		block, b = pem.Decode(b)
		if block == nil {
			return fmt.Errorf("no PEM %s in it", suffix)
		}
		if len(block.Type) >= len(suffix) && block.Type[len(block.Type)-len(suffix):] == suffix {
			return nil
		}
	}
}
