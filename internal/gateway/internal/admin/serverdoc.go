package admin

import (
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpgw/mcpgw/config"
)

// ServerDoc is a server as the admin API reads and writes it: the config file's keys
// (docs/config.md) plus enabled.
type ServerDoc struct {
	Type    string            `json:"type"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Dir     string            `json:"dir,omitempty"`
	// AllowEnvOverride is servers.<name>.allow_env_override: the server's env wins over
	// an executor's env_injection.
	AllowEnvOverride bool              `json:"allow_env_override,omitempty"`
	URL              string            `json:"url,omitempty"`
	Headers          map[string]string `json:"headers,omitempty"`
	Mode             string            `json:"mode,omitempty"`
	StdioProxy       bool              `json:"stdio_proxy,omitempty"`
	DefaultEnabled   *bool             `json:"default_enabled,omitempty"`
	Timeouts         *timeoutsDoc      `json:"timeouts,omitempty"`
	ProtocolVersion  string            `json:"protocol_version,omitempty"`
	MaxInstances     int               `json:"max_instances,omitempty"`
	// MaxInstancesPerAgent is servers.<name>.max_instances_per_agent (internal/registry/shares.go).
	MaxInstancesPerAgent int       `json:"max_instances_per_agent,omitempty"`
	MaxConcurrency       *int      `json:"max_concurrency,omitempty"`
	Queue                *queueDoc `json:"queue,omitempty"`
	TLS                  *tlsDoc   `json:"tls,omitempty"`
	Meta                 *metaDoc  `json:"meta,omitempty"`
	// Enabled false keeps the entry but runs no server (default true).
	Enabled *bool `json:"enabled,omitempty"`
	// Pool and AgentGrace are servers.<name>.pool and agent_grace (internal/registry/pool.go,
	// internal/registry/agents.go).
	Pool       *poolDoc `json:"pool,omitempty"`
	AgentGrace string   `json:"agent_grace,omitempty"`
	// Integrity is servers.<name>.integrity: pin, warn or off.
	Integrity string `json:"integrity,omitempty"`
}

type timeoutsDoc struct {
	Connect string `json:"connect,omitempty"`
	Call    string `json:"call,omitempty"`
}

type queueDoc struct {
	Max         int    `json:"max,omitempty"`
	Timeout     string `json:"timeout,omitempty"`
	MaxPerAgent int    `json:"max_per_agent,omitempty"`
}

type tlsDoc struct {
	CAFile     string `json:"ca_file,omitempty"`
	CertFile   string `json:"cert_file,omitempty"`
	KeyFile    string `json:"key_file,omitempty"`
	ServerName string `json:"server_name,omitempty"`
}

type metaDoc struct {
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	URL         string `json:"url,omitempty"`
	Icon        string `json:"icon,omitempty"`
}

func cloneInt(p *int) *int {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func (d *ServerDoc) enabled() bool { return d.Enabled == nil || *d.Enabled }

// def converts the document to a config definition; where prefixes the field names of
// its errors (durations that do not parse).
func (d *ServerDoc) def(where string) (*config.ServerDef, []FieldError) {
	s := &config.ServerDef{Type: config.NormalizeTransport(d.Type), Command: d.Command, Args: slices.Clone(d.Args),
		Env: maps.Clone(d.Env), Dir: d.Dir, URL: d.URL, Headers: maps.Clone(d.Headers), Mode: d.Mode,
		StdioProxy: d.StdioProxy, DefaultEnabled: d.DefaultEnabled, ProtocolVer: d.ProtocolVersion, MaxInstances: d.MaxInstances,
		MaxConcurrency: cloneInt(d.MaxConcurrency), MaxInstancesPerAgent: d.MaxInstancesPerAgent, Integrity: d.Integrity,
		AllowEnvOverride: d.AllowEnvOverride}
	var errs []FieldError
	if t := d.Timeouts; t != nil {
		var e *FieldError
		if s.Timeouts.Connect, e = parseDuration(t.Connect, where+"timeouts.connect"); e != nil {
			errs = append(errs, *e)
		}
		if s.Timeouts.Call, e = parseDuration(t.Call, where+"timeouts.call"); e != nil {
			errs = append(errs, *e)
		}
	}
	if q := d.Queue; q != nil {
		s.Queue.Max, s.Queue.MaxPerAgent = q.Max, q.MaxPerAgent
		var e *FieldError
		if s.Queue.Timeout, e = parseDuration(q.Timeout, where+"queue.timeout"); e != nil {
			errs = append(errs, *e)
		}
	}
	errs = append(errs, d.instanceDef(s, where)...)
	if t := d.TLS; t != nil {
		s.TLS = config.TLS{CAFile: t.CAFile, CertFile: t.CertFile, KeyFile: t.KeyFile, ServerName: t.ServerName}
	}
	if m := d.Meta; m != nil {
		s.Meta = config.ServerMeta{Title: m.Title, Description: m.Description, URL: m.URL, Icon: m.Icon}
	}
	return s, errs
}

// docOf shows a config definition (a file server) as a document.
func docOf(s *config.ServerDef) ServerDoc {
	d := ServerDoc{Type: s.Type, Command: s.Command, Args: s.Args, Env: s.Env, Dir: s.Dir, URL: s.URL, Headers: s.Headers,
		Mode: s.Mode, StdioProxy: s.StdioProxy, DefaultEnabled: s.DefaultEnabled, ProtocolVersion: s.ProtocolVer, MaxInstances: s.MaxInstances}
	if c, k := durationString(s.Timeouts.Connect), durationString(s.Timeouts.Call); c != "" || k != "" {
		d.Timeouts = &timeoutsDoc{Connect: c, Call: k}
	}
	d.MaxConcurrency = cloneInt(s.MaxConcurrency)
	d.MaxInstancesPerAgent = s.MaxInstancesPerAgent
	d.Integrity = s.Integrity
	d.AllowEnvOverride = s.AllowEnvOverride
	if m, k, a := s.Queue.Max, durationString(s.Queue.Timeout), s.Queue.MaxPerAgent; m != 0 || k != "" || a != 0 {
		d.Queue = &queueDoc{Max: m, Timeout: k, MaxPerAgent: a}
	}
	d.instanceDoc(s)
	if s.TLS != (config.TLS{}) {
		d.TLS = &tlsDoc{CAFile: s.TLS.CAFile, CertFile: s.TLS.CertFile, KeyFile: s.TLS.KeyFile, ServerName: s.TLS.ServerName}
	}
	if s.Meta != (config.ServerMeta{}) {
		d.Meta = &metaDoc{Title: s.Meta.Title, Description: s.Meta.Description, URL: s.Meta.URL, Icon: s.Meta.Icon}
	}
	return d
}

// poolDoc is servers.<name>.pool as the admin API reads and writes it.
type poolDoc struct {
	Warm        int    `json:"warm,omitempty"`
	Max         int    `json:"max,omitempty"`
	IdleTimeout string `json:"idle_timeout,omitempty"`
}

// instanceDef copies the document's pool and agent_grace into s.
func (d *ServerDoc) instanceDef(s *config.ServerDef, where string) []FieldError {
	var errs []FieldError
	if p := d.Pool; p != nil {
		s.Pool = &config.PoolDef{Warm: p.Warm, Max: p.Max}
		var e *FieldError
		if s.Pool.IdleTimeout, e = parseDuration(p.IdleTimeout, where+"pool.idle_timeout"); e != nil {
			errs = append(errs, *e)
		}
	}
	var e *FieldError
	if s.AgentGrace, e = parseDuration(d.AgentGrace, where+"agent_grace"); e != nil {
		errs = append(errs, *e)
	}
	return errs
}

// instanceDoc shows s's pool and agent_grace in the document.
func (d *ServerDoc) instanceDoc(s *config.ServerDef) {
	if p := s.Pool; p != nil {
		d.Pool = &poolDoc{Warm: p.Warm, Max: p.Max, IdleTimeout: durationString(p.IdleTimeout)}
	}
	d.AgentGrace = durationString(s.AgentGrace)
}

// commandWarning is a warning for a stdio server whose command the gateway could not
// start: not found on the gateway's PATH, and not an existing file (a relative path with
// a slash is taken from the server's dir, as the process is started there). The server is
// saved all the same: the command may be installed next, and the supervisor retries.
func commandWarning(name string, d *ServerDoc) *FieldError {
	if config.NormalizeTransport(d.Type) != config.TransportStdio || d.Command == "" {
		return nil
	}
	cmd := d.Command
	if d.Dir != "" && strings.ContainsRune(cmd, filepath.Separator) && !filepath.IsAbs(cmd) {
		cmd = filepath.Join(d.Dir, cmd)
	}
	if _, err := exec.LookPath(cmd); err == nil {
		return nil
	}
	return &FieldError{Field: "servers." + name + ".command",
		Message: fmt.Sprintf("%q is not on the gateway's PATH and is not an executable file: the server is saved, but it cannot start until the command exists", d.Command),
		Hint:    "install the command, or give its absolute path"}
}
