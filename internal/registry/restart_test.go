package registry

import (
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/mcpgw/mcpgw/config"
)

// TestRestartReplacesTheServer: Restart swaps in a new Server of the same definition with
// one more restart counted; an unknown or retired server is refused.
func TestRestartReplacesTheServer(t *testing.T) {
	cfg, _, err := config.Parse([]byte("servers:\n  a: {type: streamable_http, url: \"http://127.0.0.1:1/mcp\"}\n  b: {type: streamable_http, url: \"http://127.0.0.1:1/mcp\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer r.Close()
	old := r.Server("a")
	if err := r.Restart("a"); err != nil {
		t.Fatal(err)
	}
	now := r.Server("a")
	if now == old || now.Def != old.Def || now.Status().Restarts != old.Status().Restarts+1 {
		t.Errorf("after Restart: same server %v, same definition %v, restarts %d (was %d)", now == old, now.Def == old.Def, now.Status().Restarts, old.Status().Restarts)
	}
	if err := r.Restart("nope"); !errors.Is(err, ErrNoServer) {
		t.Errorf("Restart(nope) = %v, want ErrNoServer", err)
	}
	next := *cfg
	next.Servers = map[string]*config.ServerDef{"a": cfg.Servers["a"]}
	r.Apply(&next)
	if err := r.Restart("b"); !errors.Is(err, ErrRetired) {
		t.Errorf("Restart of a retired server = %v, want ErrRetired", err)
	}
}
