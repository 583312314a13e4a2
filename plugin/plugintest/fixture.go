// Package plugintest is a fixture resource provider for tests of plugin tool generation
// and dispatch (and, later, of the gateway serving plugins): a small in-memory,
// Kubernetes-shaped provider with two connections, types that exist on one connection
// only, a type without a schema whose key needs the gateway's name shortening, actions
// both safe and Dangerous, and hooks to make calls fail.
package plugintest

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcpgw/mcpgw/plugin"
)

// The fixture's resource keys.
const (
	Pod        = "core::v1::Pod"
	Deployment = "apps::v1::Deployment"
	Job        = "batch::v1::Job" // on connection "staging" only
	Widget     = "widgets.example.com::v1alpha1::ClusterWideWidgetConfigurationOverride"
)

// Fixture is the provider. The zero value is not usable; call New.
type Fixture struct {
	mu sync.Mutex
	// Fail, when set, is returned by every ResourceProvider and ActionProvider call.
	Fail error
	// Panic, when set, makes every ResourceProvider call panic with it.
	Panic any
	// Calls records each ResourceProvider and ActionProvider call as "op conn key".
	Calls []string
	store map[string]map[string]map[string]plugin.Resource // conn → key → namespace/name → resource
}

// New returns a fixture with a few pods and deployments on "prod" and "staging".
func New() *Fixture {
	f := &Fixture{store: map[string]map[string]map[string]plugin.Resource{}}
	for _, conn := range []string{"prod", "staging"} {
		f.store[conn] = map[string]map[string]plugin.Resource{Pod: {}, Deployment: {}, Widget: {}}
		for i, phase := range []string{"Running", "Running", "Pending", "Failed"} {
			name := fmt.Sprintf("web-%d", i)
			f.store[conn][Pod]["default/"+name] = plugin.Resource{"name": name, "namespace": "default", "phase": phase, "restarts": int64(i), "node": nil}
		}
		f.store[conn][Deployment]["default/web"] = plugin.Resource{"name": "web", "namespace": "default", "replicas": int64(4), "image": "nginx:1.27"}
	}
	f.store["staging"][Job] = map[string]plugin.Resource{"default/migrate": {"name": "migrate", "namespace": "default", "succeeded": true}}
	return f
}

var (
	str  = &jsonschema.Schema{Type: "string"}
	intg = &jsonschema.Schema{Type: "integer"}
)

var types = []plugin.ResourceType{
	{Key: Pod, Description: "A pod: one or more containers scheduled together."},
	{Key: Deployment, Description: "A deployment keeps a number of pod replicas running."},
	{Key: Job},
	{Key: Widget, Description: "A cluster-wide widget override (a custom resource)."},
}

// ResourceTypes implements plugin.TypeProvider.
func (f *Fixture) ResourceTypes(context.Context) ([]plugin.ResourceType, error) { return types, nil }

// Capabilities implements plugin.TypeProvider.
func (f *Fixture) Capabilities(_ context.Context, key string) (plugin.Capabilities, error) {
	switch key {
	case Pod:
		return plugin.Capabilities{CanGet: true, CanList: true, CanFind: true, Filterable: true, CanDelete: true, HasSchema: true, HasActions: true}, nil
	case Deployment:
		return plugin.Capabilities{CanGet: true, CanList: true, CanCreate: true, CanUpdate: true, CanDelete: true, HasSchema: true, HasActions: true}, nil
	case Job:
		// CanFind without Filterable: no find tool.
		return plugin.Capabilities{CanGet: true, CanList: true, CanFind: true, HasSchema: true}, nil
	case Widget:
		return plugin.Capabilities{CanGet: true, CanList: true}, nil
	}
	return plugin.Capabilities{}, fmt.Errorf("resource type %q: %w", key, plugin.ErrNotFound)
}

// FilterFields implements plugin.TypeProvider.
func (f *Fixture) FilterFields(_ context.Context, conn, key string) ([]plugin.FilterField, error) {
	if key != Pod {
		return nil, fmt.Errorf("%s: %w", key, plugin.ErrUnsupported)
	}
	return []plugin.FilterField{
		{Field: "phase", Type: plugin.FieldString, Operators: []plugin.Operator{plugin.OpEq, plugin.OpNeq, plugin.OpIn}},
		{Field: "name", Type: plugin.FieldString, Operators: []plugin.Operator{plugin.OpEq, plugin.OpContains}},
		{Field: "restarts", Type: plugin.FieldInteger, Operators: []plugin.Operator{plugin.OpEq, plugin.OpLt, plugin.OpGte}},
		{Field: "node", Type: plugin.FieldString, Operators: []plugin.Operator{plugin.OpIsNull}},
	}, nil
}

// ResourceSchema implements plugin.TypeProvider.
func (f *Fixture) ResourceSchema(_ context.Context, conn, key string) (*jsonschema.Schema, error) {
	obj := func(required []string, order []string, props map[string]*jsonschema.Schema) *jsonschema.Schema {
		return &jsonschema.Schema{Type: "object", Required: required, PropertyOrder: order, Properties: props}
	}
	switch key {
	case Pod:
		return obj([]string{"name", "namespace", "phase"}, []string{"name", "namespace", "phase", "restarts", "node"}, map[string]*jsonschema.Schema{
			"name": str, "namespace": str, "phase": {Type: "string", Enum: []any{"Pending", "Running", "Succeeded", "Failed"}},
			"restarts": intg, "node": {Types: []string{"string", "null"}},
		}), nil
	case Deployment:
		return obj([]string{"name", "image"}, []string{"name", "namespace", "replicas", "image"}, map[string]*jsonschema.Schema{
			"name": str, "namespace": {Type: "string", ReadOnly: true}, "replicas": {Type: "integer", Minimum: jsonschema.Ptr(0.0)}, "image": str,
		}), nil
	case Job:
		if conn != "staging" {
			return nil, fmt.Errorf("%s on %s: %w", key, conn, plugin.ErrNotFound)
		}
		return obj([]string{"name"}, []string{"name", "namespace", "succeeded"}, map[string]*jsonschema.Schema{"name": str, "namespace": str, "succeeded": {Type: "boolean"}}), nil
	}
	return nil, fmt.Errorf("%s: %w", key, plugin.ErrUnsupported)
}

// Actions implements plugin.ActionProvider.
func (f *Fixture) Actions(_ context.Context, conn, key string) ([]plugin.Action, error) {
	switch key {
	case Pod:
		return []plugin.Action{{ID: "logs", Description: "Read the last lines of a pod's log.",
			ParamsSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"tailLines": {Type: "integer", Minimum: jsonschema.Ptr(1.0), Maximum: jsonschema.Ptr(1000.0)}}},
			OutputSchema: &jsonschema.Schema{Type: "object", Required: []string{"lines"}, Properties: map[string]*jsonschema.Schema{"lines": {Type: "array", Items: str}}},
			Idempotent:   true, ReadOnly: true}}, nil
	case Deployment:
		return []plugin.Action{
			{ID: "scale", Description: "Set a deployment's number of replicas.", Idempotent: true,
				ParamsSchema: &jsonschema.Schema{Type: "object", Required: []string{"replicas"}, Properties: map[string]*jsonschema.Schema{"replicas": {Type: "integer", Minimum: jsonschema.Ptr(0.0)}}},
				OutputSchema: &jsonschema.Schema{Type: "object", Required: []string{"replicas"}, Properties: map[string]*jsonschema.Schema{"replicas": intg}}},
			{ID: "restart", Description: "Restart every pod of a deployment.", Dangerous: true},
		}, nil
	}
	return nil, nil
}

// Connections implements plugin.ConnectionProvider.
func (f *Fixture) Connections(context.Context) ([]plugin.Connection, error) {
	return []plugin.Connection{
		{ID: "staging", Status: plugin.StatusConnected, Description: "the staging cluster"},
		{ID: "prod", Name: "Production", Status: plugin.StatusConnected},
	}, nil
}

// Namespaces implements plugin.ConnectionProvider.
func (f *Fixture) Namespaces(_ context.Context, conn string) ([]string, error) {
	if _, ok := f.store[conn]; !ok {
		return nil, fmt.Errorf("connection %q: %w", conn, plugin.ErrNotFound)
	}
	return []string{"default", "kube-system"}, nil
}

func (f *Fixture) begin(op, conn, key string) (map[string]plugin.Resource, error) {
	f.Calls = append(f.Calls, op+" "+conn+" "+key)
	if f.Panic != nil {
		panic(f.Panic)
	}
	if f.Fail != nil {
		return nil, f.Fail
	}
	objs, ok := f.store[conn][key]
	if !ok {
		return nil, fmt.Errorf("%s on connection %q: %w", key, conn, plugin.ErrNotFound)
	}
	return objs, nil
}

func path(ns, id string) string { return cmp.Or(ns, "default") + "/" + id }

// Get implements plugin.ResourceProvider.
func (f *Fixture) Get(_ context.Context, conn, key string, in plugin.GetInput) (plugin.Resource, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	objs, err := f.begin("get", conn, key)
	if err != nil {
		return nil, err
	}
	r, ok := objs[path(in.Namespace, in.ID)]
	if !ok {
		return nil, fmt.Errorf("%s %q in namespace %q: %w", key, in.ID, cmp.Or(in.Namespace, "default"), plugin.ErrNotFound)
	}
	return r, nil
}

// List implements plugin.ResourceProvider.
func (f *Fixture) List(ctx context.Context, conn, key string, in plugin.ListInput) (plugin.Page, error) {
	return f.find("list", conn, key, plugin.FindInput{ListInput: in})
}

// Find implements plugin.ResourceProvider.
func (f *Fixture) Find(ctx context.Context, conn, key string, in plugin.FindInput) (plugin.Page, error) {
	return f.find("find", conn, key, in)
}

func (f *Fixture) find(op, conn, key string, in plugin.FindInput) (plugin.Page, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	objs, err := f.begin(op, conn, key)
	if err != nil {
		return plugin.Page{}, err
	}
	paths := make([]string, 0, len(objs))
	for p := range objs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var hits []plugin.Resource
	for _, p := range paths {
		r := objs[p]
		if len(in.Namespaces) > 0 && !slices.Contains(in.Namespaces, r["namespace"].(string)) {
			continue
		}
		if matches(r, in.Filter) {
			hits = append(hits, r)
		}
	}
	start := 0
	if in.Cursor != "" {
		if start, err = strconv.Atoi(in.Cursor); err != nil || start < 0 || start > len(hits) {
			return plugin.Page{}, fmt.Errorf("cursor %q is not one this plugin gave", in.Cursor)
		}
	}
	size := cmp.Or(in.PageSize, 2)
	end := min(start+size, len(hits))
	page := plugin.Page{Items: hits[start:end]}
	if end < len(hits) {
		page.NextCursor = strconv.Itoa(end)
	}
	return page, nil
}

func matches(r plugin.Resource, flt plugin.Filter) bool {
	for _, p := range flt.Predicates {
		v := r[p.Field]
		switch p.Operator {
		case plugin.OpEq:
			if v != p.Value {
				return false
			}
		case plugin.OpNeq:
			if v == p.Value {
				return false
			}
		case plugin.OpIn:
			if !slices.Contains(p.Value.([]any), v) {
				return false
			}
		case plugin.OpContains:
			s, _ := v.(string)
			if !strings.Contains(s, p.Value.(string)) {
				return false
			}
		case plugin.OpIsNull:
			if (v == nil) != p.Value.(bool) {
				return false
			}
		case plugin.OpLt, plugin.OpGte:
			a, _ := v.(int64)
			b, _ := p.Value.(int64)
			if (p.Operator == plugin.OpLt) != (a < b) {
				return false
			}
		default:
			return false
		}
	}
	if flt.TextQuery != "" {
		name, _ := r["name"].(string)
		return strings.Contains(name, flt.TextQuery)
	}
	return true
}

// Create implements plugin.ResourceProvider.
func (f *Fixture) Create(_ context.Context, conn, key string, in plugin.CreateInput) (plugin.Resource, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	objs, err := f.begin("create", conn, key)
	if err != nil {
		return nil, err
	}
	name, _ := in.Data["name"].(string)
	p := path(in.Namespace, name)
	if _, dup := objs[p]; dup {
		return nil, fmt.Errorf("%s %q already exists", key, name)
	}
	r := plugin.Resource{"namespace": cmp.Or(in.Namespace, "default"), "replicas": int64(1)}
	for k, v := range in.Data {
		r[k] = v
	}
	objs[p] = r
	return r, nil
}

// Update implements plugin.ResourceProvider.
func (f *Fixture) Update(_ context.Context, conn, key string, in plugin.UpdateInput) (plugin.Resource, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	objs, err := f.begin("update", conn, key)
	if err != nil {
		return nil, err
	}
	r, ok := objs[path(in.Namespace, in.ID)]
	if !ok {
		return nil, fmt.Errorf("%s %q: %w", key, in.ID, plugin.ErrNotFound)
	}
	for k, v := range in.Data {
		r[k] = v
	}
	return r, nil
}

// Delete implements plugin.ResourceProvider.
func (f *Fixture) Delete(_ context.Context, conn, key string, in plugin.DeleteInput) (plugin.Resource, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	objs, err := f.begin("delete", conn, key)
	if err != nil {
		return nil, err
	}
	p := path(in.Namespace, in.ID)
	r, ok := objs[p]
	if !ok {
		return nil, fmt.Errorf("%s %q: %w", key, in.ID, plugin.ErrNotFound)
	}
	delete(objs, p)
	return r, nil
}

// ExecuteAction implements plugin.ActionProvider.
func (f *Fixture) ExecuteAction(_ context.Context, conn, key, action string, in plugin.ActionInput) (plugin.ActionResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	objs, err := f.begin("action:"+action, conn, key)
	if err != nil {
		return plugin.ActionResult{}, err
	}
	r, ok := objs[path(in.Namespace, in.ID)]
	if !ok {
		return plugin.ActionResult{}, fmt.Errorf("%s %q: %w", key, in.ID, plugin.ErrNotFound)
	}
	switch action {
	case "scale":
		r["replicas"] = in.Params["replicas"]
		return plugin.ActionResult{Data: map[string]any{"replicas": r["replicas"]}}, nil
	case "restart":
		return plugin.ActionResult{Message: fmt.Sprintf("restarted %s", in.ID)}, nil
	case "logs":
		return plugin.ActionResult{Data: map[string]any{"lines": []any{"started " + in.ID}}}, nil
	}
	return plugin.ActionResult{}, fmt.Errorf("action %q: %w", action, plugin.ErrUnsupported)
}
