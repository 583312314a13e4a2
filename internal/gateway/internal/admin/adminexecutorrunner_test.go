package admin_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// An executor's runner keys go through the executors API like its policy: a PUT that
// names them keeps them (a PUT without them would otherwise take the runner away and run
// the executor's stdio servers on the gateway's host), GET shows them, a merge patch of
// the policy leaves them, /api/runners lists the executor's runner, and a key
// that is not a SHA-256 digest is refused naming the field.
func TestExecutorAPIRunnerKeys(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.AdminYAML)
	digest := strings.Repeat("ab", 32)
	body := `{"type":"local_docker","runner":{"keys":["` + digest + `"]}}`
	if a := g.API(t, http.MethodPut, "/api/executors/box", body, nil); a.Status != http.StatusCreated {
		t.Fatalf("PUT with runner keys: %s", a)
	}
	if a := g.API(t, http.MethodGet, "/api/executors/box", "", nil); !strings.Contains(string(a.Raw), digest) {
		t.Errorf("GET /api/executors/box does not show the runner key: %s", a)
	}
	if a := g.API(t, http.MethodPatch, "/api/executors/box", `{"mcp_policy":{"allow_sse":false}}`, nil); a.Status != http.StatusOK ||
		!strings.Contains(string(a.Raw), digest) {
		t.Errorf("PATCH of the policy dropped the runner key: %s", a)
	}
	if a := g.API(t, http.MethodGet, "/api/runners", "", nil); !strings.Contains(string(a.Raw), `"box"`) {
		t.Errorf("/api/runners does not list box, whose runner the API configured: %s", a)
	}
	if a := g.API(t, http.MethodPut, "/api/executors/bad", `{"type":"local_docker","runner":{"keys":["not-a-digest"]}}`, nil); a.Status != http.StatusBadRequest ||
		!strings.Contains(string(a.Raw), "runner") {
		t.Errorf("PUT with a malformed runner key: %s, want 400 naming the runner", a)
	}
}
