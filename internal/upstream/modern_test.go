package upstream

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestAutoVersion: with AutoVersion a connection asks server/discover first and stays on
// the stateless revision when the server lists it; a server that does not (a session
// server's discover, or none at all) is initialized on the session revision, without the
// stateless revision's headers.
func TestAutoVersion(t *testing.T) {
	for _, tc := range []struct {
		name     string
		discover string // the result or error members of the server/discover answer
		modern   bool
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
			if c.Modern != tc.modern {
				t.Fatalf("Modern = %v (protocol %s), want %v", c.Modern, c.ProtocolVersion, tc.modern)
			}
			mu.Lock()
			defer mu.Unlock()
			if tc.modern {
				if c.ProtocolVersion != ModernVersion || initHeader != nil {
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
