package plugin_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcpgw/mcpgw/plugin"
	"github.com/mcpgw/mcpgw/plugin/plugintest"
)

func text(r *plugin.Result) string { return r.Text() }

func call(t *testing.T, ts *plugin.ToolSet, name, args string, o plugin.CallOptions) *plugin.Result {
	t.Helper()
	r, err := ts.Call(context.Background(), name, json.RawMessage(args), o)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

// wantRefused checks a refusal: isError, the message has every want, and the provider (f,
// when not nil, its Calls empty before the call) was not called.
func wantRefused(t *testing.T, f *plugintest.Fixture, r *plugin.Result, wants ...string) {
	t.Helper()
	if !r.IsError {
		t.Fatalf("want an isError result, got %s", text(r))
	}
	for _, w := range wants {
		if !strings.Contains(text(r), w) {
			t.Errorf("error %q does not say %q", text(r), w)
		}
	}
	if f != nil && len(f.Calls) > 0 {
		t.Errorf("the provider was called although the call was refused: %v", f.Calls)
	}
}

// structuredMatches checks the result's structuredContent against the tool's outputSchema,
// as a client that validates would.
func structuredMatches(t *testing.T, ts *plugin.ToolSet, name string, r *plugin.Result) map[string]any {
	t.Helper()
	if r.IsError {
		t.Fatalf("%s: %s", name, text(r))
	}
	raw := r.StructuredContent
	if raw == nil {
		t.Fatalf("%s: no structuredContent", name)
	}
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if text(r) != string(raw) {
		t.Errorf("%s: text content %s differs from structuredContent %s", name, text(r), raw)
	}
	out := ts.Lookup(name).Def.OutputSchema
	if out == nil {
		return v
	}
	b, _ := json.Marshal(out)
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := rs.Validate(v); err != nil {
		t.Errorf("%s: structuredContent %s does not match the outputSchema: %v", name, raw, err)
	}
	return v
}

func TestCallValidationRefusal(t *testing.T) {
	c, f := loadFixture(t)
	ts := c.Tools(plugin.Options{Name: gatewayNames})
	for _, tc := range []struct {
		name, args string
		wants      []string
	}{
		{"kubernetes_core_v1_Pod_get", `{"connectionId":"prod"}`, []string{"invalid arguments", "id"}},
		{"kubernetes_core_v1_Pod_get", `{"connectionId":"prod","id":"web-0","color":"red"}`, []string{"invalid arguments", "color"}},
		{"kubernetes_core_v1_Pod_list", `{"connectionId":"prod","pageSize":"ten"}`, []string{"invalid arguments"}},
		{"kubernetes_core_v1_Pod_list", `{"connectionId":"prod","pageSize":5000}`, []string{"invalid arguments"}},
		{"kubernetes_core_v1_Pod_list", `[1,2]`, []string{"JSON object"}},
		{"kubernetes_core_v1_Pod_list", `{"connectionId":`, []string{"invalid arguments"}},
		{"kubernetes_core_v1_Pod_list", `{}`, []string{"connectionId"}},
		{"kubernetes_core_v1_Pod_list", `{"connectionId":"dev"}`, []string{`connection "dev" is not available`, "prod, staging"}},
		{"kubernetes_batch_v1_Job_get", `{"connectionId":"prod","id":"migrate"}`, []string{`connection "prod" is not available`, "staging"}},
		{"kubernetes_apps_v1_Deployment_scale", `{"connectionId":"prod","id":"web"}`, []string{"invalid arguments", "replicas"}},
		{"kubernetes_apps_v1_Deployment_scale", `{"connectionId":"prod","id":"web","replicas":-1}`, []string{"invalid arguments"}},
		{"kubernetes_apps_v1_Deployment_create", `{"connectionId":"prod","name":"api"}`, []string{"invalid arguments", "image"}},
		{"kubernetes_core_v1_Pod_find", `{"connectionId":"prod","filter":[{"field":"phase","operator":"lt","value":"Running"}]}`, []string{`field "phase" does not take operator "lt"`, "eq, neq, in"}},
		{"kubernetes_core_v1_Pod_find", `{"connectionId":"prod","filter":[{"field":"owner","operator":"eq","value":"x"}]}`, []string{"invalid arguments"}},
		{"kubernetes_core_v1_Pod_find", `{"connectionId":"prod","filter":[{"field":"restarts","operator":"eq","value":"3"}]}`, []string{`value "3" is not a integer`}},
		{"kubernetes_core_v1_Pod_find", `{"connectionId":"prod","filter":[{"field":"phase","operator":"in","value":[]}]}`, []string{"non-empty array"}},
		{"kubernetes_core_v1_Pod_find", `{"connectionId":"prod","filter":[{"field":"node","operator":"is_null","value":"yes"}]}`, []string{"true or false"}},
		{"kubernetes_core_v1_Pod_find", `{"connectionId":"prod","filter":[{"field":"phase","operator":"eq"}]}`, []string{"needs a value"}},
	} {
		f.Calls = nil
		r := call(t, ts, tc.name, tc.args, plugin.CallOptions{})
		wantRefused(t, f, r, tc.wants...)
	}
	if _, err := ts.Call(context.Background(), "kubernetes_core_v1_Pod_explode", nil, plugin.CallOptions{}); !errors.Is(err, plugin.ErrUnknownTool) {
		t.Errorf("an unknown tool: %v", err)
	}
}

func TestCallProviderErrorIsError(t *testing.T) {
	c, f := loadFixture(t)
	ts := c.Tools(plugin.Options{Name: gatewayNames})
	f.Fail = errors.New("cluster prod unreachable: dial tcp 10.0.0.1:6443: connection refused")
	r := call(t, ts, "kubernetes_core_v1_Pod_get", `{"connectionId":"prod","id":"web-0"}`, plugin.CallOptions{})
	if !r.IsError || text(r) != f.Fail.Error() {
		t.Errorf("want isError with the provider's message, got %v %q", r.IsError, text(r))
	}
	if r.StructuredContent != nil {
		t.Errorf("an error result carries structuredContent %v", r.StructuredContent)
	}
	f.Fail = nil
	r = call(t, ts, "kubernetes_core_v1_Pod_get", `{"connectionId":"prod","id":"web-9"}`, plugin.CallOptions{})
	if !r.IsError || !strings.Contains(text(r), `"web-9"`) || !strings.Contains(text(r), "not found") {
		t.Errorf("a missing pod: %v %q", r.IsError, text(r))
	}
	f.Panic = "index out of range"
	r = call(t, ts, "kubernetes_core_v1_Pod_list", `{"connectionId":"prod"}`, plugin.CallOptions{})
	if !r.IsError || !strings.Contains(text(r), "internal error: index out of range") {
		t.Errorf("a panicking provider: %v %q", r.IsError, text(r))
	}
}

func TestCallConfirmArgument(t *testing.T) {
	c, f := loadFixture(t)
	ts := c.Tools(plugin.Options{Name: gatewayNames})
	for _, tc := range []struct{ name, args string }{
		{"kubernetes_core_v1_Pod_delete", `{"connectionId":"prod","id":"web-0"}`},
		{"kubernetes_core_v1_Pod_delete", `{"connectionId":"prod","id":"web-0","confirm":false}`},
		{"kubernetes_core_v1_Pod_delete", `{"connectionId":"prod","id":"web-0","confirm":"yes"}`},
		{"kubernetes_apps_v1_Deployment_restart", `{"connectionId":"prod","id":"web"}`},
	} {
		f.Calls = nil
		wantRefused(t, f, call(t, ts, tc.name, tc.args, plugin.CallOptions{}), "cannot be undone", `"confirm": true`)
	}
	r := call(t, ts, "kubernetes_core_v1_Pod_delete", `{"connectionId":"prod","id":"web-0","confirm":true}`, plugin.CallOptions{})
	if v := structuredMatches(t, ts, "kubernetes_core_v1_Pod_delete", r); v["name"] != "web-0" {
		t.Errorf("delete returned %v", v)
	}
	if r := call(t, ts, "kubernetes_core_v1_Pod_get", `{"connectionId":"prod","id":"web-0"}`, plugin.CallOptions{}); !r.IsError {
		t.Error("web-0 is still there after its delete")
	}
	r = call(t, ts, "kubernetes_apps_v1_Deployment_restart", `{"connectionId":"prod","id":"web","confirm":true}`, plugin.CallOptions{})
	if r.IsError || text(r) != "restarted web" {
		t.Errorf("restart: %v %q", r.IsError, text(r))
	}
}

func TestCallConfirmElicitation(t *testing.T) {
	c, f := loadFixture(t)
	ts := c.Tools(plugin.Options{Name: gatewayNames, Elicitation: true})
	args := `{"connectionId":"staging","id":"web-1"}`
	wantRefused(t, f, call(t, ts, "kubernetes_core_v1_Pod_delete", args, plugin.CallOptions{}), "cannot be asked")

	var asked []string
	answer := false
	o := plugin.CallOptions{Confirm: func(_ context.Context, msg string) (bool, error) {
		asked = append(asked, msg)
		return answer, nil
	}}
	wantRefused(t, f, call(t, ts, "kubernetes_core_v1_Pod_delete", args, o), "declined", "nothing was changed")
	if len(asked) != 1 || !strings.Contains(asked[0], `core::v1::Pod "web-1"`) || !strings.Contains(asked[0], `"staging"`) {
		t.Errorf("the question: %q", asked)
	}
	// Invalid arguments are refused before the user is bothered.
	call(t, ts, "kubernetes_core_v1_Pod_delete", `{"connectionId":"staging"}`, o)
	if len(asked) != 1 {
		t.Errorf("asked about an invalid call: %q", asked)
	}
	o2 := plugin.CallOptions{Confirm: func(context.Context, string) (bool, error) { return false, errors.New("client went away") }}
	wantRefused(t, nil, call(t, ts, "kubernetes_core_v1_Pod_delete", args, o2), "client went away")
	answer = true
	r := call(t, ts, "kubernetes_core_v1_Pod_delete", args, o)
	if r.IsError || !slices.Equal(f.Calls, []string{"delete staging core::v1::Pod"}) {
		t.Errorf("accepted delete: %v %q, calls %v", r.IsError, text(r), f.Calls)
	}
	// The confirm argument is not part of this view: sending it is an unknown property.
	if r := call(t, ts, "kubernetes_core_v1_Pod_delete", `{"connectionId":"staging","id":"web-2","confirm":true}`, o); !r.IsError {
		t.Error("confirm accepted in an elicitation view")
	}
}

func TestCallScopedConnection(t *testing.T) {
	c, f := loadFixture(t)
	ts := c.Tools(plugin.Options{Name: gatewayNames, Connections: []string{"staging"}, ReadOnly: true})
	wantRefused(t, f, call(t, ts, "kubernetes_core_v1_Pod_get", `{"connectionId":"prod","id":"web-0"}`, plugin.CallOptions{}),
		`connection "prod" is not available to this session`)
	if _, err := ts.Call(context.Background(), "kubernetes_core_v1_Pod_delete", json.RawMessage(`{"connectionId":"staging","id":"web-0","confirm":true}`), plugin.CallOptions{}); !errors.Is(err, plugin.ErrUnknownTool) {
		t.Errorf("a read-only view dispatched a delete: %v", err)
	}
	r := call(t, ts, "kubernetes_list_connections", `{}`, plugin.CallOptions{})
	v := structuredMatches(t, ts, "kubernetes_list_connections", r)
	if b, _ := json.Marshal(v); string(b) != `{"connections":[{"description":"the staging cluster","id":"staging","status":"connected"}]}` {
		t.Errorf("list_connections in a staging view: %s", b)
	}
	r = call(t, ts, "kubernetes_list_resource_types", `{"connectionId":"staging"}`, plugin.CallOptions{})
	v = structuredMatches(t, ts, "kubernetes_list_resource_types", r)
	b, _ := json.Marshal(v)
	if !strings.Contains(string(b), `"key":"batch::v1::Job"`) || strings.Contains(string(b), "_delete") || strings.Contains(string(b), "prod") {
		t.Errorf("list_resource_types: %s", b)
	}
	// Each type carries its capability flags: Job can be found but is not filterable (so
	// it has no find tool), and offers no writes.
	for _, rt := range v["resourceTypes"].([]any) {
		m := rt.(map[string]any)
		if m["key"] != "batch::v1::Job" {
			continue
		}
		got, _ := json.Marshal(m["capabilities"])
		if want := `{"canCreate":false,"canDelete":false,"canFind":true,"canGet":true,"canList":true,"canUpdate":false,"filterable":false,"hasActions":false,"hasSchema":true}`; string(got) != want {
			t.Errorf("Job's capabilities: %s, want %s", got, want)
		}
	}
	r = call(t, ts, "kubernetes_list_namespaces", `{"connectionId":"staging"}`, plugin.CallOptions{})
	if v := structuredMatches(t, ts, "kubernetes_list_namespaces", r); len(v["namespaces"].([]any)) != 2 {
		t.Errorf("namespaces: %v", v)
	}
}

func TestCallFindAndPages(t *testing.T) {
	c, f := loadFixture(t)
	ts := c.Tools(plugin.Options{Name: gatewayNames})
	const name = "kubernetes_core_v1_Pod_find"
	args := `{"connectionId":"prod","pageSize":1,"filter":[{"field":"phase","operator":"in","value":["Running","Pending"]},{"field":"restarts","operator":"gte","value":1.0}]}`
	v := structuredMatches(t, ts, name, call(t, ts, name, args, plugin.CallOptions{}))
	items := v["items"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["name"] != "web-1" || v["nextCursor"] == nil {
		t.Fatalf("first page: %v", v)
	}
	args = strings.Replace(args, `"pageSize":1`, `"pageSize":1,"cursor":"`+v["nextCursor"].(string)+`"`, 1)
	v = structuredMatches(t, ts, name, call(t, ts, name, args, plugin.CallOptions{}))
	if items := v["items"].([]any); len(items) != 1 || items[0].(map[string]any)["name"] != "web-2" || v["nextCursor"] != nil {
		t.Errorf("second page: %v", v)
	}
	v = structuredMatches(t, ts, name, call(t, ts, name, `{"connectionId":"prod","textQuery":"web-3","filter":[{"field":"node","operator":"is_null","value":true}]}`, plugin.CallOptions{}))
	if items := v["items"].([]any); len(items) != 1 || items[0].(map[string]any)["phase"] != "Failed" {
		t.Errorf("textQuery: %v", v)
	}
	// Integers reach the provider as int64, not float64.
	f.Calls = nil
	r := call(t, ts, "kubernetes_apps_v1_Deployment_scale", `{"connectionId":"prod","id":"web","replicas":9007199254740993}`, plugin.CallOptions{})
	structuredMatches(t, ts, "kubernetes_apps_v1_Deployment_scale", r)
	if text(r) != `{"replicas":9007199254740993}` {
		t.Errorf("scale: %s", text(r))
	}
	v = structuredMatches(t, ts, "kubernetes_apps_v1_Deployment_create",
		call(t, ts, "kubernetes_apps_v1_Deployment_create", `{"connectionId":"prod","namespace":"team-a","name":"api","image":"api:2"}`, plugin.CallOptions{}))
	if v["namespace"] != "team-a" || v["replicas"] != 1.0 {
		t.Errorf("create: %v", v)
	}
	v = structuredMatches(t, ts, "kubernetes_apps_v1_Deployment_update",
		call(t, ts, "kubernetes_apps_v1_Deployment_update", `{"connectionId":"prod","namespace":"team-a","id":"api","image":"api:3"}`, plugin.CallOptions{}))
	if v["image"] != "api:3" || v["name"] != "api" {
		t.Errorf("update: %v", v)
	}
}
