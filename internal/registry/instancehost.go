package registry

import (
	"time"

	"github.com/mcpgw/mcpgw/internal/registry/internal/instances"
	"github.com/mcpgw/mcpgw/internal/upstream"
)

// instanceHost is what the servers and instances need of the registry r (instances.Host).
// Its callbacks read r's fields when called: they are set after New.
func instanceHost(r *Registry) *instances.Host {
	return &instances.Host{
		Ctx: r.ctx, Log: r.log, Config: r.Config, Timing: r.timing, Dialer: r.dialer, Gate: &r.gate,
		Server:  r.Server,
		Handler: func() upstream.Handler { return r.Handler },
		OnState: func(server, state string) {
			if r.OnState != nil {
				r.OnState(server, state)
			}
		},
		OnListSaid: func(server, method string) {
			if r.OnListSaid != nil {
				r.OnListSaid(server, method)
			}
		},
		OnInstanceStart: func(server string, d time.Duration) {
			if r.OnInstanceStart != nil {
				r.OnInstanceStart(server, d)
			}
		},
		Changed:           r.changes.note,
		Observe:           r.integ.observe,
		Authorizer:        r.uauth.authorizerFor,
		CatalogAuthorizer: r.uauth.catalogAuthorizerFor,
		InProcess:         r.inproc.get,
	}
}

// Instances are the registry's instances of its owners: every policy but shared's
// connection, the pools taken from, the shares and counts.
func (r *Registry) Instances() *Instances { return r.inst }

// Pools lists the stats of every configured server's pool, by server.
func (r *Registry) Pools() map[string]PoolStats {
	out := map[string]PoolStats{}
	set := r.set.Load()
	for _, name := range set.names {
		if p := set.m[name].Pool(); p != nil {
			out[name] = p.Stats()
		}
	}
	return out
}
