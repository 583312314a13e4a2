package config

import "time"

// PluginDef is one plugins.<name> entry (docs/plugins.md): a resource provider whose
// resource types the gateway serves as tools. Sessions enable plugins as they enable
// servers: by name, in an agent's servers, a task's enabled_mcp_servers, an executor's
// allow and deny lists and a credential's servers.
type PluginDef struct {
	Type string `yaml:"type"` // sql | go
	// ReadOnly leaves out every tool that writes (create, update, delete, Dangerous
	// actions), for every session.
	ReadOnly    bool                         `yaml:"read_only"`
	Connections map[string]*PluginConnection `yaml:"connections"`
	// DefaultEnabled: sessions of agents that list no servers get the plugin (true when
	// unset), as for servers.
	DefaultEnabled *bool `yaml:"default_enabled"`
	// Refresh is how often the plugin's resource types are read again (a table added to
	// the database appears as tools; 0: the default, 1m; negative: never).
	Refresh time.Duration `yaml:"refresh"`
	// Integrity is the plugin's integrity policy: pin, warn or off (default
	// integrity.policy; integrity.go).
	Integrity string `yaml:"integrity"`
	// CallTimeout bounds one tool call, a confirmation asked of the user included (default
	// upstream.call_timeout).
	CallTimeout time.Duration `yaml:"call_timeout"`
	Meta        ServerMeta    `yaml:"meta"`
	// Required makes /readyz answer 503 while the plugin is not up (by default a plugin
	// that failed is reported there but leaves the gateway ready).
	Required bool `yaml:"required"`

	// Command runs the plugin out of process: an executable built with package
	// plugin/serve, started by the gateway and restarted with backoff when it exits (no
	// type then; docs/plugins.md#out-of-process-plugins).
	Command string            `yaml:"command"`
	Args    []string          `yaml:"args"`
	Env     map[string]string `yaml:"env"` // added to the gateway's environment
	Dir     string            `yaml:"dir"` // working directory ("": the gateway's)
	// Config is the executable plugin's own configuration, any YAML value, sent to it as
	// JSON when it starts.
	Config any `yaml:"config"`
}

// OutOfProcess reports whether the plugin runs as a separate executable (command).
func (d *PluginDef) OutOfProcess() bool { return d.Command != "" }

// PluginConnection is one connection of a plugin (for type sql: one database).
type PluginConnection struct {
	Driver string `yaml:"driver"` // sqlite or postgres
	// DSN: a file path or a file: URI (modernc.org/sqlite parameters), or :memory:; for
	// postgres a postgres:// URL or a key=value string (secrets through ${VAR}).
	DSN string `yaml:"dsn"`
	// Database names the group of the resource keys (default: the file name without its
	// extension; required for in-memory databases).
	Database string `yaml:"database"`
	// Seed is a SQL script run once to create the database: when the file does not exist
	// yet (it is written whole or not at all), and on every start of an in-memory database.
	Seed string `yaml:"seed"`
	// Schemas limits a postgres connection to these schemas (default: every schema but
	// the system's).
	Schemas []string `yaml:"schemas"`
	// Listen: a postgres connection LISTENs on the channel mcpgw_changes for the changes
	// others make, reported by the trigger function of docs/plugins.md.
	Listen bool `yaml:"listen"`
}

// Enabled reports the plugin's default_enabled (true when unset). The mcpgw plugin is
// never enabled by default: only agents that list it get it.
func (d *PluginDef) Enabled() bool {
	if d.Type == PluginTypeSelf {
		return false
	}
	return d.DefaultEnabled == nil || *d.DefaultEnabled
}

// PluginTypeGo is the type of a plugin whose provider is given in Go code by a host that
// embeds the gateway (package embedded): the config names it and sets its options
// (read_only, default_enabled, refresh, call_timeout); its connections come from the
// provider. The mcpgw daemon has no such providers: there it stays down, saying so.
const PluginTypeGo = "go"

// PluginTypeSelf is the type of the mcpgw plugin: the gateway's own servers, sessions and
// agents as resource types (docs/plugins.md). It has no connections to configure, and is
// hidden from every agent that does not list it in its servers.
const PluginTypeSelf = "mcpgw"

// PluginTypes are the plugin types the gateway can run in process (a fresh slice each
// call: the config model is a public door, and a shared slice one caller could change
// would change validation for every gateway in the process).
func PluginTypes() []string { return []string{"sql", PluginTypeGo, PluginTypeSelf} }
