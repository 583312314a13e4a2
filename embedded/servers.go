package embedded

import (
	"fmt"
	"maps"
	"net/http"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/upstream"
)

// AddServer serves h, an http.Handler that speaks MCP streamable HTTP (a go-sdk
// StreamableHTTPHandler, or any other), as the upstream server name. The gateway reaches
// it in this process, with no socket: its requests go to h through an in-memory
// connection, as they would go over TCP to an HTTP upstream, so its tools, prompts and
// resources, notifications and errors relay as an HTTP upstream's do, under its exposed
// names, with the agents' permissions. It shows in /api/servers and /readyz like any
// server. When the config has servers.<name>, it must be of type inprocess (its
// default_enabled, timeouts, max_concurrency, queue, headers and meta apply); otherwise
// the server is added with the defaults. It runs shared: one instance (one MCP session
// of h) serves every session. The host owns h; Close ends the gateway's sessions of it.
// Add servers before Start.
func (g *Gateway) AddServer(name string, h http.Handler) error {
	if h == nil {
		return fmt.Errorf("mcpgw: server %q: nil handler", name)
	}
	return g.addServer(name, &upstream.InProcess{Handler: h})
}

func (g *Gateway) addServer(name string, srv *upstream.InProcess) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state != created {
		return fmt.Errorf("mcpgw: server %q: add servers before Start", name)
	}
	if _, dup := g.mcpServers[name]; dup {
		return fmt.Errorf("mcpgw: server %q is added already", name)
	}
	if d := g.cfg.Servers[name]; d != nil && d.Transport() != config.TransportInProcess {
		return fmt.Errorf("mcpgw: servers.%s is type %q in the config; a server given in code must be type %q there", name, d.Type, config.TransportInProcess)
	}
	next := *g.cfg
	next.Servers = withInProcess(g.cfg.Servers, name)
	next.ApplyDefaults()
	if ps := next.Validate(); ps.HasErrors() {
		return ps
	}
	g.cfg = &next
	if g.mcpServers == nil {
		g.mcpServers = map[string]*upstream.InProcess{}
	}
	g.mcpServers[name] = srv
	return nil
}

// AddMCPServer serves the go-sdk server s as the upstream server name: AddServer with
// s's streamable HTTP handler (mcp.NewStreamableHTTPHandler), through which the gateway
// holds one MCP session of s. So s's requests to the client (elicitation, sampling), its
// progress and log notifications reach the client whose call caused them, as from any
// streamable HTTP server.
func (g *Gateway) AddMCPServer(name string, s *mcp.Server) error {
	if s == nil {
		return fmt.Errorf("mcpgw: server %q: nil *mcp.Server", name)
	}
	return g.AddServer(name, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
}

// withInProcess is servers (copied) with servers.<name> of type inprocess when it has
// none.
func withInProcess(servers map[string]*config.ServerDef, name string) map[string]*config.ServerDef {
	out := maps.Clone(servers)
	if out == nil {
		out = map[string]*config.ServerDef{}
	}
	if out[name] == nil {
		out[name] = &config.ServerDef{Type: config.TransportInProcess}
	}
	return out
}

// inProcessMissing says which inprocess server of cfg was not added (nil: none).
func inProcessMissing(cfg *config.Config, servers map[string]*upstream.InProcess) error {
	for _, name := range slices.Sorted(maps.Keys(cfg.Servers)) {
		if d := cfg.Servers[name]; d != nil && d.Transport() == config.TransportInProcess && servers[name] == nil {
			return fmt.Errorf("mcpgw: servers.%s is type inprocess, but no server was added under that name (AddServer or AddMCPServer)", name)
		}
	}
	return nil
}

// provideServers gives the registry the inprocess servers added in code.
func provideServers(reg *registry.Registry, servers map[string]*upstream.InProcess) {
	for name, s := range servers {
		reg.ProvideServer(name, s)
	}
}

// reloadInProcess is what Reload does for the servers added in code: cfg's entry for each
// must be type inprocess (one is added when there is none), and every inprocess server of
// cfg must have been added.
func reloadInProcess(c *config.Config, servers map[string]*upstream.InProcess) error {
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		if d := c.Servers[name]; d != nil && d.Transport() != config.TransportInProcess {
			return fmt.Errorf("mcpgw: servers.%s is type %q; it is given in code, so it must be type %q", name, d.Type, config.TransportInProcess)
		}
		c.Servers = withInProcess(c.Servers, name)
	}
	return inProcessMissing(c, servers)
}
