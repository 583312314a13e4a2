// Package instances runs the registry's upstream instances: each configured server
// (Server) with its supervised shared connection, its catalogue and its warm pool, and the
// instances started or taken for owners (client sessions): per_session, per_agent and
// per_call, with the agents' fair shares, overflow instances for stateless owners, the
// servers' max_instances and the gate that bounds how many start at once. What it needs of
// the registry that composes it is given to it (Host): it holds no pointer back.
package instances

import (
	"context"
	"log/slog"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/registry/internal/catalog"
	"github.com/mcpgw/mcpgw/internal/upstream"
)

// Catalog is a server's catalogue (catalog.Catalog).
type Catalog = catalog.Catalog

// Server states.
const (
	StateStarting = "starting"
	StateUp       = "up"
	StateDown     = "down"
	StateStopped  = "stopped"
)

// Timing is how a registry paces its supervision. The zero value of a field is its
// default (DefaultTiming).
type Timing struct {
	// BackoffMin and BackoffMax bound the delay before restarting an upstream or plugin.
	// The delay doubles after each failure and resets only after the upstream stayed up
	// for StableAfter.
	BackoffMin, BackoffMax, StableAfter time.Duration
	// DrainFor is how long a replaced server's shared connection (or a stopped plugin's
	// provider) stays open for the calls already on it.
	DrainFor time.Duration
	// KeepAlive is how often shared upstreams are pinged.
	KeepAlive time.Duration
}

// DefaultTiming is the timing of a registry that sets none.
func DefaultTiming() Timing {
	return Timing{BackoffMin: 250 * time.Millisecond, BackoffMax: 30 * time.Second, StableAfter: 30 * time.Second,
		DrainFor: 30 * time.Second, KeepAlive: 15 * time.Second}
}

// OrDefault fills in the zero fields.
func (t Timing) OrDefault() Timing {
	d := DefaultTiming()
	for _, f := range []struct{ v, def *time.Duration }{
		{&t.BackoffMin, &d.BackoffMin}, {&t.BackoffMax, &d.BackoffMax}, {&t.StableAfter, &d.StableAfter},
		{&t.DrainFor, &d.DrainFor}, {&t.KeepAlive, &d.KeepAlive},
	} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	return t
}

// Host is what the servers and instances need of the registry that holds them. The
// registry builds it once; its funcs read the registry's settings as they are when
// called (its callbacks are set after New).
type Host struct {
	// Ctx ends with the registry: every server's supervision and instance runs under it.
	Ctx context.Context
	Log *slog.Logger
	// Config is the config the registry last applied.
	Config func() *config.Config
	// Timing paces supervision.
	Timing Timing
	// Dialer connects the upstreams.
	Dialer *upstream.Dialer
	// Gate bounds the instances the registry starts at once (upstream.start_concurrency).
	Gate *StartGate
	// Server is the registry's server of that name (configured, or retired still in use), or nil.
	Server func(name string) *Server
	// Handler is the registry's handler of upstream messages that are neither responses
	// nor list_changed, or nil.
	Handler func() upstream.Handler
	// OnState, OnListSaid and OnInstanceStart tell the registry's observers, when set
	// (Registry.OnState, OnListSaid, OnInstanceStart).
	OnState         func(server, state string)
	OnListSaid      func(server, method string)
	OnInstanceStart func(server string, d time.Duration)
	// Changed counts and tells a change of server's catalogue or state.
	Changed func(server string)
	// Observe pins what a server's catalogue serves (the registry's integrity).
	Observe func(server string, cat *Catalog)
	// Authorizer is the authorizer of an instance of server whose requests carry
	// subject's grant, for servers whose grants are per (upstream OAuth), or nil.
	Authorizer func(server, subject, per string) upstream.Authorizer
	// CatalogAuthorizer is the authorizer a per-user server's own instance lists its
	// catalogue with, or nil.
	CatalogAuthorizer func(server string) upstream.Authorizer
	// InProcess is the in-process server given for server (type inprocess), or nil.
	InProcess func(server string) *upstream.InProcess
}
