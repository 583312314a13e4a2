package config

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/tlsfiles"
)

// writeTLSFiles writes a self-signed certificate and its key as PEM, and returns their
// paths (the certificate serves as the CA bundle too).
func writeTLSFiles(t *testing.T) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "t"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return cert, key
}

func TestConfigServerTLS(t *testing.T) {
	cert, key := writeTLSFiles(t)
	base := "listen: 127.0.0.1:0\nstore: memory\nservers:\n  up:\n    type: streamable_http\n    url: https://up.example/mcp\n"
	cfg, ps, err := Parse([]byte(base + "    tls:\n      ca_file: " + cert + "\n      cert_file: " + cert +
		"\n      key_file: " + key + "\n      server_name: internal.example\n"))
	if err != nil {
		t.Fatalf("valid tls: %v", err)
	}
	for _, p := range ps {
		t.Errorf("valid tls: %s", p)
	}
	want := tlsfiles.Files{CAFile: cert, CertFile: cert, KeyFile: key, ServerName: "internal.example"}
	if got := cfg.Servers["up"].TLS.files(); got != want {
		t.Fatalf("tls = %+v, want %+v", got, want)
	}

	missing := filepath.Join(t.TempDir(), "missing.pem")
	for _, tc := range []struct {
		name, tls string
		warn      bool
		want      string
	}{
		{"missing CA file", "ca_file: " + missing, false, "ca_file: open " + missing},
		{"CA file that is a key", "ca_file: " + key, false, "ca_file " + key + ": no PEM certificate"},
		{"certificate without key", "cert_file: " + cert, false, "cert_file needs key_file"},
		{"key without certificate", "key_file: " + key, false, "key_file needs cert_file"},
		{"key that is a certificate", "cert_file: " + cert + ", key_file: " + cert, false, "key_file " + cert + ": no PEM PRIVATE KEY"},
		{"unknown key", "ca_files: " + cert, false, "ca_files"},
	} {
		_, ps, err := Parse([]byte(base + "    tls: {" + tc.tls + "}\n"))
		if err == nil {
			t.Errorf("%s: loaded", tc.name)
			continue
		}
		found := false
		for _, p := range ps {
			found = found || !p.Warning && strings.Contains(p.String(), tc.want) &&
				(tc.name == "unknown key" || p.Where == "servers.up.tls")
		}
		if !found {
			t.Errorf("%s: problems %v, want an error at servers.up.tls with %q", tc.name, ps, tc.want)
		}
	}

	// Where TLS does not apply, the setting is a warning.
	for _, def := range []string{
		"  std:\n    type: stdio\n    command: x\n    tls: {ca_file: " + cert + "}\n",
		"  std:\n    type: streamable_http\n    url: http://h/mcp\n    tls: {ca_file: " + cert + "}\n",
	} {
		_, ps, err := Parse([]byte(base + def))
		if err != nil {
			t.Errorf("%q: %v", def, err)
		}
		if len(ps) != 1 || !ps[0].Warning || ps[0].Where != "servers.std.tls" {
			t.Errorf("%q: problems %v, want one warning at servers.std.tls", def, ps)
		}
	}
}
