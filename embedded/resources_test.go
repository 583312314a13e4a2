package embedded_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/plugin/plugintest"
)

// An in-process plugin's resource types are resources too: listed, readable; a provider
// that is no plugin.Watcher cannot be subscribed to, and says so.
func TestEmbedPluginResources(t *testing.T) {
	h := newHost(t, "kube", &countingFixture{Fixture: plugintest.New()}, "")
	cs := connect(t, h.url, "writer", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const pods = "mcpgw+plugin://kube/prod/core/v1/Pod"
	found := false
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		found = found || r.URI == pods
	}
	if !found {
		t.Errorf("resources/list lacks %s", pods)
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: pods + "/web-1?namespace=default"})
	if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, `"web-1"`) {
		t.Fatalf("read web-1: %v %+v", err, rr)
	}
	err = cs.Subscribe(ctx, &mcp.SubscribeParams{URI: pods})
	if err == nil || !strings.Contains(err.Error(), "does not report changes") {
		t.Errorf("subscribe to a plugin without a watcher: %v", err)
	}
}
