package registry

import (
	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/registry/internal/catalog"
)

// ExposedURI is catalog.ExposedURI: the URI clients see for a resource of server (ui://
// resources carry the server's name).
func ExposedURI(server, uri string, n config.Naming) string {
	return catalog.ExposedURI(server, uri, n)
}

// UpstreamURI is catalog.UpstreamURI: the server and own URI of a ui:// URI the gateway
// named for one of servers.
func UpstreamURI(servers []string, uri string, n config.Naming) (server, own string, ok bool) {
	return catalog.UpstreamURI(servers, uri, n)
}
