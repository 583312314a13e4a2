package gateway_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// TestRefusalsAuditedFirstTenThenEveryTenth: refused requests without a credential or
// with a wrong bearer are audit lines as docs/security.md promises, every one of the first
// ten of a source, then every tenth, so a flood of them cannot fill the audit log; the
// lines say the source and how many it has sent.
func TestRefusalsAuditedFirstTenThenEveryTenth(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.AdminYAML+"auth:\n  mode: api_key\n  api_keys:\n    - {agent: a1, sha256: "+
		strings.Repeat("ab", 32)+"}\n")
	send := func(bearer string) {
		t.Helper()
		r, _ := http.NewRequest("POST", g.Base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		if bearer != "" {
			r.Header.Set("Authorization", "Bearer "+bearer)
		}
		res, err := gatewaytest.Client().Do(r)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("a request with bearer %q: %d, want 401", bearer, res.StatusCode)
		}
	}
	for range 200 {
		send("wrong-key")
	}
	for range 100 {
		send("")
	}
	send("last") // the 301st of this source: the next line after the 300th
	// 10 of the first 10, then the 20th, 30th … 300th: 39 lines.
	auditPath := filepath.Join(g.Gateway.FileConfig().StateDir, "audit.jsonl")
	lines := gatewaytest.WaitAudit(t, auditPath, func(ls []map[string]any) bool {
		for _, l := range ls {
			if strings.Contains(l["rule"].(string), "(300 from this source)") {
				return true
			}
		}
		return len(ls) >= 301
	})
	denials := 0
	for _, l := range lines {
		if l["kind"] == "denial" {
			denials++
			if l["actor"] == "" || l["actor"] == nil {
				t.Errorf("a denial line without its source: %v", l)
			}
		}
	}
	if denials != 39 {
		t.Fatalf("301 refused requests from one source wrote %d audit lines, want 39 (the first ten, then every tenth)", denials)
	}
}
