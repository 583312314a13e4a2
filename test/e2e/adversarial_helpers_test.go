package e2e

// Helpers for the adversarial suite (adversarial_test.go) and the soak (soak_test.go):
// any JSON-RPC message read from a JSON body, an event stream or a line; raw HTTP sessions
// that may be driven from goroutines; event streams (streamable GET, legacy /sse); a
// line driver for the Unix socket's line mode and the bridge's stdio; and a recorder that
// sits between the gateway and a real stdio server (`sh -c "tee -a FILE | exec SERVER"`)
// and keeps exactly the bytes the upstream read, so a test can see every line it got.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// advMsg is any JSON-RPC message (request, notification or response).
type advMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
	raw     []byte
}

func (m advMsg) isResponse() bool { return m.Method == "" && (m.Result != nil || m.Error != nil) }
func (m advMsg) isRequest() bool  { return m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null" }

func (m advMsg) String() string { return advShort(m.raw, 400) }

// advShort is b cut to n bytes for a failure message.
func advShort(b []byte, n int) string {
	if len(b) > n {
		return fmt.Sprintf("%s… (%d bytes)", b[:n], len(b))
	}
	return string(b)
}

// advOneLine is s on one line, cut to n bytes.
func advOneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// advParse reads one message; ok is false when data is not a JSON-RPC object.
func advParse(data []byte) (advMsg, bool) {
	var m advMsg
	if err := json.Unmarshal(data, &m); err != nil {
		return advMsg{raw: append([]byte(nil), data...)}, false
	}
	m.raw = append([]byte(nil), data...)
	return m, m.JSONRPC == "2.0" || m.Method != "" || m.Result != nil || m.Error != nil
}

// advSSEEvent is one event of an event stream.
type advSSEEvent struct {
	Event string
	Data  string
}

// advReadSSE calls fn for every event of an event stream until EOF, an error, or fn
// returning false. Data lines of one event are joined with "\n", as the format says.
func advReadSSE(r io.Reader, fn func(advSSEEvent) bool) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var ev advSSEEvent
	var data []string
	for {
		line, err := br.ReadString('\n')
		if line != "" || err == nil {
			line = strings.TrimRight(line, "\r\n")
			switch {
			case line == "":
				if len(data) > 0 || ev.Event != "" {
					ev.Data = strings.Join(data, "\n")
					if !fn(ev) {
						return nil
					}
				}
				ev, data = advSSEEvent{}, nil
			case strings.HasPrefix(line, ":"):
			case strings.HasPrefix(line, "data:"):
				data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
			case strings.HasPrefix(line, "event:"):
				ev.Event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
			}
		}
		if err != nil {
			return err
		}
	}
}

// advMessages are every JSON-RPC message of an HTTP answer: the body as one message (or
// a batch), or each event of an event stream.
func advMessages(contentType string, body []byte) []advMsg {
	var out []advMsg
	if strings.HasPrefix(contentType, "text/event-stream") {
		_ = advReadSSE(bytes.NewReader(body), func(ev advSSEEvent) bool {
			if m, ok := advParse([]byte(ev.Data)); ok {
				out = append(out, m)
			}
			return true
		})
		return out
	}
	t := bytes.TrimSpace(body)
	if len(t) > 0 && t[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(t, &batch) == nil {
			for _, b := range batch {
				if m, ok := advParse(b); ok {
					out = append(out, m)
				}
			}
		}
		return out
	}
	if m, ok := advParse(t); ok {
		out = append(out, m)
	}
	return out
}

// advRandom is a random hex string of n bytes.
func advRandom(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// ---------------------------------------------------------------------------------------
// Raw HTTP sessions usable from goroutines (no t.Fatal off the test goroutine)

// advHTTP bounds every request of the suite (a few calls run for seconds).
var advHTTP = &http.Client{Timeout: 60 * time.Second}

// advAnswer is one HTTP exchange: the status, headers, body and every message in it.
type advAnswer struct {
	Status int
	Header http.Header
	Body   []byte
	Msgs   []advMsg
}

// reply is the response among the answer's messages (id-matched when id is not nil).
func (a advAnswer) reply(id json.RawMessage) (advMsg, bool) {
	for _, m := range a.Msgs {
		if m.isResponse() && (id == nil || string(m.ID) == string(id)) {
			return m, true
		}
	}
	return advMsg{}, false
}

func (a advAnswer) String() string {
	return fmt.Sprintf("HTTP %d: %s", a.Status, advShort(a.Body, 600))
}

// advDo sends one request and reads the whole answer.
func advDo(ctx context.Context, method, url string, hdr map[string]string, body []byte) (advAnswer, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return advAnswer{}, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := advHTTP.Do(req)
	if err != nil {
		return advAnswer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return advAnswer{}, err
	}
	return advAnswer{Status: resp.StatusCode, Header: resp.Header, Body: b, Msgs: advMessages(resp.Header.Get("Content-Type"), b)}, nil
}

// advSession is a streamable HTTP session driven by hand; its methods return errors and
// may run on any goroutine.
type advSession struct {
	URL     string
	Header  map[string]string // identity headers sent on every request
	ID      string
	Version string
	next    atomic.Int64
}

// advOpenSession initializes a session with caps (a JSON object) and version, then sends
// notifications/initialized.
func advOpenSession(t testing.TB, url string, hdr map[string]string, version, caps string) *advSession {
	t.Helper()
	s, err := advTryOpenSession(url, hdr, version, caps)
	if err != nil {
		t.Fatalf("open session (%v): %v", redactHeaders(hdr), err)
	}
	return s
}

func advTryOpenSession(url string, hdr map[string]string, version, caps string) (*advSession, error) {
	if caps == "" {
		caps = "{}"
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":%s,"clientInfo":{"name":"mcpgw-e2e-adversarial","version":"1.0.0"}}}`, version, caps)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := advDo(ctx, http.MethodPost, url, hdr, []byte(body))
	if err != nil {
		return nil, err
	}
	r, ok := a.reply(nil)
	sid := a.Header.Get("Mcp-Session-Id")
	if a.Status != http.StatusOK || !ok || r.Error != nil || sid == "" {
		return nil, fmt.Errorf("initialize: %s", a)
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(r.Result, &res)
	s := &advSession{URL: url, Header: hdr, ID: sid, Version: res.ProtocolVersion}
	s.next.Store(100)
	n, err := s.post(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	if err != nil {
		return nil, err
	}
	if n.Status != http.StatusAccepted {
		return nil, fmt.Errorf("notifications/initialized: %s", n)
	}
	return s, nil
}

// headers are the identity headers, the session id and the negotiated version.
func (s *advSession) headers() map[string]string {
	h := map[string]string{"Mcp-Session-Id": s.ID, "MCP-Protocol-Version": s.Version}
	for k, v := range s.Header {
		h[k] = v
	}
	return h
}

// post sends body (any bytes) on the session.
func (s *advSession) post(ctx context.Context, body []byte) (advAnswer, error) {
	return advDo(ctx, http.MethodPost, s.URL, s.headers(), body)
}

// newID is a fresh request id of this session.
func (s *advSession) newID() int64 { return s.next.Add(1) }

// call sends a request with a fresh id and returns its response and the whole answer.
func (s *advSession) call(ctx context.Context, method string, params any) (advMsg, advAnswer, error) {
	p, err := json.Marshal(params)
	if err != nil {
		return advMsg{}, advAnswer{}, err
	}
	id := s.newID()
	a, err := s.post(ctx, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, p)))
	if err != nil {
		return advMsg{}, a, err
	}
	r, ok := a.reply(json.RawMessage(fmt.Sprint(id)))
	if !ok {
		return advMsg{}, a, fmt.Errorf("%s: no response with id %d in %s", method, id, a)
	}
	return r, a, nil
}

// callTool calls a tool; text is the joined text of a successful result, err says what
// went wrong otherwise (JSON-RPC error, isError result, transport).
func (s *advSession) callTool(ctx context.Context, name string, args map[string]any) (string, advAnswer, error) {
	if args == nil {
		args = map[string]any{}
	}
	r, a, err := s.call(ctx, "tools/call", map[string]any{"name": name, "arguments": args})
	if err != nil {
		return "", a, err
	}
	return advToolText(r, a)
}

// advToolText is the text of a tools/call response, or an error for a JSON-RPC error or
// an isError result.
func advToolText(r advMsg, a advAnswer) (string, advAnswer, error) {
	if r.Error != nil {
		return "", a, fmt.Errorf("JSON-RPC error %d: %s", r.Error.Code, r.Error.Message)
	}
	text, isErr := toolResultText(r.Result)
	if isErr {
		return text, a, fmt.Errorf("isError result: %s", advShort([]byte(text), 300))
	}
	return text, a, nil
}

// ---------------------------------------------------------------------------------------
// Event streams: streamable HTTP GET and legacy /sse

// advStream reads an event stream in the background and keeps every event.
type advStream struct {
	Status int
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	events []advSSEEvent
	msgs   []advMsg
	signal chan struct{}
}

// advOpenStream GETs url with hdr and, on 200, reads its events until cleanup.
func advOpenStream(t testing.TB, url string, hdr map[string]string) *advStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	timer := time.AfterFunc(15*time.Second, cancel) // bounds the wait for headers only
	resp, err := http.DefaultClient.Do(req)
	timer.Stop()
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	st := &advStream{Status: resp.StatusCode, cancel: cancel, done: make(chan struct{}), signal: make(chan struct{}, 1)}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		close(st.done)
		return st
	}
	go func() {
		defer close(st.done)
		defer resp.Body.Close()
		_ = advReadSSE(resp.Body, func(ev advSSEEvent) bool {
			st.mu.Lock()
			st.events = append(st.events, ev)
			if m, ok := advParse([]byte(ev.Data)); ok {
				st.msgs = append(st.msgs, m)
			}
			st.mu.Unlock()
			select {
			case st.signal <- struct{}{}:
			default:
			}
			return true
		})
	}()
	return st
}

// close ends the stream and waits for its reader.
func (st *advStream) close() {
	st.cancel()
	select {
	case <-st.done:
	case <-time.After(5 * time.Second):
	}
}

// messages are the JSON-RPC messages read so far.
func (st *advStream) messages() []advMsg {
	st.mu.Lock()
	defer st.mu.Unlock()
	return append([]advMsg(nil), st.msgs...)
}

// waitEvent waits for an event for which pred holds.
func (st *advStream) waitEvent(timeout time.Duration, pred func(advSSEEvent) bool) (advSSEEvent, bool) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	seen := 0
	for {
		st.mu.Lock()
		evs := st.events[seen:]
		seen = len(st.events)
		st.mu.Unlock()
		for _, ev := range evs {
			if pred(ev) {
				return ev, true
			}
		}
		select {
		case <-st.signal:
		case <-st.done:
			st.mu.Lock()
			more := len(st.events) > seen
			st.mu.Unlock()
			if !more {
				return advSSEEvent{}, false
			}
		case <-deadline.C:
			return advSSEEvent{}, false
		}
	}
}

// waitResponse waits for the response to id on the stream.
func (st *advStream) waitResponse(id json.RawMessage, timeout time.Duration) (advMsg, bool) {
	ev, ok := st.waitEvent(timeout, func(ev advSSEEvent) bool {
		m, ok := advParse([]byte(ev.Data))
		return ok && m.isResponse() && string(m.ID) == string(id)
	})
	if !ok {
		return advMsg{}, false
	}
	m, _ := advParse([]byte(ev.Data))
	return m, true
}

// advLegacy is a legacy HTTP+SSE (2024-11-05) session: GET /sse, then POST /message.
type advLegacy struct {
	*advStream
	Endpoint string // absolute URL of /message?sessionId=…
	Header   map[string]string
}

// advOpenLegacy opens GET /sse, waits for the endpoint event and runs initialize.
func advOpenLegacy(t testing.TB, base string, hdr map[string]string) *advLegacy {
	t.Helper()
	st := advOpenStream(t, base+"/sse", hdr)
	if st.Status != http.StatusOK {
		t.Fatalf("GET /sse: HTTP %d", st.Status)
	}
	ev, ok := st.waitEvent(15*time.Second, func(ev advSSEEvent) bool { return ev.Event == "endpoint" })
	if !ok {
		t.Fatalf("GET /sse: no endpoint event within 15 s")
	}
	l := &advLegacy{advStream: st, Endpoint: base + strings.TrimSpace(ev.Data), Header: hdr}
	init := []byte(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"mcpgw-e2e-adversarial-sse","version":"1.0.0"}}}`)
	if a := l.post(t, init); a.Status != http.StatusAccepted {
		t.Fatalf("legacy initialize: %s", a)
	}
	if r, ok := st.waitResponse(json.RawMessage(`"init"`), 15*time.Second); !ok || r.Error != nil {
		t.Fatalf("legacy initialize: no result on the stream (%v)", r)
	}
	if a := l.post(t, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); a.Status != http.StatusAccepted {
		t.Fatalf("legacy notifications/initialized: %s", a)
	}
	return l
}

// post POSTs body to the session's /message endpoint.
func (l *advLegacy) post(t testing.TB, body []byte) advAnswer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := advDo(ctx, http.MethodPost, l.Endpoint, l.Header, body)
	if err != nil {
		t.Fatalf("POST %s: %v", l.Endpoint, err)
	}
	return a
}

// ---------------------------------------------------------------------------------------
// Line-framed peers: the socket's line mode and the bridge's stdio

// advLines reads newline-framed messages from r in the background and writes lines to w.
type advLines struct {
	Name string
	w    io.Writer
	wmu  sync.Mutex

	mu      sync.Mutex
	lines   [][]byte
	readErr error
	signal  chan struct{}
	eof     chan struct{}
}

func newAdvLines(name string, r io.Reader, w io.Writer) *advLines {
	l := &advLines{Name: name, w: w, signal: make(chan struct{}, 1), eof: make(chan struct{})}
	go func() {
		defer close(l.eof)
		br := bufio.NewReaderSize(r, 1<<20)
		for {
			line, err := br.ReadBytes('\n')
			if t := bytes.TrimSpace(line); len(t) > 0 {
				l.mu.Lock()
				l.lines = append(l.lines, append([]byte(nil), t...))
				l.mu.Unlock()
				select {
				case l.signal <- struct{}{}:
				default:
				}
			}
			if err != nil {
				l.mu.Lock()
				l.readErr = err
				l.mu.Unlock()
				return
			}
		}
	}()
	return l
}

// send writes b and a newline, bounded by 30 s (a peer that stops reading fails the test
// instead of hanging it).
func (l *advLines) send(b []byte) error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	done := make(chan error, 1)
	go func() {
		_, err := l.w.Write(append(append([]byte(nil), b...), '\n'))
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		return fmt.Errorf("%s: writing %d bytes took over 30 s", l.Name, len(b)+1)
	}
}

// mark is the number of lines read so far (for wait's start).
func (l *advLines) mark() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.lines)
}

// wait returns the first line after from for which pred holds, with the index after it.
func (l *advLines) wait(from int, timeout time.Duration, pred func([]byte) bool) ([]byte, int, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		l.mu.Lock()
		lines := l.lines
		rerr := l.readErr
		l.mu.Unlock()
		for ; from < len(lines); from++ {
			if pred(lines[from]) {
				return lines[from], from + 1, nil
			}
		}
		if rerr != nil {
			return nil, from, fmt.Errorf("%s: stream ended (%v)", l.Name, rerr)
		}
		select {
		case <-l.signal:
		case <-l.eof:
		case <-deadline.C:
			return nil, from, fmt.Errorf("%s: nothing matching within %s", l.Name, timeout)
		}
	}
}

// waitResponse waits for a JSON-RPC response after from whose id is one of ids (raw
// JSON, "null" included when wanted); control lines and other messages are skipped.
func (l *advLines) waitResponse(from int, timeout time.Duration, ids ...string) (advMsg, int, error) {
	line, next, err := l.wait(from, timeout, func(b []byte) bool {
		m, ok := advParse(b)
		if !ok || !m.isResponse() {
			return false
		}
		id := string(m.ID)
		if id == "" {
			id = "null"
		}
		for _, want := range ids {
			if id == want {
				return true
			}
		}
		return false
	})
	if err != nil {
		return advMsg{}, next, err
	}
	m, _ := advParse(line)
	return m, next, nil
}

// recent is the last few lines, for a failure message.
func (l *advLines) recent(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	from := len(l.lines) - n
	if from < 0 {
		from = 0
	}
	var b strings.Builder
	for _, line := range l.lines[from:] {
		fmt.Fprintf(&b, "\n  %s", advShort(line, 300))
	}
	return b.String()
}

// ---------------------------------------------------------------------------------------
// The recorder: what a real stdio upstream read, line by line

// advRecorder runs a stdio server as `sh -c "tee -a DIR/rec.<sh pid>.log | exec SERVER"`:
// every instance (the catalogue's, each session's, the shared one) appends exactly the
// bytes it is sent to its own file. Its env carries a canary that only the server's
// environment holds, so a hidden get-env that ran shows up in any answer that carries it.
type advRecorder struct {
	Dir    string
	Canary string
	offs   map[string]int // bytes of each file already judged
}

func newAdvRecorder(t testing.TB) *advRecorder {
	t.Helper()
	return &advRecorder{Dir: t.TempDir(), Canary: "mcpgw-canary-" + advRandom(12), offs: map[string]int{}}
}

// serverYAML is a `servers:` entry (indented two spaces) for name that runs command with
// args behind the recorder, with the canary in its env and extra keys (already indented
// four spaces, one per line) appended.
func (r *advRecorder) serverYAML(name, command string, args []string, extra ...string) string {
	quoted := make([]string, 0, len(args)+1)
	for _, a := range append([]string{command}, args...) {
		quoted = append(quoted, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	script := fmt.Sprintf("tee -a '%s/rec.'$$'.log' | exec %s", r.Dir, strings.Join(quoted, " "))
	var b strings.Builder
	fmt.Fprintf(&b, "  %s:\n    type: stdio\n    command: sh\n    args: [\"-c\", %s]\n    env: {MCPGW_CANARY: %s}\n",
		name, yamlQuote(script), yamlQuote(r.Canary))
	for _, e := range extra {
		b.WriteString("    " + e + "\n")
	}
	return b.String()
}

// advRecLine is one line an upstream read.
type advRecLine struct {
	File string
	Text []byte
}

// newLines returns the complete lines (ending in "\n") appended since the last call.
func (r *advRecorder) newLines(t testing.TB) []advRecLine {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(r.Dir, "rec.*.log"))
	sort.Strings(files)
	var out []advRecLine
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("recorder: %v", err)
		}
		off := r.offs[f]
		if off > len(b) {
			off = 0
		}
		rest := b[off:]
		end := bytes.LastIndexByte(rest, '\n')
		if end < 0 {
			continue
		}
		r.offs[f] = off + end + 1
		for _, line := range bytes.Split(rest[:end], []byte("\n")) {
			out = append(out, advRecLine{File: filepath.Base(f), Text: line})
		}
	}
	return out
}

// advRecFinding is what a recorded line proves went wrong.
type advRecFinding struct {
	Line    advRecLine
	Problem string
}

// judge checks recorded lines: each is exactly one JSON object with no raw CR in it (the
// TypeScript SDK cuts at LF, Node's readline and Python's universal newlines at CR too);
// no top-level request calls a tool outside allowed (upstream names); and no top-level
// message contains marker (text only an attack puts into a request of its own).
func advJudge(lines []advRecLine, allowed []string, marker string) []advRecFinding {
	var out []advRecFinding
	for _, l := range lines {
		if bytes.IndexByte(l.Text, '\r') >= 0 {
			out = append(out, advRecFinding{l, "a raw CR reached the upstream inside one line (a reader that also splits on CR sees two messages)"})
		}
		dec := json.NewDecoder(bytes.NewReader(l.Text))
		var top map[string]json.RawMessage
		if err := dec.Decode(&top); err != nil {
			out = append(out, advRecFinding{l, fmt.Sprintf("the upstream read a line that is not one JSON object (%v): a raw line break split a message", err)})
			continue
		}
		if _, err := dec.Token(); err != io.EOF {
			out = append(out, advRecFinding{l, "the upstream read a line holding more than one JSON value"})
			continue
		}
		var method string
		_ = json.Unmarshal(top["method"], &method)
		if method == "tools/call" {
			var p struct {
				Name string `json:"name"`
			}
			_ = json.Unmarshal(top["params"], &p)
			ok := false
			for _, a := range allowed {
				ok = ok || p.Name == a
			}
			if !ok {
				out = append(out, advRecFinding{l, fmt.Sprintf("the upstream was asked to run tool %q, which the agent may not call", p.Name)})
			}
		}
		if marker != "" && method != "" {
			// The marker may sit inside an argument of an allowed request (the attack's
			// own carrier); it must never be a top-level request's own tool argument.
			var p struct {
				Arguments map[string]any `json:"arguments"`
			}
			_ = json.Unmarshal(top["params"], &p)
			if msg, _ := p.Arguments["message"].(string); msg == marker {
				out = append(out, advRecFinding{l, fmt.Sprintf("the upstream read a request of its own whose message is %q: a smuggled request", marker)})
			}
			var id string
			if json.Unmarshal(top["id"], &id) == nil && strings.HasPrefix(id, "smuggled") {
				out = append(out, advRecFinding{l, fmt.Sprintf("the upstream read a request with the attacker's id %q: a smuggled request", id)})
			}
		}
	}
	return out
}

// advReport fails the test once per attack that the recorder proves worked: what
// happened, how often, and the lines that show it (the first three distinct problems).
func advReport(t testing.TB, label string, fs []advRecFinding) {
	t.Helper()
	if len(fs) == 0 {
		return
	}
	var b strings.Builder
	seen := map[string]bool{}
	shown := 0
	for _, f := range fs {
		if seen[f.Problem[:min(40, len(f.Problem))]] || shown == 3 {
			continue
		}
		seen[f.Problem[:min(40, len(f.Problem))]] = true
		shown++
		fmt.Fprintf(&b, "\n    %s", f)
	}
	t.Errorf("ATTACK WORKED (%s): %d lines the upstream read prove it:%s", label, len(fs), b.String())
}

func (f advRecFinding) String() string {
	return fmt.Sprintf("%s (%s): %s", f.Problem, f.Line.File, advShort(f.Line.Text, 500))
}

// ---------------------------------------------------------------------------------------
// /api/runtime and /metrics

// advRuntime is GET /api/runtime.
type advRuntime struct {
	Goroutines int   `json:"goroutines"`
	HeapInuse  int64 `json:"heap_inuse_bytes"`
	HeapAlloc  int64 `json:"heap_alloc_bytes"`
	Sys        int64 `json:"sys_bytes"`
	RSS        int64 `json:"rss_bytes"`
	Sessions   int   `json:"sessions"`
	// RSSAnon and RSSFile split RSS (from /proc/PID/status, read right after): anonymous
	// memory the process allocated, and pages of mapped files (its own binary's code).
	RSSAnon, RSSFile int64 `json:"-"`
}

func (r advRuntime) String() string {
	split := ""
	if r.RSSAnon > 0 {
		split = fmt.Sprintf(" (anon %.1f, file %.1f)", float64(r.RSSAnon)/(1<<20), float64(r.RSSFile)/(1<<20))
	}
	return fmt.Sprintf("rss %.1f MiB%s, heap in use %.1f MiB, heap alloc %.1f MiB, sys %.1f MiB, %d goroutines, %d sessions",
		float64(r.RSS)/(1<<20), split, float64(r.HeapInuse)/(1<<20), float64(r.HeapAlloc)/(1<<20), float64(r.Sys)/(1<<20), r.Goroutines, r.Sessions)
}

// advGetRuntime fetches GET /api/runtime (with gc=1: collected and returned to the OS).
// The gateway forces a collection at most every 2 s and says when to come back (429 with
// Retry-After): a reading that comes sooner waits that long, at most three times.
func advGetRuntime(g *Gateway, gc bool) (advRuntime, error) {
	u := g.Base + "/api/runtime"
	if gc {
		u += "?gc=1"
	}
	var resp *http.Response
	var b []byte
	for try := 1; ; try++ {
		var err error
		if resp, err = probeClient.Get(u); err != nil {
			return advRuntime{}, err
		}
		b, _ = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		if resp.StatusCode != http.StatusTooManyRequests || try == 3 || secs < 1 || secs > 10 {
			break
		}
		time.Sleep(time.Duration(secs) * time.Second)
	}
	if resp.StatusCode != http.StatusOK {
		return advRuntime{}, fmt.Errorf("GET /api/runtime: HTTP %d: %s", resp.StatusCode, b)
	}
	var r advRuntime
	if err := json.Unmarshal(b, &r); err != nil {
		return advRuntime{}, fmt.Errorf("GET /api/runtime: %v: %s", err, b)
	}
	r.RSSAnon, r.RSSFile = advProcRSS(g.Pid)
	return r, nil
}

// advProcRSS reads RssAnon and RssFile of pid (bytes; 0 where /proc has none).
func advProcRSS(pid int) (anon, file int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		var kb int64
		if rest, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), &kb)
			anon = kb << 10
		} else if rest, ok := strings.CutPrefix(line, "RssFile:"); ok {
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), &kb)
			file = kb << 10
		}
	}
	return anon, file
}

// advMetricSum sums every sample whose series name contains part (ok: any was found).
func advMetricSum(text, part string) (float64, bool) {
	sum, found := 0.0, false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "#") || !strings.Contains(line, part) {
			continue
		}
		name := line
		if i := strings.IndexAny(line, "{ "); i >= 0 {
			name = line[:i]
		}
		if !strings.Contains(name, part) {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		var v float64
		if _, err := fmt.Sscan(f[len(f)-1], &v); err == nil {
			sum += v
			found = true
		}
	}
	return sum, found
}

// advGatewayAlive fails the test when the gateway has exited (it must survive any input).
func advGatewayAlive(t testing.TB, g *Gateway, after string) bool {
	t.Helper()
	if g.Exited() {
		t.Errorf("after %s the gateway (pid %d) exited: %v", after, g.Pid, g.ExitErr())
		return false
	}
	if !pidAlive(g.Pid) {
		t.Errorf("after %s the gateway (pid %d) is not alive", after, g.Pid)
		return false
	}
	return true
}
