package upstream

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/peers"
)

// ---- a loopback proxy ------------------------------------------------------------------

// testProxy is a small HTTP proxy: absolute-form requests are forwarded, CONNECT opens a
// tunnel. Every upstream it is asked for is reached at 127.0.0.1 on the asked-for port,
// so tests can name upstreams by hosts that do not resolve (and that net/http's
// environment proxy settings would not exempt, as they do loopback addresses).
type testProxy struct {
	ln      net.Listener
	refuse  int  // answer CONNECT with this status instead of opening the tunnel
	oneShot bool // close the connection after each answer, without saying so (as tinyproxy)
	conns   atomic.Int32
	mu      sync.Mutex
	seen    []string // "METHOD target" of every request
	auth    []string // its Proxy-Authorization
	wg      sync.WaitGroup
	clients []net.Conn
}

func newTestProxy(t *testing.T) *testProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &testProxy{ln: ln}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.conns.Add(1)
			p.mu.Lock()
			p.clients = append(p.clients, c)
			p.mu.Unlock()
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				defer c.Close()
				p.serve(c)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		for _, c := range p.clients {
			c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *testProxy) url(user string) *url.URL {
	u := &url.URL{Scheme: "http", Host: p.ln.Addr().String()}
	if user != "" {
		u.User = url.UserPassword(user, "s3cret")
	}
	return u
}

func (p *testProxy) log() (seen, auth []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen...), append([]string(nil), p.auth...)
}

func loopbackFor(hostport string) string {
	_, port, _ := net.SplitHostPort(hostport)
	return net.JoinHostPort("127.0.0.1", port)
}

func (p *testProxy) serve(c net.Conn) {
	br := bufio.NewReader(c)
	var up net.Conn
	var upBR *bufio.Reader
	defer func() {
		if up != nil {
			up.Close()
		}
	}()
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		p.mu.Lock()
		p.seen = append(p.seen, req.Method+" "+req.RequestURI)
		p.auth = append(p.auth, req.Header.Get("Proxy-Authorization"))
		p.mu.Unlock()
		if req.Method == http.MethodConnect {
			if p.refuse != 0 {
				fmt.Fprintf(c, "HTTP/1.1 %d Refused\r\nContent-Length: 0\r\n\r\n", p.refuse)
				continue
			}
			tun, err := net.Dial("tcp", loopbackFor(req.RequestURI))
			if err != nil {
				io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
				return
			}
			defer tun.Close()
			io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
			go func() {
				_, _ = io.Copy(tun, br)
				tun.Close()
			}()
			_, _ = io.Copy(c, tun)
			return
		}
		if !req.URL.IsAbs() {
			io.WriteString(c, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
			return
		}
		if up == nil {
			if up, err = net.Dial("tcp", loopbackFor(req.URL.Host)); err != nil {
				return
			}
			upBR = bufio.NewReader(up)
		}
		req.Header.Del("Proxy-Authorization")
		if err := req.Write(up); err != nil {
			return
		}
		resp, err := http.ReadResponse(upBR, req)
		if err != nil {
			return
		}
		err = resp.Write(c)
		resp.Body.Close()
		if err != nil || p.oneShot {
			return
		}
	}
}

// ---- proxies ---------------------------------------------------------------------------

// An http upstream through a proxy: requests in absolute form with the proxy's
// credentials, on a kept-alive connection to the proxy.
func TestH1ThroughProxy(t *testing.T) {
	cs := newCountedServer(t, false, func(_ *countedServer, w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.Header.Get("Proxy-Authorization") != "" {
			w.WriteHeader(500) // the credentials are the proxy's, not the upstream's
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"host":%q,"body":%s}`, r.Host, b)
	})
	px := newTestProxy(t)
	_, port, _ := net.SplitHostPort(cs.Listener.Addr().String())
	target := "http://upstream.invalid:" + port + "/mcp?x=1"
	ep, err := newH1Endpoint(target, nil, h1Options{pool: &h1Pool{}, proxy: http.ProxyURL(px.url("gw"))})
	if err != nil {
		t.Fatal(err)
	}
	tr := &testTracker{}
	for i := 0; i < 2; i++ {
		mustReadBody(t, mustPost(t, ep, tr, fmt.Sprintf(`{"i":%d}`, i)), fmt.Sprintf(`{"host":"upstream.invalid:%s","body":{"i":%d}}`, port, i))
	}
	seen, auth := px.log()
	want := "POST " + target
	if len(seen) != 2 || seen[0] != want || seen[1] != want {
		t.Fatalf("proxy saw %q, want %q twice", seen, want)
	}
	wantAuth := "Basic " + base64.StdEncoding.EncodeToString([]byte("gw:s3cret"))
	if auth[0] != wantAuth || auth[1] != wantAuth {
		t.Fatalf("Proxy-Authorization %q, want %q", auth, wantAuth)
	}
	if n := px.conns.Load(); n != 1 {
		t.Fatalf("%d connections to the proxy for two posts, want 1 (kept alive)", n)
	}
	if !strings.Contains(ep.key, " via http://"+px.ln.Addr().String()) || strings.Contains(ep.key, "s3cret") {
		t.Fatalf("pool key %q: want the proxy in it and the password not", ep.key)
	}
}

// An https upstream through a proxy: a CONNECT tunnel, then TLS with the upstream.
func TestH1ThroughProxyTunnel(t *testing.T) {
	cs := newCountedServer(t, true, func(_ *countedServer, w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	})
	px := newTestProxy(t)
	_, port, _ := net.SplitHostPort(cs.Listener.Addr().String())
	roots := x509.NewCertPool()
	roots.AddCert(cs.Certificate())
	// httptest's certificate names example.com; the URL's host is checked as that name.
	conf := &tls.Config{RootCAs: roots, ServerName: "example.com"}
	ep, err := newH1Endpoint("https://upstream.invalid:"+port+"/mcp", nil,
		h1Options{tls: conf, tlsID: "t", pool: &h1Pool{}, proxy: http.ProxyURL(px.url("gw"))})
	if err != nil {
		t.Fatal(err)
	}
	tr := &testTracker{}
	for i := 0; i < 2; i++ {
		r := mustPost(t, ep, tr, `{"tunnel":true}`)
		if _, ok := r.c.nc.(*tls.Conn); !ok {
			t.Fatalf("connection is %T, want TLS in the tunnel", r.c.nc)
		}
		mustReadBody(t, r, `{"tunnel":true}`)
	}
	seen, auth := px.log()
	if len(seen) != 1 || seen[0] != "CONNECT upstream.invalid:"+port {
		t.Fatalf("proxy saw %q, want one CONNECT upstream.invalid:%s", seen, port)
	}
	if !strings.HasPrefix(auth[0], "Basic ") {
		t.Fatalf("CONNECT without the proxy's credentials: %q", auth[0])
	}
	if n := cs.conns.Load(); n != 1 {
		t.Fatalf("upstream accepted %d connections, want 1 (the tunnel kept alive)", n)
	}
	if conf.ServerName != "example.com" || conf.NextProtos != nil {
		t.Fatal("the given TLS configuration was changed")
	}
}

// A proxy that closes the connection after each answer without "Connection: close": the
// next request does not go out on the closed connection (through a proxy every reuse is
// peeked, not only after the pool's checkAfter).
func TestH1ProxyClosingAfterEachAnswer(t *testing.T) {
	cs := newCountedServer(t, false, func(_ *countedServer, w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`)
	})
	px := newTestProxy(t)
	px.oneShot = true
	ep, err := newH1Endpoint(cs.URL+"/mcp", nil, h1Options{pool: &h1Pool{checkAfter: time.Hour}, proxy: http.ProxyURL(px.url(""))})
	if err != nil {
		t.Fatal(err)
	}
	tr := &testTracker{}
	for i := 0; i < 3; i++ {
		mustReadBody(t, mustPost(t, ep, tr, "{}"), `{"ok":true}`)
		waitPeerActed(t, ep) // the proxy's FIN arrived
	}
	if n := px.conns.Load(); n != 3 {
		t.Fatalf("%d connections to the proxy, want 3", n)
	}
}

func TestH1ProxyRefusesTunnel(t *testing.T) {
	px := newTestProxy(t)
	px.refuse = 407
	ep, err := newH1Endpoint("https://upstream.invalid:1/mcp", nil, h1Options{pool: &h1Pool{}, proxy: http.ProxyURL(px.url(""))})
	if err != nil {
		t.Fatal(err)
	}
	tr := &testTracker{}
	r, err := doPost(testCtx(t), ep, tr, "", "", []byte("{}"), "")
	if err == nil {
		r.fail()
		t.Fatal("post through a proxy that refuses the tunnel succeeded")
	}
	if !strings.Contains(err.Error(), "407") || !strings.Contains(err.Error(), "upstream.invalid:1") {
		t.Fatalf("error %q: want the proxy's status and the upstream named", err)
	}
	if a, _ := tr.counts(); a != 0 || idleCount(ep) != 0 {
		t.Fatal("a refused tunnel was tracked or pooled")
	}
}

func TestH1ProxyBounded(t *testing.T) {
	// A proxy that accepts and says nothing: the exchange's deadline ends the dial.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	ep, err := newH1Endpoint("https://upstream.invalid/mcp", nil,
		h1Options{pool: &h1Pool{}, proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: ln.Addr().String()})})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := doPost(ctx, ep, &testTracker{}, "", "", []byte("{}"), ""); err == nil {
		t.Fatal("post through a silent proxy succeeded")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("the silent proxy held the post %v past its deadline of 200ms", d)
	}
}

func TestH1ProxySettings(t *testing.T) {
	for _, tc := range []struct {
		url, proxy, wantErr string
	}{
		{"http://h/", "socks5://127.0.0.1:1080", "only http and https proxies"},
		{"http://h/", "http://:8080", "has no host"},
	} {
		pu, _ := url.Parse(tc.proxy)
		_, err := newH1Endpoint(tc.url, nil, h1Options{proxy: http.ProxyURL(pu)})
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("proxy %s: %v, want an error with %q", tc.proxy, err, tc.wantErr)
		}
	}
	ep, err := newH1Endpoint("https://h/", nil, h1Options{proxy: http.ProxyURL(&url.URL{Scheme: "https", Host: "px"})})
	if err != nil || ep.proxyAddr != "px:443" || ep.proxyTLS == nil || !ep.tunnel {
		t.Fatalf("https proxy: %+v, %v", ep, err)
	}
	if _, err := newH1Endpoint("http://h/", map[string]string{"Proxy-Authorization": "x"}, h1Options{proxy: noProxy}); err == nil {
		t.Fatal("a configured Proxy-Authorization header was accepted")
	}
}

// Both clients take their proxy from HTTPS_PROXY, HTTP_PROXY and NO_PROXY. net/http reads
// the environment once per process, so the check runs in a child process of its own.
func TestProxyFromEnvironment(t *testing.T) {
	cs := newCountedServer(t, false, func(_ *countedServer, w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`)
	})
	px := newTestProxy(t)
	_, port, _ := net.SplitHostPort(cs.Listener.Addr().String())
	target := "http://upstream.invalid:" + port + "/mcp"
	cmd := exec.Command(os.Args[0], "-test.run=^TestProxyFromEnvironmentChild$", "-test.v")
	cmd.Env = append(os.Environ(), "MCPGW_TEST_PROXY_CHILD="+target,
		"HTTP_PROXY="+px.url("").String(), "HTTPS_PROXY="+px.url("").String(), "NO_PROXY=direct.invalid",
		"http_proxy=", "https_proxy=", "no_proxy=", "REQUEST_METHOD=")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestProxyFromEnvironmentChild") {
		t.Fatalf("child: %v\n%s", err, out)
	}
	seen, _ := px.log()
	if strings.Join(seen, "\n") != "POST "+target+"\nGET "+target {
		t.Fatalf("proxy saw %q, want the h1 POST and the net/http GET", seen)
	}
}

func TestProxyFromEnvironmentChild(t *testing.T) {
	td := NewDialer()
	target := os.Getenv("MCPGW_TEST_PROXY_CHILD")
	if target == "" {
		t.Skip("run by TestProxyFromEnvironment")
	}
	proxy, _ := url.Parse(os.Getenv("HTTP_PROXY"))
	ep, err := newH1Endpoint(target, nil, h1Options{pool: &h1Pool{}})
	if err != nil {
		t.Fatal(err)
	}
	if ep.proxyAddr != proxy.Host || ep.tunnel {
		t.Fatalf("HTTP_PROXY: proxyAddr %q tunnel %v, want %s without a tunnel", ep.proxyAddr, ep.tunnel, proxy.Host)
	}
	mustReadBody(t, mustPost(t, ep, &testTracker{}, "{}"), `{"ok":true}`)
	resp, err := td.HTTPClient().Get(target)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ep, _ := newH1Endpoint("https://upstream.invalid/mcp", nil, h1Options{}); ep.proxyAddr != proxy.Host || !ep.tunnel {
		t.Fatalf("HTTPS_PROXY: proxyAddr %q tunnel %v", ep.proxyAddr, ep.tunnel)
	}
	for _, u := range []string{"http://direct.invalid/", "https://direct.invalid/", "http://127.0.0.1:1/", "http://localhost:1/"} {
		if ep, _ := newH1Endpoint(u, nil, h1Options{}); ep.proxyAddr != "" {
			t.Errorf("%s: through proxy %s despite NO_PROXY or loopback", u, ep.proxyAddr)
		}
	}
	if p, _ := td.profileFor(TLSFiles{ServerName: "x"}); p.http.Transport.(*http.Transport).Proxy == nil {
		t.Error("the net/http client of a TLS profile has no proxy")
	}
}

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
	ep, err := newH1Endpoint(url, nil, h1Options{tls: prof.conf, tlsID: prof.id, pool: &h1Pool{}, proxy: noProxy})
	if err != nil {
		t.Fatal(err)
	}
	if ep.tlsConf.ServerName != "upstream.test" || !strings.Contains(ep.key, prof.id) {
		t.Fatalf("server name %q, pool key %q", ep.tlsConf.ServerName, ep.key)
	}
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
			ep, err := newH1Endpoint(url, nil, h1Options{tls: p.conf, tlsID: p.id, pool: &h1Pool{}, proxy: noProxy})
			if err != nil {
				t.Fatal(err)
			}
			r, err := doPost(testCtx(t), ep, &testTracker{}, "", "", []byte("{}"), "")
			if err == nil {
				_, err = r.readBody(1 << 20)
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
	var tr transport = newSSE("s", "https://h/", nil, newUpstreamHTTPClient(nil), slog.New(slog.DiscardHandler))
	if err := td.useTLS(tr, TLSFiles{CAFile: ca}); err != nil || tr.(*sseTransport).client != p2.http {
		t.Fatalf("legacy SSE transport: %v, client not the profile's", err)
	}
	if err := td.useTLS(tr, TLSFiles{CAFile: filepath.Join(pki.dir, "missing")}); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("useTLS with a missing file: %v", err)
	}
}

// The same through tinyproxy (Debian's; scripts/peers.sh installs it), when it is there:
// absolute-form POSTs and a CONNECT tunnel, with Basic credentials, through a real proxy.
func TestH1ThroughTinyproxy(t *testing.T) {
	bin := peers.Command(t, "tinyproxy")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, port, _ := net.SplitHostPort(addr)
	dir := t.TempDir()
	conf := filepath.Join(dir, "tinyproxy.conf")
	if err := os.WriteFile(conf, []byte("Port "+port+"\nListen 127.0.0.1\nTimeout 30\nMaxClients 20\nAllow 127.0.0.1\n"+
		"BasicAuth gw s3cret\nLogLevel Warning\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-d", "-c", conf)
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	for deadline := time.Now().Add(5 * time.Second); ; {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("tinyproxy did not listen on %s: %s", addr, logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	handler := func(_ *countedServer, w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"proxied":%s}`, b)
	}
	plain, secure := newCountedServer(t, false, handler), newCountedServer(t, true, handler)
	roots := x509.NewCertPool()
	roots.AddCert(secure.Certificate())
	proxy := &url.URL{Scheme: "http", Host: addr, User: url.UserPassword("gw", "s3cret")}
	for _, tc := range []struct {
		name, url string
		closes    bool // tinyproxy closes the connection after each answer
	}{{"http, absolute form", plain.URL, true}, {"https, CONNECT", secure.URL, false}} {
		t.Run(tc.name, func(t *testing.T) {
			ep, err := newH1Endpoint(tc.url+"/mcp", nil, h1Options{tls: &tls.Config{RootCAs: roots}, pool: &h1Pool{}, proxy: http.ProxyURL(proxy)})
			if err != nil {
				t.Fatal(err)
			}
			tr := &testTracker{}
			for i := 0; i < 3; i++ {
				mustReadBody(t, mustPost(t, ep, tr, fmt.Sprintf(`{"i":%d}`, i)), fmt.Sprintf(`{"proxied":{"i":%d}}`, i))
				// In absolute form tinyproxy closes after each answer without saying so; a
				// request sent before its FIN arrives fails (net/http's too): wait for it.
				// A CONNECT tunnel stays open.
				if tc.closes {
					waitPeerActed(t, ep)
				}
			}
		})
	}
	wrong := &url.URL{Scheme: "http", Host: addr, User: url.UserPassword("gw", "wrong")}
	ep, err := newH1Endpoint(secure.URL+"/mcp", nil, h1Options{tls: &tls.Config{RootCAs: roots}, pool: &h1Pool{}, proxy: http.ProxyURL(wrong)})
	if err != nil {
		t.Fatal(err)
	}
	// tinyproxy answers 401 rather than 407.
	if r, err := doPost(testCtx(t), ep, &testTracker{}, "", "", []byte("{}"), ""); err == nil || !strings.Contains(err.Error(), "refused a tunnel") {
		if r != nil {
			r.fail()
		}
		t.Fatalf("CONNECT with wrong credentials: %v, want the proxy's refusal", err)
	}
}
