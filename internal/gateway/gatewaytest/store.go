package gatewaytest

import (
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/gateway"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/registry/pluginkind"
	"github.com/mcpgw/mcpgw/internal/store"
)

// StartOn is Start over the store st (two gateways over one Redis store are two replicas).
// The test owns st: it is not closed with the gateway.
func StartOn(t *testing.T, yaml string, st store.Store) *GW {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	g := &GW{Srv: srv, Addr: srv.Listener.Addr().String(), Log: &LockedBuffer{}, Store: st}
	g.Base = "http://" + g.Addr
	yaml = strings.NewReplacer("{{listen}}", g.Addr, "{{state_dir}}", t.TempDir(), "{{everything}}", EverythingURL()).Replace(yaml)
	cfg, _, err := config.Parse([]byte(yaml))
	if err != nil {
		srv.Close()
		t.Fatalf("config: %v", err)
	}
	log := slog.New(slog.NewTextHandler(g.Log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	g.Reg = registry.New(cfg, log)
	g.Reg.PluginKinds = pluginkind.All()
	gw, err := gateway.New(cfg, g.Reg, st, log)
	if err != nil {
		srv.Close()
		t.Fatalf("gateway.New: %v", err)
	}
	g.Gateway = gw
	g.Reg.Start(10 * time.Second)
	gw.Start()
	srv.Config.Handler = gw.Handler()
	srv.Start()
	g.stopAtEnd(t, srv, gw)
	return g
}
