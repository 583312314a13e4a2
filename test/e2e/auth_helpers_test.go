package e2e

// Helpers for the identity, permission and isolation tests (auth_*_test.go): raw MCP
// requests over HTTP (to see status codes and headers a client library hides), the audit
// log, JWT minting, a go-sdk transport that adds identity headers, the TypeScript client
// run from a goroutine, and the mcpgw admin CLI.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// rawProtocolVersion is what the raw client negotiates: 2025-06-18 answers POSTed requests
// with a plain JSON body (on 2025-11-25 a slow answer becomes a primed event stream).
const rawProtocolVersion = "2025-06-18"

// rawHTTP bounds every raw request.
var rawHTTP = &http.Client{Timeout: 30 * time.Second}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// rpcReply is a JSON-RPC response.
type rpcReply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
}

// httpAnswer is one raw HTTP exchange with the gateway.
type httpAnswer struct {
	Status int
	Header http.Header
	Body   []byte
	Reply  *rpcReply // the JSON-RPC response in the body, when there is one
}

func (a httpAnswer) String() string {
	b := a.Body
	if len(b) > 600 {
		b = append(append([]byte{}, b[:600]...), "..."...)
	}
	return fmt.Sprintf("HTTP %d (WWW-Authenticate %q): %s", a.Status, a.Header.Get("WWW-Authenticate"), b)
}

// rawRequest sends one HTTP request to the gateway and reads the whole answer. A body
// that is an event stream is searched for the JSON-RPC response.
func rawRequest(t testing.TB, method, url string, hdr map[string]string, body string) httpAnswer {
	t.Helper()
	a, err := tryRawRequest(method, url, hdr, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return a
}

func tryRawRequest(method, url string, hdr map[string]string, body string) (httpAnswer, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return httpAnswer{}, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := rawHTTP.Do(req)
	if err != nil {
		return httpAnswer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return httpAnswer{}, err
	}
	a := httpAnswer{Status: resp.StatusCode, Header: resp.Header, Body: b}
	a.Reply = findReply(resp.Header.Get("Content-Type"), b)
	return a, nil
}

// rawHeadOnly sends a bodiless request and reads the body only when the answer is not an
// event stream (a stream that opened where it should not is reported by its status, not
// waited on).
func rawHeadOnly(t testing.TB, method, url string, hdr map[string]string) httpAnswer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	a := httpAnswer{Status: resp.StatusCode, Header: resp.Header}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		a.Body, _ = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	} else {
		a.Body = []byte("(event stream opened)")
	}
	return a
}

// findReply extracts the JSON-RPC response from a JSON body or an event stream.
func findReply(contentType string, body []byte) *rpcReply {
	var candidates [][]byte
	if strings.HasPrefix(contentType, "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(make([]byte, 0, 64<<10), 8<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data:"); ok && strings.TrimSpace(d) != "" {
				candidates = append(candidates, []byte(strings.TrimSpace(d)))
			}
		}
	} else {
		candidates = [][]byte{body}
	}
	for _, c := range candidates {
		var r rpcReply
		if json.Unmarshal(c, &r) == nil && (r.Result != nil || r.Error != nil) {
			return &r
		}
	}
	return nil
}

// initializeBody is an initialize request.
func initializeBody(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"mcpgw-e2e-raw","version":"1.0.0"}}}`, id, rawProtocolVersion)
}

// rawSession is a streamable HTTP session driven by hand.
type rawSession struct {
	URL    string
	Header map[string]string // identity and credential headers sent on every request
	ID     string            // Mcp-Session-Id
	next   atomic.Int64
}

// rawInitialize POSTs initialize with hdr; the answer is the caller's to judge.
func rawInitialize(t testing.TB, url string, hdr map[string]string) httpAnswer {
	t.Helper()
	return rawRequest(t, http.MethodPost, url, hdr, initializeBody(1))
}

// openRawSession initializes a session (failing the test unless it works) and sends
// notifications/initialized.
func openRawSession(t testing.TB, url string, hdr map[string]string) *rawSession {
	t.Helper()
	a := rawInitialize(t, url, hdr)
	sid := a.Header.Get("Mcp-Session-Id")
	if a.Status != http.StatusOK || a.Reply == nil || a.Reply.Error != nil || sid == "" {
		t.Fatalf("initialize with %v: %s", redactHeaders(hdr), a)
	}
	s := &rawSession{URL: url, Header: hdr, ID: sid}
	s.next.Store(1)
	n := s.post(t, nil, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if n.Status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %s", n)
	}
	return s
}

// headers are the session's headers plus the session id and protocol version, with
// override replacing any of them (an empty value removes the header).
func (s *rawSession) headers(override map[string]string) map[string]string {
	h := map[string]string{"Mcp-Session-Id": s.ID, "MCP-Protocol-Version": rawProtocolVersion}
	for k, v := range s.Header {
		h[k] = v
	}
	for k, v := range override {
		if v == "" {
			delete(h, k)
		} else {
			h[k] = v
		}
	}
	return h
}

func (s *rawSession) post(t testing.TB, override map[string]string, body string) httpAnswer {
	t.Helper()
	return rawRequest(t, http.MethodPost, s.URL, s.headers(override), body)
}

// request sends a JSON-RPC request on the session (with override headers, for a thief).
func (s *rawSession) request(t testing.TB, override map[string]string, method string, params any) httpAnswer {
	t.Helper()
	p, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	id := s.next.Add(1)
	return s.post(t, override, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, p))
}

// tools lists the session's tools (all pages, bounded), failing the test on an error.
func (s *rawSession) tools(t testing.TB) []string {
	t.Helper()
	var names []string
	cursor := ""
	for page := 0; page < 50; page++ {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		a := s.request(t, nil, "tools/list", params)
		if a.Status != http.StatusOK || a.Reply == nil || a.Reply.Error != nil {
			t.Fatalf("tools/list: %s", a)
		}
		var res struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if err := json.Unmarshal(a.Reply.Result, &res); err != nil {
			t.Fatalf("tools/list result: %v: %s", err, a.Reply.Result)
		}
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
		}
		if res.NextCursor == "" || res.NextCursor == cursor {
			return names
		}
		cursor = res.NextCursor
	}
	t.Fatalf("tools/list: more than 50 pages")
	return nil
}

// callTool calls a tool on the session and returns the raw answer.
func (s *rawSession) callTool(t testing.TB, name string, args map[string]any) httpAnswer {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	return s.request(t, nil, "tools/call", map[string]any{"name": name, "arguments": args})
}

// toolResultText joins the text contents of a tools/call result and says if isError.
func toolResultText(raw json.RawMessage) (string, bool) {
	var r struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	_ = json.Unmarshal(raw, &r)
	var parts []string
	for _, c := range r.Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n"), r.IsError
}

// redactHeaders hides bearer credentials in test messages.
func redactHeaders(h map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range h {
		if strings.EqualFold(k, "Authorization") && len(v) > 16 {
			v = v[:16] + "…"
		}
		out[k] = v
	}
	return out
}

func bearer(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }

// withPrefix counts names starting with prefix.
func withPrefix(names []string, prefix string) int {
	n := 0
	for _, s := range names {
		if strings.HasPrefix(s, prefix) {
			n++
		}
	}
	return n
}

// ---------------------------------------------------------------------------------------
// The audit log

// auditLine is one line of the audit log as docs/auth.md describes it.
type auditLine struct {
	Time         time.Time `json:"time"`
	Kind         string    `json:"kind"`
	Agent        string    `json:"agent"`
	Conversation string    `json:"conversation"`
	Task         string    `json:"task"`
	Session      string    `json:"session"`
	Tool         string    `json:"tool"`
	Upstream     string    `json:"upstream"`
	Outcome      string    `json:"outcome"`
	Rule         string    `json:"rule"`
	DurationMS   *float64  `json:"duration_ms"`
}

// readAudit parses the audit log; a missing file is no lines. A line that does not parse
// fails the test (the writer must never leave half lines after a flush).
func readAudit(t testing.TB, path string) []auditLine {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	var out []auditLine
	for i, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var l auditLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("audit log line %d is not JSON: %v: %q", i+1, err, line)
		}
		out = append(out, l)
	}
	return out
}

// countAudit counts lines for which match holds.
func countAudit(lines []auditLine, match func(auditLine) bool) int {
	n := 0
	for _, l := range lines {
		if match(l) {
			n++
		}
	}
	return n
}

// auditWhenStopped stops the gateway and reads its audit log. On SIGTERM the gateway
// writes what its audit log has queued and closes it, so after its exit no line can still
// come: the point at which a test may check that a line is not there (the writer flushes
// every 200 ms, and a sleep could only guess).
// The gateway gives open streams up to 5 s to end before it closes them, so the wait for
// its exit is longer than Proc.Stop's grace.
func auditWhenStopped(t testing.TB, g *Gateway, path string) []auditLine {
	t.Helper()
	const within = 20 * time.Second
	_ = syscall.Kill(g.Pid, syscall.SIGTERM)
	select {
	case <-g.done:
	case <-time.After(within):
		t.Fatalf("the gateway did not exit within %s of SIGTERM: its audit log may be incomplete", within)
	}
	if g.waitErr != nil {
		t.Fatalf("the gateway did not exit cleanly on SIGTERM (%v): its audit log may be incomplete", g.waitErr)
	}
	g.Stop() // whatever is left in its process group
	return readAudit(t, path)
}

// ---------------------------------------------------------------------------------------
// JWTs and keys

// signJWT signs claims with method and key, setting kid when non-empty.
func signJWT(t testing.TB, method jwt.SigningMethod, key any, kid string, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, claims)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatalf("sign %s: %v", method.Alg(), err)
	}
	return s
}

// newRSAKey makes a 2048-bit RSA key.
func newRSAKey(t testing.TB) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// publicPEM is the PKIX PEM of k's public half.
func publicPEM(t testing.TB, k *rsa.PrivateKey) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// ---------------------------------------------------------------------------------------
// go-sdk clients with identity headers

// headerTransport adds fixed headers to every request (identity for the go-sdk client).
type headerTransport struct {
	base http.RoundTripper
	hdr  map[string]string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.hdr {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

// httpClientWith is an HTTP client (no overall timeout: it carries event streams) that
// sends hdr on every request.
func httpClientWith(hdr map[string]string) *http.Client {
	return &http.Client{Transport: headerTransport{base: http.DefaultTransport, hdr: hdr}}
}

// ---------------------------------------------------------------------------------------
// The TypeScript client from a goroutine

// runAggregateClientAsync runs js/aggregate-client.mjs like runAggregateClient, but
// returns errors instead of failing the test, so that several can run in goroutines.
func runAggregateClientAsync(nodeBin, e2e string, env []string, url string, steps []Step, headers []string, timeout time.Duration, stepsDir string, tag string) (*ClientReport, string, error) {
	b, err := json.Marshal(steps)
	if err != nil {
		return nil, "", err
	}
	stepsFile := filepath.Join(stepsDir, "steps-"+sanitize(tag)+".json")
	if err := os.WriteFile(stepsFile, b, 0o600); err != nil {
		return nil, "", err
	}
	args := []string{"js/aggregate-client.mjs", "--url", url, "--steps", stepsFile, "--timeout", strconv.Itoa(int(timeout / time.Millisecond)), "--name", "ts-" + tag}
	for _, h := range headers {
		args = append(args, "--header", h)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout+15*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, nodeBin, args...)
	c.Dir = e2e
	c.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	c.WaitDelay = 5 * time.Second
	runErr := c.Run()
	if c.Process != nil {
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
	}
	var rep ClientReport
	if err := json.Unmarshal([]byte(lastLine(stdout.String())), &rep); err != nil {
		return nil, stderr.String(), fmt.Errorf("no JSON report (run error %v, ctx %v): %v; stdout %q", runErr, ctx.Err(), err, stdout.String())
	}
	return &rep, stderr.String(), nil
}

// ---------------------------------------------------------------------------------------
// The admin CLI

// runMcpgw runs `$MCPGW_BIN ARGS...` bounded by timeout and returns stdout, stderr and
// the exit code (-1 on timeout).
func runMcpgw(t testing.TB, timeout time.Duration, args ...string) (string, string, int) {
	t.Helper()
	res := runTool(t, timeout, nil, needGatewayBin(t), args...)
	if res.TimedOut {
		t.Fatalf("mcpgw %s: timed out after %s\nstderr:\n%s", strings.Join(args, " "), timeout, res.Stderr)
	}
	return res.Stdout, res.Stderr, res.ExitCode
}

// ---------------------------------------------------------------------------------------
// Small things

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// writeFileAtomic replaces path's content in one rename (a watcher never sees half a file).
func writeFileAtomic(t testing.TB, path string, data []byte) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}
