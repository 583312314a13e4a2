package tlsfiles

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
)

// selfSigned writes a self-signed certificate and its key as PEM into dir.
func selfSigned(t *testing.T, dir, name string) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, DNSNames: []string{name}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, name+"-cert.pem"), filepath.Join(dir, name+"-key.pem")
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return cert, key
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	cert, key := selfSigned(t, dir, "a.test")
	missing := filepath.Join(dir, "missing.pem")
	for _, tc := range []struct {
		name  string
		files Files
		want  string // "": loads
	}{
		{"nothing", Files{}, ""},
		{"everything", Files{CAFile: cert, CertFile: cert, KeyFile: key, ServerName: "x"}, ""},
		{"missing CA file", Files{CAFile: missing}, "ca_file: open " + missing},
		{"CA file that is a key", Files{CAFile: key}, "ca_file " + key + ": no PEM certificate"},
		{"certificate without key", Files{CertFile: cert}, "cert_file needs key_file"},
		{"key without certificate", Files{KeyFile: key}, "key_file needs cert_file"},
		{"key that is a certificate", Files{CertFile: cert, KeyFile: cert}, "key_file " + cert + ": no PEM PRIVATE KEY"},
	} {
		conf, err := tc.files.Load()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		case tc.want == "" && conf.ServerName != tc.files.ServerName:
			t.Errorf("%s: server name %q, want %q", tc.name, conf.ServerName, tc.files.ServerName)
		case tc.want == "" && tc.files.CertFile != "" && len(conf.Certificates) != 1:
			t.Errorf("%s: no client certificate in the configuration", tc.name)
		}
	}
}

// The digest tells settings apart, and the same settings over changed files.
func TestDigest(t *testing.T) {
	dir := t.TempDir()
	cert, key := selfSigned(t, dir, "a.test")
	digest := func(f Files) string {
		t.Helper()
		_, d, err := f.LoadDigest()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	f := Files{CAFile: cert, CertFile: cert, KeyFile: key}
	first := digest(f)
	if again := digest(f); again != first {
		t.Fatalf("same files, digests %s and %s", first, again)
	}
	if named := digest(Files{CAFile: cert, CertFile: cert, KeyFile: key, ServerName: "a.test"}); named == first {
		t.Fatal("a server name did not change the digest")
	}
	selfSigned(t, dir, "a.test") // new contents under the same names
	if changed := digest(f); changed == first {
		t.Fatal("changed files kept the digest")
	}
}
