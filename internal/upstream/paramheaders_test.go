package upstream

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgw/mcpgw/internal/httpclient/httpclienttest"
)

func TestToolParamHeaders(t *testing.T) {
	tool := func(props string) string {
		return `{"name":"t","inputSchema":{"type":"object","properties":` + props + `}}`
	}
	for _, tc := range []struct {
		name string
		def  string
		want []string // "path=Header"
		bad  string   // part of the error, when the tool is invalid
	}{
		{name: "no annotations", def: tool(`{"q":{"type":"string"}}`)},
		{name: "no schema", def: `{"name":"t"}`},
		{name: "string integer boolean", def: tool(`{"r":{"type":"string","x-mcp-header":"Region"},"p":{"type":"integer","x-mcp-header":"Priority"},"v":{"type":"boolean","x-mcp-header":"Verbose"},"q":{"type":"string"}}`),
			want: []string{"p=Priority", "r=Region", "v=Verbose"}},
		{name: "nested", def: tool(`{"o":{"type":"object","properties":{"id":{"type":"string","x-mcp-header":"Id"}}}}`),
			want: []string{"o.id=Id"}},
		{name: "token punctuation", def: tool(`{"a":{"type":"string","x-mcp-header":"X!#$%&'*+-.^_|~1"}}`),
			want: []string{"a=X!#$%&'*+-.^_|~1"}},
		{name: "empty", def: tool(`{"v":{"type":"string","x-mcp-header":""}}`), bad: "non-empty string"},
		{name: "not a string", def: tool(`{"v":{"type":"string","x-mcp-header":7}}`), bad: "non-empty string"},
		{name: "object", def: tool(`{"d":{"type":"object","x-mcp-header":"Data"}}`), bad: "only string, integer and boolean"},
		{name: "array", def: tool(`{"i":{"type":"array","items":{"type":"string"},"x-mcp-header":"Items"}}`), bad: "only string, integer and boolean"},
		{name: "null", def: tool(`{"n":{"type":"null","x-mcp-header":"Nil"}}`), bad: "only string, integer and boolean"},
		{name: "number", def: tool(`{"s":{"type":"number","x-mcp-header":"Score"}}`), bad: "only string, integer and boolean"},
		{name: "no type", def: tool(`{"s":{"x-mcp-header":"Score"}}`), bad: "(none)"},
		{name: "duplicate", def: tool(`{"a":{"type":"string","x-mcp-header":"Region"},"b":{"type":"string","x-mcp-header":"Region"}}`), bad: "both name the header"},
		{name: "duplicate other case", def: tool(`{"a":{"type":"string","x-mcp-header":"MyField"},"b":{"type":"string","x-mcp-header":"myfield"}}`), bad: "case-insensitive"},
		{name: "duplicate nested", def: tool(`{"a":{"type":"string","x-mcp-header":"Id"},"o":{"type":"object","properties":{"id":{"type":"string","x-mcp-header":"ID"}}}}`), bad: "both name the header"},
		{name: "space", def: tool(`{"v":{"type":"string","x-mcp-header":"My Region"}}`), bad: "not an HTTP header name"},
		{name: "colon", def: tool(`{"v":{"type":"string","x-mcp-header":"Region:Primary"}}`), bad: "not an HTTP header name"},
		{name: "non-ASCII", def: tool(`{"v":{"type":"string","x-mcp-header":"Région"}}`), bad: "not an HTTP header name"},
		{name: "control character", def: tool(`{"v":{"type":"string","x-mcp-header":"Region\t1"}}`), bad: "not an HTTP header name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name, bindings, err := toolParamHeaders([]byte(tc.def))
			if name != "t" {
				t.Errorf("name %q, want t", name)
			}
			if tc.bad != "" {
				if err == nil || !strings.Contains(err.Error(), tc.bad) {
					t.Fatalf("err %v, want one saying %q", err, tc.bad)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, b := range bindings {
				got = append(got, strings.Join(b.path, ".")+"="+b.header)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("bindings %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParamHeaderValue(t *testing.T) {
	for _, tc := range []struct {
		arg, want string
		ok        bool
	}{
		{`"us-west1"`, "us-west1", true},
		{`"us west 1"`, "us west 1", true},
		{`""`, "=?base64??=", true},
		{`" padded "`, "=?base64?IHBhZGRlZCA=?=", true},
		{`"Hello, 世界"`, "=?base64?SGVsbG8sIOS4lueVjA==?=", true},
		{`"line1\r\nline2"`, "=?base64?bGluZTENCmxpbmUy?=", true},
		{`"\tindented"`, "=?base64?CWluZGVudGVk?=", true},
		{`"=?base64?eA==?="`, "=?base64?PT9iYXNlNjQ/ZUE9PT89?=", true}, // looks encoded: encoded
		{`42`, "42", true},
		{`-7`, "-7", true},
		{`1e3`, "1000", true},
		{`true`, "true", true},
		{`false`, "false", true},
		{`3.14159`, "", false},
		{`9007199254740993`, "", false},
		{`null`, "", false},
		{`{}`, "", false},
		{`[]`, "", false},
	} {
		got, ok := paramHeaderValue([]byte(tc.arg))
		if got != tc.want || ok != tc.ok {
			t.Errorf("paramHeaderValue(%s) = %q, %v; want %q, %v", tc.arg, got, ok, tc.want, tc.ok)
		}
	}
}

// paramServer is a 2026-07-28 upstream: it lists tools and records the Mcp-* headers of
// each tools/call.
type paramServer struct {
	tools string // the tools array of tools/list
	mu    sync.Mutex
	calls []http.Header
}

func (p *paramServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "no GET stream", http.StatusMethodNotAllowed)
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil || m.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	result := `{}`
	switch m.Method {
	case "server/discover":
		result = `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"serverInfo":{"name":"p","version":"1"}}`
	case "tools/list":
		result = `{"tools":` + p.tools + `}`
	case "tools/call":
		h := http.Header{}
		for k, v := range r.Header {
			if strings.HasPrefix(k, "Mcp-") {
				h[k] = v
			}
		}
		p.mu.Lock()
		p.calls = append(p.calls, h)
		p.mu.Unlock()
		result = `{"content":[]}`
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + result + `}`))
}

func (p *paramServer) lastCall(t *testing.T) http.Header {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.calls) == 0 {
		t.Fatal("the upstream got no tools/call")
	}
	return p.calls[len(p.calls)-1]
}

// TestParamHeadersToUpstream: a connection on 2026-07-28 leaves out of tools/list the
// tools with invalid x-mcp-header annotations, and sends a tools/call's annotated
// arguments as Mcp-Param-* headers, encoded as the revision says, null and absent ones
// and unannotated ones without; another connection to the same server from the same
// Dialer (a per_session instance, which lists nothing itself) sends them too.
func TestParamHeadersToUpstream(t *testing.T) {
	srv := &paramServer{tools: `[
		{"name":"custom","inputSchema":{"type":"object","properties":{
			"region":{"type":"string","x-mcp-header":"Region"},
			"priority":{"type":"integer","x-mcp-header":"Priority"},
			"verbose":{"type":"boolean","x-mcp-header":"Verbose"},
			"debug":{"type":"boolean","x-mcp-header":"Debug"},
			"non_ascii":{"type":"string","x-mcp-header":"NonAscii"},
			"opts":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}},
			"float_val":{"type":"number"},
			"query":{"type":"string"}}}},
		{"name":"plain","inputSchema":{"type":"object","properties":{"q":{"type":"string"}}}},
		{"name":"bad_number","inputSchema":{"type":"object","properties":{"s":{"type":"number","x-mcp-header":"Score"}}}},
		{"name":"bad_dup","inputSchema":{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"F"},"b":{"type":"string","x-mcp-header":"f"}}}}]`}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	d := NewDialer()
	dial := func() *Conn {
		c, err := d.Dial(httpclienttest.Ctx(t), Options{Name: "up", Transport: "streamable_http", URL: hs.URL, ProtocolVersion: StatelessVersion})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	lister := dial()
	items, err := lister.ListAll(httpclienttest.Ctx(t), "tools/list", "tools")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, it := range items {
		var tl struct{ Name string }
		_ = json.Unmarshal(it, &tl)
		names = append(names, tl.Name)
	}
	if !slices.Equal(names, []string{"custom", "plain"}) {
		t.Errorf("tools/list kept %q, want [custom plain] (the invalid tools left out)", names)
	}

	args := `{"name":"custom","arguments":{"region":"us-west1","priority":42,"verbose":null,"debug":false,` +
		`"non_ascii":"Hello, 世界","opts":{"zone":"b"},"float_val":3.14,"query":"SELECT 1"}}`
	want := http.Header{
		"Mcp-Method":         {"tools/call"},
		"Mcp-Name":           {"custom"},
		"Mcp-Param-Region":   {"us-west1"},
		"Mcp-Param-Priority": {"42"},
		"Mcp-Param-Debug":    {"false"},
		"Mcp-Param-Nonascii": {"=?base64?SGVsbG8sIOS4lueVjA==?="},
		"Mcp-Param-Zone":     {"b"},
	}
	for _, c := range []struct {
		name string
		conn *Conn
	}{{"the listing connection", lister}, {"another connection to the server", dial()}} {
		if _, err := c.conn.Request(httpclienttest.Ctx(t), "tools/call", json.RawMessage(args)); err != nil {
			t.Fatal(err)
		}
		got := srv.lastCall(t)
		delete(got, "Mcp-Protocol-Version")
		if !equalHeaders(got, want) {
			t.Errorf("%s: tools/call headers %v, want %v", c.name, got, want)
		}
	}

	// A tool without annotations gets the standard headers only.
	if _, err := lister.Request(httpclienttest.Ctx(t), "tools/call", json.RawMessage(`{"name":"plain","arguments":{"q":"x"}}`)); err != nil {
		t.Fatal(err)
	}
	got := srv.lastCall(t)
	delete(got, "Mcp-Protocol-Version")
	if want := (http.Header{"Mcp-Method": {"tools/call"}, "Mcp-Name": {"plain"}}); !equalHeaders(got, want) {
		t.Errorf("plain: tools/call headers %v, want %v", got, want)
	}
}

func equalHeaders(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}
