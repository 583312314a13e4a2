package gateway_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// TestOpenAPIMatchesRoutes: every route the admin API serves is in GET /api/openapi.json,
// and every operation the document lists is served (an OPTIONS-free probe: a request of
// that method and path must not answer 404 "no admin API route" or 405).
func TestOpenAPIMatchesRoutes(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.AdminYAML)
	a := g.API(t, "GET", "/api/openapi.json", "", nil)
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if a.Status != 200 || json.Unmarshal(a.Raw, &doc) != nil || doc.OpenAPI != "3.1.0" {
		t.Fatalf("GET /api/openapi.json: %s", a)
	}
	var documented []string
	for path, ops := range doc.Paths {
		for m := range ops {
			documented = append(documented, strings.ToUpper(m)+" "+path)
		}
	}
	slices.Sort(documented)
	served := g.Gateway.AdminRoutes()
	slices.Sort(served)
	if !slices.Equal(documented, served) {
		t.Errorf("the document and the router differ:\n documented %v\n served     %v", documented, served)
	}
	// Each documented operation is routed: with placeholders filled it reaches a handler
	// (whatever that handler then answers), never the router's 404 or 405.
	for _, op := range documented {
		method, path, _ := strings.Cut(op, " ")
		path = strings.NewReplacer("{id}", "x", "{name}", "x").Replace(path)
		body := ""
		if method == "POST" || method == "PUT" || method == "PATCH" {
			body = "{}"
		}
		r := g.API(t, method, path, body, nil)
		if strings.Contains(string(r.Raw), "no admin API route") || r.Status == http.StatusMethodNotAllowed {
			t.Errorf("%s is documented but not routed: %s", op, r)
		}
	}
}
