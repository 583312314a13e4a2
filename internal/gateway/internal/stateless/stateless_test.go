package stateless

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/wire"
)

const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}`

func msg(t *testing.T, method, params string) *wire.Msg {
	t.Helper()
	m, err := wire.Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRead: the revision's _meta keys are taken out of what goes upstream, the rest
// stays, and the declared capabilities answer HasCap.
func TestRead(t *testing.T) {
	m := msg(t, "tools/call", `{"name":"x",`+meta+`,"io.modelcontextprotocol/logLevel":"info","progressToken":7},"requestState":"s1","inputResponses":{"a":{}}}`)
	req, status, fail := Read(m, Version)
	if fail != nil {
		t.Fatalf("Read: %d %s", status, fail)
	}
	if req.Level != "info" || req.State != "s1" || len(req.Inputs) != 1 || !req.HasCap("elicitation") || req.HasCap("sampling") {
		t.Fatalf("request %+v", req)
	}
	p := string(m.Params)
	if strings.Contains(p, "io.modelcontextprotocol/") || !strings.Contains(p, `"progressToken":7`) || !strings.Contains(p, `"requestState":"s1"`) {
		t.Errorf("params passed on: %s", p)
	}
}

func TestReadRefuses(t *testing.T) {
	cases := map[string]string{
		"no params":       `null`,
		"no _meta":        `{"name":"x"}`,
		"no version":      `{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}`,
		"no caps":         `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`,
		"caps not obj":    `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}}`,
		"bad log level":   `{` + meta + `,"io.modelcontextprotocol/logLevel":"loud"}}`,
		"_meta twice":     `{` + meta + `},` + meta + `}}`,
		"version twice":   `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`,
		"state no string": `{` + meta + `},"requestState":1}`,
	}
	for name, params := range cases {
		_, status, fail := Read(msg(t, "tools/list", params), Version)
		if fail == nil || status != http.StatusBadRequest || !strings.Contains(string(fail), `"code":-32602`) {
			t.Errorf("%s: status %d, %s; want 400 with invalid params", name, status, fail)
		}
	}
	_, status, fail := Read(msg(t, "tools/list", `{`+meta+`}}`), "2026-08-01")
	if status != http.StatusBadRequest || !strings.Contains(string(fail), `"code":-32020`) {
		t.Errorf("header and _meta versions differ: %d %s, want 400 with -32020", status, fail)
	}
}

func TestCheckHeaders(t *testing.T) {
	m := msg(t, "tools/call", `{"name":"héllo",`+meta+`}}`)
	cases := []struct {
		hdr  map[string][]string
		want string // part of the problem, "" for none
	}{
		{map[string][]string{"Mcp-Method": {"tools/call"}, "Mcp-Name": {"=?base64?aMOpbGxv?="}}, ""},
		{map[string][]string{"Mcp-Name": {"x"}}, "Mcp-Method header is required"},
		{map[string][]string{"Mcp-Method": {"tools/list"}}, "does not match"},
		{map[string][]string{"Mcp-Method": {"tools/call", "tools/call"}}, "malformed"},
		{map[string][]string{"Mcp-Method": {"tools/call"}}, "Mcp-Name header is required"},
		{map[string][]string{"Mcp-Method": {"tools/call"}, "Mcp-Name": {"other"}}, "does not match"},
		{map[string][]string{"Mcp-Method": {"tools/call"}, "Mcp-Name": {"héllo"}}, "malformed"},
		{map[string][]string{"Mcp-Method": {"tools/call"}, "Mcp-Name": {"=?base64?!!?="}}, "malformed"},
	}
	for i, c := range cases {
		r := &http.Request{Header: http.Header{}}
		for k, v := range c.hdr {
			r.Header[http.CanonicalHeaderKey(k)] = v
		}
		got := CheckHeaders(r, m)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("case %d: %q, want %q", i, got, c.want)
		}
	}
}

func TestCheckParamHeaders(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"number","x-mcp-header":"N"},"free":{"type":"string"}}}`)
	args := json.RawMessage(`{"region":"eu","n":2,"free":"x"}`)
	r := &http.Request{Header: http.Header{"Mcp-Param-Region": {"eu"}, "Mcp-Param-N": {"2.0"}}}
	if got := CheckParamHeaders(r, schema, args); got != "" {
		t.Errorf("matching headers: %q", got)
	}
	r.Header.Set("Mcp-Param-N", "3")
	if got := CheckParamHeaders(r, schema, args); !strings.Contains(got, "does not match") {
		t.Errorf("a header that differs from its argument: %q", got)
	}
	r.Header.Set("Mcp-Param-N", "2")
	r.Header.Del("Mcp-Param-Region")
	if got := CheckParamHeaders(r, schema, args); !strings.Contains(got, "Mcp-Param-Region header is required") {
		t.Errorf("a missing header: %q", got)
	}
	if got := CheckParamHeaders(&http.Request{Header: http.Header{}}, json.RawMessage(`{"properties":{}}`), args); got != "" {
		t.Errorf("a schema without x-mcp-header: %q", got)
	}
}

// TestCheckParamHeadersDeepSchema: a schema whose properties nest thousands of levels
// deep over a large leaf that names x-mcp-header (in a description) is checked in bounded
// time on every call: each level used to decode all that is below it again (minutes).
func TestCheckParamHeadersDeepSchema(t *testing.T) {
	const levels = 4000
	leaf := `{"type":"string","description":"x-mcp-header ` + strings.Repeat("x", 1<<20) + `"}`
	deep := strings.Repeat(`{"type":"object","properties":{"a":`, levels) + leaf + strings.Repeat(`}}`, levels)
	schema := json.RawMessage(`{"type":"object","properties":{"h":{"type":"string","x-mcp-header":"H"},"a":` + deep + `}}`)
	r := &http.Request{Header: http.Header{"Mcp-Param-H": {"v"}}}
	start := time.Now()
	got := CheckParamHeaders(r, schema, json.RawMessage(`{"h":"v","a":{"a":{"a":"x"}}}`))
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("checking took %v", took)
	}
	if got != "" {
		t.Errorf("matching header: %q", got)
	}
}

// TestCheckHeadersTasks: the Tasks extension's tasks/* mirror their taskId in Mcp-Name.
func TestCheckHeadersTasks(t *testing.T) {
	m := msg(t, "tasks/get", `{"taskId":"mcpgw-task-abc",`+meta+`}}`)
	for hdr, want := range map[string]string{"mcpgw-task-abc": "", " mcpgw-task-abc ": "", "other": "does not match", "": "does not match"} {
		r := &http.Request{Header: http.Header{"Mcp-Method": {"tasks/get"}, "Mcp-Name": {hdr}}}
		if got := CheckHeaders(r, m); (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("Mcp-Name %q: %q, want %q", hdr, got, want)
		}
	}
	r := &http.Request{Header: http.Header{"Mcp-Method": {"tasks/cancel"}}}
	if got := CheckHeaders(r, msg(t, "tasks/cancel", `{"taskId":"x",`+meta+`}}`)); !strings.Contains(got, "required") {
		t.Errorf("no Mcp-Name on tasks/cancel: %q", got)
	}
	// A taskId of another type is the method's error, not a header mismatch.
	if got := CheckHeaders(r, msg(t, "tasks/cancel", `{"taskId":7,`+meta+`}}`)); got != "" {
		t.Errorf("taskId 7: %q", got)
	}
}
