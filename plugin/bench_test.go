package plugin_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpgw/mcpgw/plugin"
	"github.com/mcpgw/mcpgw/plugin/plugintest"
)

// The dispatcher's cost over calling the provider directly (decode, connection check,
// schema validation, result encoding): compare BenchmarkCallGet with BenchmarkDirectGet.
func BenchmarkCallGet(b *testing.B) {
	f := plugintest.New()
	c, err := plugin.Load(context.Background(), "kubernetes", f)
	if err != nil {
		b.Fatal(err)
	}
	ts := c.Tools(plugin.Options{Name: gatewayNames})
	args := json.RawMessage(`{"connectionId":"prod","id":"web-1","namespace":"default"}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		f.Calls = f.Calls[:0]
		r, err := ts.Call(ctx, "kubernetes_core_v1_Pod_get", args, plugin.CallOptions{})
		if err != nil || r.IsError {
			b.Fatal(err, r)
		}
	}
}

func BenchmarkDirectGet(b *testing.B) {
	f := plugintest.New()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		f.Calls = f.Calls[:0]
		r, err := f.Get(ctx, "prod", plugintest.Pod, plugin.GetInput{ID: "web-1", Namespace: "default"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(r); err != nil {
			b.Fatal(err)
		}
	}
}
