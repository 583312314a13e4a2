package admin_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// The orchestrator seed keeps an executor's policy as a JSON string under
// config.mcp_policy, and calls url_rewrite http_url_rewrite. The executors API takes both,
// stores the gateway's shape, and says which field is wrong when the string is bad.
func TestExecutorSeedPolicyShape(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.AdminYAML)
	rewritten := strings.Replace(gatewaytest.EverythingURL(), "http://127.0.0.1", "http://host.docker.internal", 1)
	seed := `{"type":"local_docker","config":{"mcp_policy":"{\"allow_stdio\":false,\"http_url_rewrite\":{\"http://127.0.0.1\":\"http://host.docker.internal\"}}"}}`
	if a := g.API(t, http.MethodPut, "/api/executors/box", seed, nil); a.Status != http.StatusCreated {
		t.Fatalf("PUT of the seed's shape: %s", a)
	}
	a := g.API(t, http.MethodGet, "/api/executors/box", "", nil)
	pol, _ := a.Obj["mcp_policy"].(map[string]any)
	rw, _ := pol["url_rewrite"].(map[string]any)
	if pol["allow_stdio"] != false || rw["http://127.0.0.1"] != "http://host.docker.internal" {
		t.Errorf("GET /api/executors/box: %s", a)
	}
	if a := g.API(t, http.MethodGet, "/api/resolve?executor=box", "", nil); !strings.Contains(string(a.Raw), rewritten) {
		t.Errorf("the stored policy does not rewrite: %s", a)
	}
	// The seed's key in the gateway's shape too, and in a merge patch.
	if a := g.API(t, http.MethodPut, "/api/executors/plain", `{"type":"local_pc","mcp_policy":{"http_url_rewrite":{"http://127.0.0.1":"http://10.0.0.1"}}}`, nil); a.Status != http.StatusCreated ||
		!strings.Contains(string(a.Raw), `"url_rewrite"`) {
		t.Errorf("PUT with mcp_policy.http_url_rewrite: %s", a)
	}
	if a := g.API(t, http.MethodPatch, "/api/executors/plain", `{"config":{"mcp_policy":"{\"allow_sse\":false}"}}`, nil); a.Status != http.StatusOK ||
		!strings.Contains(string(a.Raw), `"allow_sse": false`) || !strings.Contains(string(a.Raw), `"http://10.0.0.1"`) {
		t.Errorf("PATCH with the seed's shape: %s", a)
	}
	for _, tc := range []struct{ body, field, msg string }{
		{`{"type":"local_pc","config":{"mcp_policy":"{\"allow_stdio\": fals}"}}`, "config.mcp_policy", "not a JSON object"},
		{`{"type":"local_pc","config":{"mcp_policy":"[1]"}}`, "config.mcp_policy", "not a JSON object"},
		{`{"type":"local_pc","config":{"mcp_policy":"{\"allow_ftp\":true}"}}`, "config.mcp_policy.allow_ftp", "unknown field"},
		{`{"type":"local_pc","config":{"mcp_policy":"{\"allow_stdio\":\"yes\"}"}}`, "config.mcp_policy.allow_stdio", "must be"},
		{`{"type":"local_pc","config":{"mcp_policy":"{}","colour":1}}`, "config.colour", "unknown field"},
		{`{"type":"local_pc","config":"x"}`, "config", "object"},
		{`{"type":"local_pc","mcp_policy":{},"config":{"mcp_policy":"{}"}}`, "config.mcp_policy", "send one"},
		{`{"type":"local_pc","mcp_policy":{"url_rewrite":{},"http_url_rewrite":{}}}`, "mcp_policy.http_url_rewrite", "send one"},
	} {
		a := g.API(t, http.MethodPut, "/api/executors/bad", tc.body, nil)
		if a.Status != http.StatusBadRequest || !slices.ContainsFunc(a.FieldErrors(), func(e string) bool {
			return strings.HasPrefix(e, tc.field+": ") && strings.Contains(e, tc.msg)
		}) {
			t.Errorf("PUT %s: %s, want 400 naming %s (%q)", tc.body, a, tc.field, tc.msg)
		}
	}
}
