package dispatch_test

// A plugin's resource-type schemas are input the gateway does not control: an
// out-of-process plugin sends them over gRPC, and the sql plugin derives them from a
// database. The tools generated from a schema that cannot be validated within bounds
// (internal/schemabound) must be served and their calls reach the provider with only the
// gateway's own arguments checked, never crash or stall the daemon.

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/plugin"
	"github.com/mcpgw/mcpgw/plugin/plugintest"
)

// hostileTypes is the plugintest fixture whose Deployment schema has a property "spec"
// that is a $ref cycle applying to the same value: validating any object against it
// recursed without end (before the bound, a stack overflow killed the test binary).
type hostileTypes struct{ *plugintest.Fixture }

const selfRefResource = `{"type":"object","required":["name"],"properties":{"name":{"type":"string"},
	"spec":{"$ref":"#/$defs/a"}},"$defs":{"a":{"anyOf":[{"$ref":"#/$defs/a"},{"type":"object"}]}}}`

func (h hostileTypes) ResourceSchema(ctx context.Context, conn, key string) (*jsonschema.Schema, error) {
	if key != plugintest.Deployment {
		return h.Fixture.ResourceSchema(ctx, conn, key)
	}
	var s jsonschema.Schema
	err := json.Unmarshal([]byte(selfRefResource), &s)
	return &s, err
}

// TestPluginHostileSchemaCallReachesProvider: a go plugin whose resource type's schema
// is a $ref cycle; its create tool is listed, a call through the gateway reaches the
// provider (the schema is not validated), the gateway's own arguments are still checked
// (an unknown connection is refused), and the refusal is said in the log with the tool.
func TestPluginHostileSchemaCallReachesProvider(t *testing.T) {
	fx := hostileTypes{plugintest.New()}
	g := gatewaytest.StartProviding(t, `
listen: {{listen}}
state_dir: {{state_dir}}
store: memory
http: {handshake: full}
plugins:
  k8s: {type: go}
`, registry.Options{}, map[string]plugin.Plugin{"k8s": fx})
	sid := g.Initialize(t, "2025-11-25", "")
	names := g.ToolNames(t, sid)
	create := ""
	for _, n := range names {
		if strings.Contains(n, "Deployment") && strings.HasSuffix(n, "_create") {
			create = n
		}
	}
	if create == "" {
		t.Fatalf("no Deployment create tool in %v", names)
	}

	res := g.CallTool(t, sid, create, `{"connectionId":"prod","name":"api","spec":{"replicas":3}}`)
	if res.IsError {
		t.Fatalf("create with a hostile schema: %s; want the call to reach the provider", res.Text())
	}
	if !slices.Contains(fx.Calls, "create prod "+plugintest.Deployment) {
		t.Errorf("the provider saw %v; want the create call", fx.Calls)
	}

	// The gateway's own arguments are still checked.
	res = g.CallTool(t, sid, create, `{"connectionId":"nowhere","name":"api2","spec":{}}`)
	if !res.IsError || !strings.Contains(res.Text(), "nowhere") {
		t.Errorf("create on an unknown connection: %+v; want it refused", res)
	}
	res = g.CallTool(t, sid, create, `{"name":"api3","spec":{}}`)
	if !res.IsError || !strings.Contains(res.Text(), "connectionId") {
		t.Errorf("create without connectionId: %+v; want it refused by the control schema", res)
	}
	// Other tools of the plugin are still validated whole.
	get := strings.TrimSuffix(create, "_create") + "_get"
	res = g.CallTool(t, sid, get, `{"connectionId":"prod","id":"web","extra":1}`)
	if !res.IsError || !strings.Contains(res.Text(), "invalid arguments") {
		t.Errorf("get with an unknown argument: %+v; want it refused by the schema", res)
	}
	if v := g.MetricValue(t, `mcpgw_unvalidated_calls_total{reason="schema",server="k8s"}`); v != 1 {
		t.Errorf("unvalidated plugin calls for their schema: %v, want 1 (the create that reached the provider)", v)
	}
	if log := g.Log.String(); !strings.Contains(log, "within bounds") || !strings.Contains(log, "Deployment") {
		t.Errorf("the log does not say the Deployment schema is refused:\n%s", log)
	}
}
