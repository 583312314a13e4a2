package pluginproc_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcpgw/mcpgw/plugin"
	"github.com/mcpgw/mcpgw/plugin/plugintest"
)

// deepSchema is the fixture whose Deployment schema nests 300 levels of "not" over a
// 1 MiB leaf: decoding it into jsonschema-go's types re-reads each level's bytes, so the
// host spent about 7 s on each of its two decodes per connection (the wire's and the
// catalogue's own copy), with no bound on depth or size.
type deepSchema struct{ *plugintest.Fixture }

func (d deepSchema) ResourceSchema(ctx context.Context, conn, key string) (*jsonschema.Schema, error) {
	if key != plugintest.Deployment {
		return d.Fixture.ResourceSchema(ctx, conn, key)
	}
	s := &jsonschema.Schema{Description: strings.Repeat("x", 1<<20)}
	for range 300 {
		s = &jsonschema.Schema{Not: s}
	}
	return &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"spec": s}}, nil
}

// TestDeepSchemaRefusedAtDecode: a plugin process sends a schema whose decoding costs
// depth × size; the host refuses it before decoding (the type is left out on that
// connection, saying why), and loads the rest of the catalogue within seconds.
func TestDeepSchemaRefusedAtDecode(t *testing.T) {
	p, _ := launch(t, "deep-schema", nil)
	done := make(chan struct{})
	var cat *plugin.Catalog
	var err error
	go func() {
		defer close(done)
		cat, err = plugin.Load(context.Background(), "deep", p)
	}()
	select {
	case <-done:
	case <-time.After(15 * time.Second * raceSlowdown): // 4 s with the bound (the plugin's own encoding), 28 s without
		// The problems below tell the bound's work apart from none; this catches a decode
		// that does not end, and is scaled for the race detector's slowdown.
		t.Fatalf("loading the catalogue took over %s: the deep schema was decoded", 15*time.Second*raceSlowdown)
	}
	if err != nil {
		t.Fatal(err)
	}
	problems := strings.Join(cat.Problems, "\n")
	if !strings.Contains(problems, plugintest.Deployment) || !strings.Contains(problems, "levels") {
		t.Errorf("problems %q; want the Deployment schema refused for its depth", problems)
	}
	for _, e := range cat.Types {
		if e.Type.Key == plugintest.Pod && len(e.On) == 0 {
			t.Errorf("the Pod type was left out too: %q", problems)
		}
	}
}
