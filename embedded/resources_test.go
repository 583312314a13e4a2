package embedded_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/plugin"
	"github.com/mcpgw/mcpgw/plugin/plugintest"
)

// connectEra is connect with the protocol version pinned ("" lets the client choose: a
// go-sdk client then speaks 2026-07-28, statelessly).
func connectEra(t *testing.T, url, agent, version string, h func(context.Context, *mcp.ResourceUpdatedNotificationRequest)) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: headerTransport{http.DefaultTransport.(*http.Transport).Clone(), agent}}
	c := mcp.NewClient(&mcp.Implementation{Name: "embed-test", Version: "1"}, &mcp.ClientOptions{ResourceUpdatedHandler: h})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var opts *mcp.ClientSessionOptions
	if version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: hc}, opts)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// An in-process plugin's resource types are resources too: listed, readable; a provider
// that is no plugin.Watcher cannot be subscribed to, and a session client is told why.
func TestEmbedPluginResources(t *testing.T) {
	h := newHost(t, "kube", &countingFixture{Fixture: plugintest.New()}, "")
	cs := connectEra(t, h.url, "writer", "2025-11-25", nil)
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

// watchingFixture is the fixture with a plugin.Watcher whose events the test sends.
type watchingFixture struct {
	*plugintest.Fixture
	events     chan plugin.Event
	subscribed chan struct{} // closed when the gateway first subscribes
}

func (f *watchingFixture) Subscribe(ctx context.Context, conn, key string) (<-chan plugin.Event, error) {
	select {
	case <-f.subscribed:
	default:
		close(f.subscribed)
	}
	out := make(chan plugin.Event)
	go func() {
		defer close(out)
		for {
			select {
			case <-ctx.Done():
				return
			case e := <-f.events:
				select {
				case out <- e:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out, nil
}

// A 2026-07-28 client subscribes to a plugin resource through subscriptions/listen, and
// the plugin's watch event reaches it as notifications/resources/updated.
func TestEmbedPluginResourceListen(t *testing.T) {
	f := &watchingFixture{Fixture: plugintest.New(), events: make(chan plugin.Event), subscribed: make(chan struct{})}
	h := newHost(t, "kube", f, "")
	updated := make(chan string, 16)
	cs := connectEra(t, h.url, "writer", "", func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
		select {
		case updated <- r.Params.URI:
		default:
		}
	})
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("the client negotiated %q, want 2026-07-28 (this test is about listen)", v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const pods = "mcpgw+plugin://kube/prod/core/v1/Pod"
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: pods}); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	select {
	case <-f.subscribed:
	case <-ctx.Done():
		t.Fatal("the gateway never subscribed to the provider for a listening client")
	}
	// The listener is registered just after the provider subscription: send events until
	// one arrives (bounded), each one a real change the client must hear of.
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case u := <-updated:
			if u != pods {
				t.Fatalf("updated %q, want %q", u, pods)
			}
			return
		case <-tick.C:
			select {
			case f.events <- plugin.Event{Type: plugin.EventUpdate, Connection: "prod", Key: "core::v1::Pod", ID: "web-1", Namespace: "default"}:
			case <-ctx.Done():
			}
		case <-ctx.Done():
			t.Fatal("no notifications/resources/updated reached the listening client within 30 s")
		}
	}
}
