package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/httpclient/httpclienttest"
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

// TestDialHeaderStrictStatelessServer: with no protocol_version configured, an upstream that
// refuses the session-era initialize for its missing MCP-Protocol-Version header (-32020)
// is reached on the stateless revision, not left down.
func TestDialHeaderStrictStatelessServer(t *testing.T) {
	hs := httptest.NewServer(headerStrictServer{})
	defer hs.Close()
	c, err := NewDialer().Dial(httpclienttest.Ctx(t), Options{Name: "strict", Transport: "streamable_http", URL: hs.URL})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.Close()
	if !c.Stateless || c.ProtocolVersion != StatelessVersion {
		t.Errorf("Stateless %v, ProtocolVersion %q; want the stateless revision", c.Stateless, c.ProtocolVersion)
	}
}

// TestAutoVersion: with AutoVersion a connection asks server/discover first and stays on
// the stateless revision when the server lists it; a server that does not (a session
// server's discover, or none at all) is initialized on the session revision, without the
// stateless revision's headers.
func TestAutoVersion(t *testing.T) {
	for _, tc := range []struct {
		name      string
		discover  string // the result or error members of the server/discover answer
		stateless bool
	}{
		{"lists 2026-07-28", `"result":{"supportedVersions":["2026-07-28","2025-11-25"],"capabilities":{"tools":{}}}`, true},
		{"session server", `"result":{"supportedVersions":["2025-11-25","2025-06-18"],"capabilities":{"tools":{}}}`, false},
		{"unknown method", `"error":{"code":-32601,"message":"Method not found"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var initHeader http.Header
			var initVersion string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPost {
					w.WriteHeader(http.StatusMethodNotAllowed)
					return
				}
				var m struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
					Params struct {
						ProtocolVersion string `json:"protocolVersion"`
					} `json:"params"`
				}
				_ = json.NewDecoder(r.Body).Decode(&m)
				if m.ID == nil {
					w.WriteHeader(http.StatusAccepted)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				switch m.Method {
				case "server/discover":
					_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,` + tc.discover + `}`))
				case "initialize":
					mu.Lock()
					initHeader, initVersion = r.Header.Clone(), m.Params.ProtocolVersion
					mu.Unlock()
					_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`))
				default:
					_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{}}`))
				}
			}))
			defer srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := NewDialer().Dial(ctx, Options{Name: "up", Transport: "streamable_http", URL: srv.URL, ProtocolVersion: AutoVersion, ConnectTimeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.Stateless != tc.stateless {
				t.Fatalf("Stateless = %v (protocol %s), want %v", c.Stateless, c.ProtocolVersion, tc.stateless)
			}
			mu.Lock()
			defer mu.Unlock()
			if tc.stateless {
				if c.ProtocolVersion != StatelessVersion || initHeader != nil {
					t.Errorf("protocol %s, initialize sent: %v", c.ProtocolVersion, initHeader != nil)
				}
				return
			}
			if c.ProtocolVersion != SessionVersion || initVersion != SessionVersion {
				t.Errorf("protocol %s, initialize offered %q, want %s", c.ProtocolVersion, initVersion, SessionVersion)
			}
			for _, h := range []string{"Mcp-Method", "Mcp-Protocol-Version"} {
				if v := initHeader.Get(h); v != "" {
					t.Errorf("initialize after the probe carries %s: %s", h, v)
				}
			}
			if strings.Contains(initHeader.Get("Mcp-Method"), "discover") {
				t.Error("stale Mcp-Method")
			}
		})
	}
}

// TestDiscoverRetriesOnVersionRejection: a server that refuses the first request with
// -32022 while listing 2026-07-28 among its supported versions is asked again, as a
// client retries with a supported version, and the connection ends up on that revision
// instead of falling back to a session-era initialize.
func TestDiscoverRetriesOnVersionRejection(t *testing.T) {
	var mu sync.Mutex
	var methods []string
	rejected := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&m) != nil {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		mu.Lock()
		methods = append(methods, m.Method)
		first := !rejected
		rejected = true
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if first {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2026-07-28"}}}`))
			return
		}
		result := `{}`
		if m.Method == "server/discover" {
			result = `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}`
		}
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + result + `}`))
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := NewDialer().Dial(ctx, Options{Name: "up", Transport: "streamable_http", URL: srv.URL, ProtocolVersion: AutoVersion, ConnectTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	mu.Lock()
	defer mu.Unlock()
	if !c.Stateless || c.ProtocolVersion != StatelessVersion {
		t.Errorf("Stateless %v, protocol %s; want the stateless revision after one retry", c.Stateless, c.ProtocolVersion)
	}
	if len(methods) < 2 || methods[0] != "server/discover" || methods[1] != "server/discover" || slices.Contains(methods, "initialize") {
		t.Errorf("requests %v, want server/discover twice and no initialize", methods)
	}
}
