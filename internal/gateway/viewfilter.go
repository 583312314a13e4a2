package gateway

import (
	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/registry"
)

// viewFilter is a session's auth.Filter as the registry's view filter: auth decides over
// plain values (server, exposed name, readOnlyHint), the registry hands it its catalogue
// entries, and this reads the one for the other.
type viewFilter struct{ f *auth.Filter }

func (v viewFilter) Key() string                       { return v.f.Key() }
func (v viewFilter) Server(name string) (bool, string) { return v.f.Server(name) }
func (v viewFilter) Tool(t *registry.Tool) (bool, string) {
	return v.f.Tool(t.Server, t.Exposed, t.ReadOnly, t.OtherNames()...)
}
func (v viewFilter) Prompt(p *registry.Prompt) bool    { return v.f.Prompt(p.Server, p.Exposed) }
func (v viewFilter) PluginScope() registry.PluginScope { return pluginScope(v.f.PluginScope()) }

// pluginScope is auth's decision about a session's plugin tools in the registry's terms.
func pluginScope(sc auth.PluginScope) registry.PluginScope {
	return registry.PluginScope{Connections: sc.Connections, ReadOnly: sc.ReadOnly}
}
