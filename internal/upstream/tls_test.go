package upstream

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/httpclient"
	"github.com/mcpgw/mcpgw/internal/httpclient/httpclienttest"
)

// ---- TLS settings ----------------------------------------------------------------------

// testPKI is a CA, a server certificate for upstream.test (and 127.0.0.1) and a client
// certificate it issued, written as PEM files.
type testPKI struct {
	dir                         string
	caFile, certFile, keyFile   string
	serverCert                  tls.Certificate
	caPool                      *x509.CertPool
	otherCertFile, otherKeyFile string // a client certificate from another CA
	otherCAFile                 string
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	p := &testPKI{dir: t.TempDir()}
	ca, caKey := newCA(t, "mcpgw test CA")
	other, otherKey := newCA(t, "another CA")
	p.caPool = x509.NewCertPool()
	p.caPool.AddCert(ca)

	srvDER, srvKey := issue(t, ca, caKey, &x509.Certificate{
		Subject: pkix.Name{CommonName: "upstream.test"}, DNSNames: []string{"upstream.test"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	p.serverCert = tls.Certificate{Certificate: [][]byte{srvDER}, PrivateKey: srvKey}
	cliDER, cliKey := issue(t, ca, caKey, &x509.Certificate{
		Subject: pkix.Name{CommonName: "mcpgw-client"}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	othDER, othKey := issue(t, other, otherKey, &x509.Certificate{
		Subject: pkix.Name{CommonName: "stranger"}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	p.caFile = p.writePEM(t, "ca.pem", "CERTIFICATE", ca.Raw)
	p.otherCAFile = p.writePEM(t, "other-ca.pem", "CERTIFICATE", other.Raw)
	p.certFile = p.writePEM(t, "client.pem", "CERTIFICATE", cliDER)
	p.keyFile = p.writeKey(t, "client-key.pem", cliKey)
	p.otherCertFile = p.writePEM(t, "stranger.pem", "CERTIFICATE", othDER)
	p.otherKeyFile = p.writeKey(t, "stranger-key.pem", othKey)
	return p
}

func newCA(t *testing.T, name string) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

var serial atomic.Int64

func issue(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, tmpl *x509.Certificate) ([]byte, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl.SerialNumber = big.NewInt(100 + serial.Add(1))
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return der, key
}

func (p *testPKI) writePEM(t *testing.T, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func (p *testPKI) writeKey(t *testing.T, name string, key *ecdsa.PrivateKey) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return p.writePEM(t, name, "PRIVATE KEY", der)
}

// mtlsServer is an https server that requires a client certificate from pki's CA, and
// records the client certificate's name for each request (method and name).
func mtlsServer(t *testing.T, pki *testPKI, h http.HandlerFunc) (*httptest.Server, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := "-"
		if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
			name = r.TLS.PeerCertificates[0].Subject.CommonName
		}
		mu.Lock()
		seen = append(seen, r.Method+" "+name)
		mu.Unlock()
		h(w, r)
	}))
	srv.TLS = &tls.Config{
		Certificates: []tls.Certificate{pki.serverCert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    pki.caPool,
	}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

// The h1 client presents the configured certificate and checks the server with the
// configured CA and name; the net/http client of the same settings does too.
func TestTLSClientCertificate(t *testing.T) {
	td := NewDialer()
	pki := newTestPKI(t)
	srv, seen := mtlsServer(t, pki, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`)
	})
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	// By name: the server name is checked as given (the URL's host is 127.0.0.1 here,
	// which the certificate also names; server_name picks upstream.test).
	files := TLSFiles{CAFile: pki.caFile, CertFile: pki.certFile, KeyFile: pki.keyFile, ServerName: "upstream.test"}
	prof, err := td.profileFor(files)
	if err != nil {
		t.Fatal(err)
	}
	url := "https://127.0.0.1:" + port + "/mcp"
	ep := newTestEndpoint(t, url, httpclient.Options{TLS: prof.conf, TLSID: prof.id})
	tr := &testTracker{}
	for i := 0; i < 2; i++ {
		mustReadBody(t, mustPost(t, ep, tr, "{}"), `{"ok":true}`)
	}
	resp, err := prof.http.Get(url)
	if err != nil {
		t.Fatalf("net/http client of the profile: %v", err)
	}
	resp.Body.Close()
	if got := strings.Join(seen(), ", "); got != "POST mcpgw-client, POST mcpgw-client, GET mcpgw-client" {
		t.Fatalf("server saw %s", got)
	}
	if p2, _ := td.profileFor(files); p2 != prof {
		t.Fatal("the same settings made a second profile (and a second net/http client)")
	}

	// What fails, and how.
	for _, tc := range []struct {
		name  string
		files TLSFiles
		want  string
	}{
		{"no client certificate", TLSFiles{CAFile: pki.caFile}, "certificate"},
		{"a certificate from another CA", TLSFiles{CAFile: pki.caFile, CertFile: pki.otherCertFile, KeyFile: pki.otherKeyFile}, "certificate"},
		{"the system's roots", TLSFiles{CertFile: pki.certFile, KeyFile: pki.keyFile}, "certificate signed by unknown authority"},
		{"another CA", TLSFiles{CAFile: pki.otherCAFile, CertFile: pki.certFile, KeyFile: pki.keyFile}, "certificate signed by unknown authority"},
		{"a name the certificate lacks", TLSFiles{CAFile: pki.caFile, CertFile: pki.certFile, KeyFile: pki.keyFile, ServerName: "other.test"}, "other.test"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := td.profileFor(tc.files)
			if err != nil {
				t.Fatal(err)
			}
			ep := newTestEndpoint(t, url, httpclient.Options{TLS: p.conf, TLSID: p.id})
			r, err := doPost(httpclienttest.Ctx(t), ep, &testTracker{}, []byte("{}"))
			if err == nil {
				_, err = r.ReadBody(1 << 20)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("h1 post: %v, want an error with %q", err, tc.want)
			}
			resp, err := p.http.Get(url)
			if err == nil {
				resp.Body.Close()
				t.Fatal("net/http GET succeeded")
			}
		})
	}
}

// Dial with Options.TLS: initialize and the notification go through the h1 client, the
// GET stream and DELETE through the profile's net/http client, all with the certificate.
func TestDialWithTLSFiles(t *testing.T) {
	pki := newTestPKI(t)
	srv, seen := mtlsServer(t, pki, func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost:
			b, _ := io.ReadAll(r.Body)
			if !strings.Contains(string(b), `"method":"initialize"`) {
				w.WriteHeader(202)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Mcp-Session-Id", "s1")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"t","version":"1"}}}`)
		case http.MethodGet:
			w.WriteHeader(405)
		default:
			w.WriteHeader(200)
		}
	})
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	files := TLSFiles{CAFile: pki.caFile, CertFile: pki.certFile, KeyFile: pki.keyFile, ServerName: "upstream.test"}
	c, err := NewDialer().Dial(context.Background(), Options{Name: "up", Transport: "streamable_http",
		URL: "https://127.0.0.1:" + port + "/mcp", TLS: files, ConnectTimeout: 5 * time.Second,
		Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for !strings.Contains(strings.Join(seen(), ","), "GET") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	c.Close()
	// The GET stream and the initialized notification go out at the same time: their
	// order is not fixed; that each came with the client certificate is.
	all := seen()
	if len(all) == 4 && all[2] == "POST mcpgw-client" && all[1] == "GET mcpgw-client" {
		all[1], all[2] = all[2], all[1]
	}
	got := strings.Join(all, ", ")
	if got != "POST mcpgw-client, POST mcpgw-client, GET mcpgw-client, DELETE mcpgw-client" {
		t.Fatalf("server saw %s", got)
	}

	// Files that do not load fail the dial, naming the key.
	_, err = NewDialer().Dial(context.Background(), Options{Name: "up", Transport: "streamable_http",
		URL: "https://127.0.0.1:" + port + "/mcp", TLS: TLSFiles{CAFile: filepath.Join(pki.dir, "missing.pem")},
		Log: slog.New(slog.DiscardHandler)})
	if err == nil || !strings.Contains(err.Error(), "ca_file") {
		t.Fatalf("dial with a missing ca_file: %v", err)
	}
}

func TestTLSFilesLoad(t *testing.T) {
	pki := newTestPKI(t)
	garbage := filepath.Join(pki.dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not PEM at all\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	badCert := pki.writePEM(t, "bad-cert.pem", "CERTIFICATE", []byte("not DER"))
	missing := filepath.Join(pki.dir, "missing.pem")
	for _, tc := range []struct {
		name  string
		files TLSFiles
		want  string // "" : loads
	}{
		{"nothing", TLSFiles{}, ""},
		{"CA only", TLSFiles{CAFile: pki.caFile}, ""},
		{"certificate and key", TLSFiles{CertFile: pki.certFile, KeyFile: pki.keyFile}, ""},
		{"server name only", TLSFiles{ServerName: "x"}, ""},
		{"missing CA file", TLSFiles{CAFile: missing}, "ca_file: open " + missing},
		{"CA file not PEM", TLSFiles{CAFile: garbage}, "ca_file " + garbage + ": no PEM certificate"},
		{"CA certificate that does not parse", TLSFiles{CAFile: badCert}, "ca_file " + badCert + ": certificate 1"},
		{"certificate without key", TLSFiles{CertFile: pki.certFile}, "cert_file needs key_file"},
		{"key without certificate", TLSFiles{KeyFile: pki.keyFile}, "key_file needs cert_file"},
		{"missing certificate file", TLSFiles{CertFile: missing, KeyFile: pki.keyFile}, "cert_file: open"},
		{"missing key file", TLSFiles{CertFile: pki.certFile, KeyFile: missing}, "key_file: open"},
		{"key file not PEM", TLSFiles{CertFile: pki.certFile, KeyFile: garbage}, "key_file " + garbage + ": no PEM PRIVATE KEY"},
		{"certificate file holding a key", TLSFiles{CertFile: pki.keyFile, KeyFile: pki.keyFile}, "cert_file " + pki.keyFile + ": no PEM CERTIFICATE"},
		{"certificate and key that do not match", TLSFiles{CertFile: pki.otherCertFile, KeyFile: pki.keyFile}, "cert_file " + pki.otherCertFile + " and key_file"},
	} {
		conf, err := tc.files.Load()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		case tc.want == "" && tc.files.CertFile != "" && len(conf.Certificates) != 1:
			t.Errorf("%s: no certificate in the configuration", tc.name)
		}
	}
}

// A profile follows its files: changed contents make a new one on the next dial.
func TestTLSProfileFollowsFiles(t *testing.T) {
	td := NewDialer()
	pki := newTestPKI(t)
	ca := filepath.Join(pki.dir, "rotating-ca.pem")
	copyFile := func(from string) {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(ca, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(pki.caFile)
	p1, err := td.profileFor(TLSFiles{CAFile: ca})
	if err != nil {
		t.Fatal(err)
	}
	copyFile(pki.otherCAFile)
	p2, err := td.profileFor(TLSFiles{CAFile: ca})
	if err != nil {
		t.Fatal(err)
	}
	if p1 == p2 || p1.id == p2.id || p1.http == p2.http {
		t.Fatal("a changed CA file kept the old profile")
	}
	if p, _ := td.profileFor(TLSFiles{}); p.http != td.HTTPClient() || p.conf != nil {
		t.Fatal("no settings: want the Dialer's HTTPClient and the default TLS configuration")
	}
	if td.HTTPClient().Transport.(*http.Transport).Proxy == nil {
		t.Fatal("the Dialer's HTTPClient has no proxy from the environment")
	}
	if p2.http.Transport.(*http.Transport).Proxy == nil {
		t.Fatal("the net/http client of a TLS profile has no proxy from the environment")
	}
	var tr transport = newSSE("s", "https://h/", nil, newUpstreamHTTPClient(nil), slog.New(slog.DiscardHandler))
	if err := td.useTLS(tr, TLSFiles{CAFile: ca}); err != nil || tr.(*sseTransport).client != p2.http {
		t.Fatalf("legacy SSE transport: %v, client not the profile's", err)
	}
	if err := td.useTLS(tr, TLSFiles{CAFile: filepath.Join(pki.dir, "missing")}); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("useTLS with a missing file: %v", err)
	}
}
