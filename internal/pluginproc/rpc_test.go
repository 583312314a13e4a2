package pluginproc_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcpgw/mcpgw/internal/pluginproc"
	"github.com/mcpgw/mcpgw/plugin"
	"github.com/mcpgw/mcpgw/plugin/plugintest"
)

// The probe counts the catalogue calls that reach it, so that a test can check that a
// tool call costs one round trip and no catalogue lookups.
func (p *probe) countCatalogue() {
	p.mu.Lock()
	p.catalogue++
	p.mu.Unlock()
}

func (p *probe) ResourceTypes(ctx context.Context) ([]plugin.ResourceType, error) {
	p.countCatalogue()
	return p.Fixture.ResourceTypes(ctx)
}

func (p *probe) Capabilities(ctx context.Context, key string) (plugin.Capabilities, error) {
	p.countCatalogue()
	return p.Fixture.Capabilities(ctx, key)
}

func (p *probe) FilterFields(ctx context.Context, conn, key string) ([]plugin.FilterField, error) {
	p.countCatalogue()
	return p.Fixture.FilterFields(ctx, conn, key)
}

func (p *probe) ResourceSchema(ctx context.Context, conn, key string) (*jsonschema.Schema, error) {
	p.countCatalogue()
	return p.Fixture.ResourceSchema(ctx, conn, key)
}

func (p *probe) Actions(ctx context.Context, conn, key string) ([]plugin.Action, error) {
	p.countCatalogue()
	return p.Fixture.Actions(ctx, conn, key)
}

func (p *probe) Connections(ctx context.Context) ([]plugin.Connection, error) {
	p.countCatalogue()
	return p.Fixture.Connections(ctx)
}

func (p *probe) Namespaces(ctx context.Context, conn string) ([]string, error) {
	p.countCatalogue()
	return p.Fixture.Namespaces(ctx, conn)
}

func probeCounts(t *testing.T, remote plugin.Plugin, id string) (gets, catalogue int64) {
	t.Helper()
	r, err := remote.Get(context.Background(), "prod", plugintest.Pod, plugin.GetInput{ID: id})
	if err != nil {
		t.Fatalf("get %s: %v", id, err)
	}
	g, ok1 := r["gets"].(int64)
	c, ok2 := r["catalogue"].(int64)
	if !ok1 || !ok2 {
		t.Fatalf("get %s: %v", id, r)
	}
	return g, c
}

// A get tool called out of process is one Get in the plugin and nothing else: the
// catalogue (capabilities, schemas, connections) is the host's copy, read when the
// plugin loads, never per call.
func TestOneRoundTripPerToolCall(t *testing.T) {
	remote, _ := launch(t, "fixture", nil)
	ts := load(t, "kubernetes", remote).Tools(plugin.Options{Name: gatewayNames})
	gets0, cat0 := probeCounts(t, remote, "rpcs")
	if cat0 == 0 {
		t.Fatal("loading the catalogue made no catalogue call: the probe does not count them")
	}
	const calls = 5
	for i := 0; i < calls; i++ {
		r, err := ts.Call(context.Background(), "kubernetes_core_v1_Pod_get",
			json.RawMessage(`{"connectionId":"prod","id":"web-1","namespace":"default"}`), plugin.CallOptions{})
		if err != nil || r.IsError {
			t.Fatalf("call %d: %v %+v", i, err, r)
		}
	}
	gets1, cat1 := probeCounts(t, remote, "rpcs")
	if gets1-gets0 != calls+1 { // the calls and this reading
		t.Errorf("%d tool calls reached the provider's Get %d times", calls, gets1-gets0-1)
	}
	if cat1 != cat0 {
		t.Errorf("%d tool calls made %d catalogue calls across the boundary", calls, cat1-cat0)
	}
}

// The host starts a plugin with GOMAXPROCS=1 (pluginproc.DefaultEnv) unless the plugin's
// env says otherwise.
func TestPluginGOMAXPROCS(t *testing.T) {
	if !strings.Contains(pluginproc.DefaultEnv, "GOMAXPROCS=1") {
		t.Fatalf("DefaultEnv = %q", pluginproc.DefaultEnv)
	}
	procs := func(p plugin.Plugin) any {
		r, err := p.Get(context.Background(), "prod", plugintest.Pod, plugin.GetInput{ID: "gomaxprocs"})
		if err != nil {
			t.Fatal(err)
		}
		return r["gomaxprocs"]
	}
	def, _ := launch(t, "fixture", nil)
	if got := procs(def); got != int64(1) {
		t.Errorf("default: plugin GOMAXPROCS = %v, want 1", got)
	}
	own, _ := launchEnv(t, os.Args[0], "fixture", nil, "GOMAXPROCS=3")
	if got := procs(own); got != int64(3) {
		t.Errorf("env GOMAXPROCS=3: plugin GOMAXPROCS = %v, want 3", got)
	}
}
