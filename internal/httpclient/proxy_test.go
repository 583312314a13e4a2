package httpclient

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/httpclient/httpclienttest"
	"github.com/mcpgw/mcpgw/internal/peers"
)

// ---- a loopback proxy ------------------------------------------------------------------

// testProxy is a small HTTP Proxy: absolute-form requests are forwarded, CONNECT opens a
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

// An http upstream through a Proxy: requests in absolute form with the proxy's
// credentials, on a kept-alive connection to the proxy.
func TestH1ThroughProxy(t *testing.T) {
	cs := httpclienttest.NewCountedServer(t, false, func(_ *httpclienttest.CountedServer, w http.ResponseWriter, r *http.Request) {
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
	ep, err := NewEndpoint(target, nil, Options{Pool: &Pool{}, Proxy: http.ProxyURL(px.url("gw"))})
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

// An https upstream through a Proxy: a CONNECT tunnel, then TLS with the upstream.
func TestH1ThroughProxyTunnel(t *testing.T) {
	cs := httpclienttest.NewCountedServer(t, true, func(_ *httpclienttest.CountedServer, w http.ResponseWriter, r *http.Request) {
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
	ep, err := NewEndpoint("https://upstream.invalid:"+port+"/mcp", nil,
		Options{TLS: conf, TLSID: "t", Pool: &Pool{}, Proxy: http.ProxyURL(px.url("gw"))})
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
	if n := cs.Conns.Load(); n != 1 {
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
	cs := httpclienttest.NewCountedServer(t, false, func(_ *httpclienttest.CountedServer, w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`)
	})
	px := newTestProxy(t)
	px.oneShot = true
	ep, err := NewEndpoint(cs.URL+"/mcp", nil, Options{Pool: &Pool{CheckAfter: time.Hour}, Proxy: http.ProxyURL(px.url(""))})
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
	ep, err := NewEndpoint("https://upstream.invalid:1/mcp", nil, Options{Pool: &Pool{}, Proxy: http.ProxyURL(px.url(""))})
	if err != nil {
		t.Fatal(err)
	}
	tr := &testTracker{}
	r, err := doPost(httpclienttest.Ctx(t), ep, tr, []byte("{}"))
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
	ep, err := NewEndpoint("https://upstream.invalid/mcp", nil,
		Options{Pool: &Pool{}, Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: ln.Addr().String()})})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := doPost(ctx, ep, &testTracker{}, []byte("{}")); err == nil {
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
		_, err := NewEndpoint(tc.url, nil, Options{Proxy: http.ProxyURL(pu)})
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("proxy %s: %v, want an error with %q", tc.proxy, err, tc.wantErr)
		}
	}
	ep, err := NewEndpoint("https://h/", nil, Options{Proxy: http.ProxyURL(&url.URL{Scheme: "https", Host: "px"})})
	if err != nil || ep.proxyAddr != "px:443" || ep.proxyTLS == nil || !ep.tunnel {
		t.Fatalf("https Proxy: %+v, %v", ep, err)
	}
	if _, err := NewEndpoint("http://h/", map[string]string{"Proxy-Authorization": "x"}, Options{Proxy: httpclienttest.NoProxy}); err == nil {
		t.Fatal("a configured Proxy-Authorization header was accepted")
	}
}

// The client takes its proxy from HTTPS_PROXY, HTTP_PROXY and NO_PROXY. net/http reads
// the environment once per process, so the check runs in a child process of its own.
func TestProxyFromEnvironment(t *testing.T) {
	cs := httpclienttest.NewCountedServer(t, false, func(_ *httpclienttest.CountedServer, w http.ResponseWriter, r *http.Request) {
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
	target := os.Getenv("MCPGW_TEST_PROXY_CHILD")
	if target == "" {
		t.Skip("run by TestProxyFromEnvironment")
	}
	proxy, _ := url.Parse(os.Getenv("HTTP_PROXY"))
	ep, err := NewEndpoint(target, nil, Options{Pool: &Pool{}})
	if err != nil {
		t.Fatal(err)
	}
	if ep.proxyAddr != proxy.Host || ep.tunnel {
		t.Fatalf("HTTP_PROXY: proxyAddr %q tunnel %v, want %s without a tunnel", ep.proxyAddr, ep.tunnel, proxy.Host)
	}
	mustReadBody(t, mustPost(t, ep, &testTracker{}, "{}"), `{"ok":true}`)
	// net/http with the same rule, as the gateway's GET streams use it.
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment}}
	resp, err := client.Get(target)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ep, _ := NewEndpoint("https://upstream.invalid/mcp", nil, Options{}); ep.proxyAddr != proxy.Host || !ep.tunnel {
		t.Fatalf("HTTPS_PROXY: proxyAddr %q tunnel %v", ep.proxyAddr, ep.tunnel)
	}
	for _, u := range []string{"http://direct.invalid/", "https://direct.invalid/", "http://127.0.0.1:1/", "http://localhost:1/"} {
		if ep, _ := NewEndpoint(u, nil, Options{}); ep.proxyAddr != "" {
			t.Errorf("%s: through proxy %s despite NO_PROXY or loopback", u, ep.proxyAddr)
		}
	}
}

// Through tinyproxy (Debian's; scripts/peers.sh installs it), when it is there:
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
	handler := func(_ *httpclienttest.CountedServer, w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"proxied":%s}`, b)
	}
	plain, secure := httpclienttest.NewCountedServer(t, false, handler), httpclienttest.NewCountedServer(t, true, handler)
	roots := x509.NewCertPool()
	roots.AddCert(secure.Certificate())
	proxy := &url.URL{Scheme: "http", Host: addr, User: url.UserPassword("gw", "s3cret")}
	for _, tc := range []struct {
		name, url string
		closes    bool // tinyproxy closes the connection after each answer
	}{{"http, absolute form", plain.URL, true}, {"https, CONNECT", secure.URL, false}} {
		t.Run(tc.name, func(t *testing.T) {
			ep, err := NewEndpoint(tc.url+"/mcp", nil, Options{TLS: &tls.Config{RootCAs: roots}, Pool: &Pool{}, Proxy: http.ProxyURL(proxy)})
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
	ep, err := NewEndpoint(secure.URL+"/mcp", nil, Options{TLS: &tls.Config{RootCAs: roots}, Pool: &Pool{}, Proxy: http.ProxyURL(wrong)})
	if err != nil {
		t.Fatal(err)
	}
	// tinyproxy answers 401 rather than 407.
	if r, err := doPost(httpclienttest.Ctx(t), ep, &testTracker{}, []byte("{}")); err == nil || !strings.Contains(err.Error(), "refused a tunnel") {
		if r != nil {
			r.fail()
		}
		t.Fatalf("CONNECT with wrong credentials: %v, want the proxy's refusal", err)
	}
}
