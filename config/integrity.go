package config

// IntegrityConfig is how the definitions servers and plugins serve are pinned
// (docs/integrity.md): the default policy, and what first use, a change and a suspicious
// definition do.
type IntegrityConfig struct {
	// Policy is the default of servers.<name>.integrity and plugins.<name>.integrity:
	// pin (hold what changed until an admin approves it), warn (serve it, and list it for
	// review) or off. Default pin.
	Policy string `yaml:"policy"`
	// FirstUse is what a server's first catalogue gets: trust (pinned as it is) or hold
	// (held until an admin approves it). Default trust.
	FirstUse string `yaml:"first_use"`
	// FirstUseAPI is FirstUse for servers added through the admin API (default: FirstUse).
	FirstUseAPI string `yaml:"first_use_api"`
	// OnChange is what clients see of a pinned definition that changed while it waits:
	// hold_new (nothing) or keep_old (the approved version). Default hold_new.
	OnChange string `yaml:"on_change"`
	// Suspicious is what a definition the injection heuristics flag gets: flag (shown to
	// admins) or hold (held like a change, even on first use). Default flag.
	Suspicious string `yaml:"suspicious"`
	// MaxHeldBytes bounds the definitions of one server or plugin that wait (held, warned
	// or rejected), in bytes of their JSON: a definition past it is not recorded, and so
	// not served, until some are approved or rejected (default 8 MiB; at least 64 KiB).
	MaxHeldBytes int64 `yaml:"max_held_bytes"`
	// PluginChanges is what a plugin's new or changed tool gets once its first catalogue
	// is pinned: follow (pinned as it comes, so a new table's tools appear at once; held
	// only when the heuristics flag its text) or hold (held until an admin approves it, as
	// a server's). Default follow.
	PluginChanges string `yaml:"plugin_changes"`
}

// DefaultMaxHeldBytes is integrity.max_held_bytes when the config sets none.
const DefaultMaxHeldBytes = 8 << 20

// Integrity policies and their settings.
const (
	IntegrityPin  = "pin"
	IntegrityWarn = "warn"
	IntegrityOff  = "off"
	// PluginChangesFollow and PluginChangesHold are integrity.plugin_changes.
	PluginChangesFollow = "follow"
	PluginChangesHold   = "hold"
)

func (c *Config) applyIntegrityDefaults() {
	i := &c.Integrity
	if i.Policy == "" {
		i.Policy = IntegrityPin
	}
	if i.FirstUse == "" {
		i.FirstUse = "trust"
	}
	if i.FirstUseAPI == "" {
		i.FirstUseAPI = i.FirstUse
	}
	if i.OnChange == "" {
		i.OnChange = "hold_new"
	}
	if i.Suspicious == "" {
		i.Suspicious = "flag"
	}
	if i.MaxHeldBytes == 0 {
		i.MaxHeldBytes = DefaultMaxHeldBytes
	}
	if i.PluginChanges == "" {
		i.PluginChanges = PluginChangesFollow
	}
}

// IntegrityOf is the integrity settings of the server or plugin name: the section's
// defaults with its own policy, and first_use_api for a server added through the admin
// API. What runs in the gateway's own process as the host's code (servers of type
// inprocess, plugins of type go) is not pinned unless its own integrity says so; the
// gateway's own plugin (type mcpgw) never is.
func (c *Config) IntegrityOf(name string) IntegrityConfig {
	i := c.Integrity
	if d := c.Servers[name]; d != nil {
		if d.Transport() == TransportInProcess {
			i.Policy = IntegrityOff
		}
		if d.Integrity != "" {
			i.Policy = d.Integrity
		}
		if d.AddedBy == "api" {
			i.FirstUse = i.FirstUseAPI
		}
	} else if p := c.Plugins[name]; p != nil {
		if p.Type == PluginTypeGo {
			i.Policy = IntegrityOff
		}
		if p.Integrity != "" {
			i.Policy = p.Integrity
		}
		if p.Type == PluginTypeSelf {
			i.Policy = IntegrityOff
		}
	}
	return i
}

func oneOf(v string, allowed ...string) bool {
	for _, a := range allowed {
		if v == a {
			return true
		}
	}
	return false
}

// validateIntegrity checks integrity and each server's and plugin's policy.
func (c validator) validateIntegrity(ps *Problems) {
	i := c.Integrity
	for _, f := range []struct {
		where, v string
		allowed  []string
	}{
		{"integrity.policy", i.Policy, []string{IntegrityPin, IntegrityWarn, IntegrityOff}},
		{"integrity.first_use", i.FirstUse, []string{"trust", "hold"}},
		{"integrity.first_use_api", i.FirstUseAPI, []string{"trust", "hold"}},
		{"integrity.on_change", i.OnChange, []string{"hold_new", "keep_old"}},
		{"integrity.suspicious", i.Suspicious, []string{"flag", "hold"}},
		{"integrity.plugin_changes", i.PluginChanges, []string{PluginChangesFollow, PluginChangesHold}},
	} {
		if f.v != "" && !oneOf(f.v, f.allowed...) {
			ps.add(false, f.where, "%q is not one of %v", f.v, f.allowed)
		}
	}
	if i.MaxHeldBytes < 64<<10 {
		ps.add(false, "integrity.max_held_bytes", "%d is too small (at least 65536)", i.MaxHeldBytes)
	}
	for _, name := range sortedKeys(c.Servers) {
		if d := c.Servers[name]; d != nil && d.Integrity != "" && !oneOf(d.Integrity, IntegrityPin, IntegrityWarn, IntegrityOff) {
			ps.add(false, "servers."+name+".integrity", "%q is not one of pin, warn, off", d.Integrity)
		}
	}
	for _, name := range sortedKeys(c.Plugins) {
		if d := c.Plugins[name]; d != nil && d.Integrity != "" && !oneOf(d.Integrity, IntegrityPin, IntegrityWarn, IntegrityOff) {
			ps.add(false, "plugins."+name+".integrity", "%q is not one of pin, warn, off", d.Integrity)
		}
	}
}
