package instances

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/upstream"
)

// testRegistry is the servers of a config and their instances of owners, held as a
// registry holds them (its Host, with no observers), for the package's tests.
type testRegistry struct {
	cancel  context.CancelFunc
	servers map[string]*Server
	inst    *Instances
}

// newTestRegistry makes the servers of cfg; nothing runs until a test starts it.
func newTestRegistry(t *testing.T, cfg *config.Config) *testRegistry {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &testRegistry{cancel: cancel, servers: map[string]*Server{}}
	d := upstream.NewDialer()
	d.Busy = upstream.NewBusyPoll(0)
	h := &Host{
		Ctx: ctx, Log: slog.New(slog.DiscardHandler), Config: func() *config.Config { return cfg },
		Timing: DefaultTiming(), Dialer: d, Gate: &StartGate{},
		Server:            func(name string) *Server { return r.servers[name] },
		Handler:           func() upstream.Handler { return nil },
		OnState:           func(string, string) {},
		OnListSaid:        func(string, string) {},
		OnInstanceStart:   func(string, time.Duration) {},
		Changed:           func(string) {},
		Observe:           func(string, *Catalog) {},
		Authorizer:        func(string, string, string) upstream.Authorizer { return nil },
		CatalogAuthorizer: func(string) upstream.Authorizer { return nil },
		InProcess:         func(string) *upstream.InProcess { return nil },
	}
	h.Gate.SetLimit(cfg.Upstream.StartConcurrency)
	for _, name := range slices.Sorted(maps.Keys(cfg.Servers)) {
		r.servers[name] = NewServer(h, name, cfg.Servers[name])
	}
	r.inst = New(h)
	return r
}

func (r *testRegistry) Instances() *Instances      { return r.inst }
func (r *testRegistry) Server(name string) *Server { return r.servers[name] }

// Close stops every server, as the registry's Close does.
func (r *testRegistry) Close() {
	r.cancel()
	for _, s := range r.servers {
		s.Stop()
	}
}
