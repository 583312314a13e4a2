package gateway

import (
	"encoding/json"

	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/upstream"
)

// The extensions the gateway knows, and what it does with each (docs/protocol.md,
// "Extensions"); extensions.go passes on what upstreams declare.
//
//   - io.modelcontextprotocol/ui (MCP Apps): a server rarely declares it (the example
//     servers of its SDK do not); it uses it by linking a ui:// resource from a tool's
//     _meta. The gateway declares it, as {} unless a server declared settings, to a client
//     that declares it whenever a server of the client's view declares or uses it. ui://
//     resources and the links to them are named per server (the registry's ExposedURI).
//     Upstreams the gateway shares between sessions are offered it with the one MIME type
//     the gateway relays (upstream.DefaultClientCaps): what an app adds is _meta that a
//     host without the extension ignores, and a tool keeps its text content for such a
//     host (the extension requires it).
//   - any other extension, io.modelcontextprotocol/skills among them: passed through as
//     extensions.go says (a server's declared to clients that declare it; a client's
//     reaches only upstream instances that are the client's own).
//
// A client's own capabilities, extensions included, known or not, are what its own
// (per_session) instances are initialized with; a shared instance, which serves clients
// that declared different things, is offered only the known extensions above.

// usedExtensions adds to out (the extensions servers declare, by id) the known extensions
// that servers of the view use without declaring them: the UI extension, when one of
// their tools links a ui:// resource.
func usedExtensions(reg *registry.Registry, servers []string, out map[string]json.RawMessage) map[string]json.RawMessage {
	if _, ok := out[upstream.UIExtension]; ok {
		return out
	}
	for _, name := range servers {
		srv := reg.Server(name)
		if srv == nil {
			continue
		}
		cat := srv.Catalog()
		if cat == nil {
			continue
		}
		for _, t := range cat.Tools {
			if t.UI {
				if out == nil {
					out = map[string]json.RawMessage{}
				}
				out[upstream.UIExtension] = json.RawMessage(`{}`)
				return out
			}
		}
	}
	return out
}
