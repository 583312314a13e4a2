// Package pluginkinds holds the plugin kinds a host gives an embedded gateway
// (embedded.Options.PluginKinds) that need more than the gateway itself: the sql plugin,
// with its SQLite and PostgreSQL drivers, and out-of-process plugins, with go-plugin and
// gRPC. It is apart from package embedded so that a host that does not import it links
// none of those libraries.
package pluginkinds

import (
	"github.com/mcpgw/mcpgw/embedded"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/registry/pluginkind"
)

// All is every kind of this package, as `mcpgw serve` has them: SQL and Command.
func All() []embedded.PluginKind { return []embedded.PluginKind{SQL(), Command()} }

// SQL is the kind of type sql plugins: the tables of SQLite or PostgreSQL databases as
// resource types (docs/plugins.md).
func SQL() embedded.PluginKind { return kind{name: "sql", k: pluginkind.SQL()} }

// Command is the kind of out-of-process plugins (plugins.<name>.command): an executable
// built with package plugin/serve, started over go-plugin and spoken to over gRPC.
func Command() embedded.PluginKind { return kind{name: registry.KindCommand, k: pluginkind.Command()} }

// kind is a registry plugin kind under its name.
type kind struct {
	name string
	k    registry.PluginKind
}

func (k kind) PluginKind() string { return k.name }

// RegistryKind is the kind package embedded hands the registry.
func (k kind) RegistryKind() registry.PluginKind { return k.k }
