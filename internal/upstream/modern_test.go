package upstream

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestRefusesInitialize(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"method not found", &RPCError{Code: -32601, Raw: json.RawMessage(`{"code":-32601,"message":"Method not found"}`)}, true},
		{"missing version header", &RPCError{Code: -32020, Raw: json.RawMessage(`{"code":-32020,"message":"Missing MCP-Protocol-Version header"}`)}, true},
		{"unsupported version naming 2026-07-28", &RPCError{Code: -32022, Raw: json.RawMessage(`{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"]}}`)}, true},
		{"unsupported version, other revisions", &RPCError{Code: -32022, Raw: json.RawMessage(`{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2024-11-05"]}}`)}, false},
		{"invalid params", &RPCError{Code: -32602, Raw: json.RawMessage(`{"code":-32602,"message":"bad clientInfo"}`)}, false},
		{"not an RPC error", errors.New("connection refused"), false},
	} {
		if got := refusesInitialize(tc.err); got != tc.want {
			t.Errorf("%s: refusesInitialize = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// headerStrictServer is a server of the stateless revision only, as the conformance
// suite's are: a POST without MCP-Protocol-Version gets HTTP 400 with error -32020 and the
// request's id, whatever its method.
type headerStrictServer struct{}

func (headerStrictServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&m) != nil {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("Mcp-Protocol-Version") == "" {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32020,"message":"Missing MCP-Protocol-Version header"}}`))
		return
	}
	result := `{}`
	if m.Method == "server/discover" {
		result = `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}`
	}
	_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + result + `}`))
}

// TestDialHeaderStrictModernServer: with no protocol_version configured, an upstream that
// refuses the session-era initialize for its missing MCP-Protocol-Version header (-32020)
// is reached on the stateless revision, not left down.
func TestDialHeaderStrictModernServer(t *testing.T) {
	hs := httptest.NewServer(headerStrictServer{})
	defer hs.Close()
	c, err := NewDialer().Dial(testCtx(t), Options{Name: "strict", Transport: "streamable_http", URL: hs.URL})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.Close()
	if !c.Modern || c.ProtocolVersion != ModernVersion {
		t.Errorf("Modern %v, ProtocolVersion %q; want the stateless revision", c.Modern, c.ProtocolVersion)
	}
}
