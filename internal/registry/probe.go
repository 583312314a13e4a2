package registry

import (
	"context"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/registry/internal/instances"
	"github.com/mcpgw/mcpgw/internal/upstream"
)

// Probe connects to a server that need not be in the config (the admin UI's "test
// connection"), lists its catalogue as the gateway would expose it, and disconnects. A
// stdio server's process is started and stopped again; nothing is kept.
func (r *Registry) Probe(ctx context.Context, name string, d *config.ServerDef) (*Catalog, error) {
	cfg := r.Config()
	o := upstream.Options{
		Name: name, Transport: d.Transport(), Command: d.Command, Args: d.Args, Env: d.Env, Dir: d.Dir,
		URL: d.URL, Headers: d.Headers, ProtocolVersion: d.UpstreamVersion(false), ConnectTimeout: d.Timeouts.Connect,
		MaxMessageBytes: cfg.Upstream.MaxMessageBytes, TLS: upstream.TLSFiles(d.TLS), Log: r.log, InProcess: r.inproc.get(name),
	}
	c, err := r.dialer.Dial(ctx, o)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return instances.FetchCatalog(ctx, name, c, cfg.Naming)
}
