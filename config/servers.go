package config

import (
	"time"

	"github.com/mcpgw/mcpgw/internal/tlsfiles"
)

// ServerDef is one upstream MCP server (docs/config.md, servers).
type ServerDef struct {
	Type    string            `yaml:"type"` // stdio | http | streamable_http | sse | inprocess
	Command string            `yaml:"command"`
	Args    []string          `yaml:"args"`
	Env     map[string]string `yaml:"env"`
	Dir     string            `yaml:"dir"`
	// AllowEnvOverride lets the server's own env values win over an executor's
	// env_injection of the same variable (default false: the executor's policy wins).
	AllowEnvOverride bool              `yaml:"allow_env_override"`
	URL              string            `yaml:"url"`
	Headers          map[string]string `yaml:"headers"`
	Mode             string            `yaml:"mode"` // auto | shared | per_session | per_agent | per_call
	StdioProxy       bool              `yaml:"stdio_proxy"`
	DefaultEnabled   *bool             `yaml:"default_enabled"`
	Meta             ServerMeta        `yaml:"meta"`
	Timeouts         Timeouts          `yaml:"timeouts"`
	ProtocolVer      string            `yaml:"protocol_version"`
	MaxInstances     int               `yaml:"max_instances"`
	// MaxInstancesPerAgent bounds the instances of this server one agent holds at once,
	// over every policy (per_session, per_agent, per_call, pool takes), so that one agent
	// cannot take every instance (default upstream.max_instances_per_agent, else half of
	// max_instances or of pool.max when smaller, at least 1).
	MaxInstancesPerAgent int `yaml:"max_instances_per_agent"`
	// MaxConcurrency is how many client requests one instance serves at once (nil: the
	// default, 1 for stdio and 0 = unlimited for HTTP and SSE; docs/config.md).
	MaxConcurrency *int  `yaml:"max_concurrency"`
	Queue          Queue `yaml:"queue"`
	TLS            TLS   `yaml:"tls"`
	// Pool keeps started, initialized instances ready for new sessions (per_session and
	// per_agent servers; nil: none, docs/config.md "Warm pools").
	Pool *PoolDef `yaml:"pool"`
	// AgentGrace is how long a per_agent instance outlives its agent's last session
	// (default DefaultAgentGrace).
	AgentGrace time.Duration `yaml:"agent_grace"`
	// Integrity is the server's integrity policy: pin, warn or off (default
	// integrity.policy; integrity.go).
	Integrity string `yaml:"integrity"`
	// Auth is how mcpgw authenticates to the server beyond Headers: none, or as its
	// OAuth 2.1 client (upstreamauth.go).
	Auth UpstreamAuth `yaml:"auth"`
	// AddedBy is "api" for a server added through the admin API (set when the API's
	// entries are merged; never read from a file).
	AddedBy string `yaml:"-"`
}

// Queue bounds the requests waiting for a slot of an instance with max_concurrency: at
// most Max wait, each at most Timeout, then it fails as "server busy".
type Queue struct {
	Max     int           `yaml:"max"`
	Timeout time.Duration `yaml:"timeout"`
	// MaxPerAgent bounds the requests of one agent waiting for one instance, so that one
	// agent cannot fill the queue (default: half of Max, at least 1).
	MaxPerAgent int `yaml:"max_per_agent"`
}

// Default queue bounds (servers.<name>.queue).
const (
	DefaultQueueMax     = 64
	DefaultQueueTimeout = 30 * time.Second
)

// ProtocolAuto is the default protocol_version: the stateless revision (2026-07-28) where
// the upstream serves it and it serves the callers better, the session revision
// (2025-11-25) elsewhere (UpstreamVersion).
const ProtocolAuto = "auto"

// UpstreamVersion is the protocol_version an instance of the server is dialed with; the
// upstream package reads "auto" as "2026-07-28 when server/discover lists it, else
// 2025-11-25". With ProtocolAuto, a streamable HTTP server is asked for the stateless
// revision first: one that serves it is stateless itself, and over the session revision it
// could send its callers no input request at all. A stdio (or SSE) instance is asked first
// only when it serves a stateless caller (a gateway-side session of 2026-07-28 requests):
// caller and server then speak one revision end to end, as they would directly, and the
// input requests of its calls keep the server's own keys and request state. A server that
// lists 2026-07-28 but asks for sampling or elicitation the session way inside a call fails
// that call for a stateless caller through the gateway as it does directly; a server that
// does not list it stays on 2025-11-25, where the gateway turns what it asks into the
// caller's input round. The instances of session clients stay on 2025-11-25, where a
// session server can ask them anything.
func (d *ServerDef) UpstreamVersion(statelessOwner bool) string {
	if d.ProtocolVer != ProtocolAuto && d.ProtocolVer != "" {
		return d.ProtocolVer
	}
	if statelessOwner || d.Transport() == TransportHTTP {
		return ProtocolAuto
	}
	return "2025-11-25"
}

// Concurrency is the server's effective max_concurrency (0: unlimited).
func (d *ServerDef) Concurrency() int {
	if d.MaxConcurrency != nil {
		return *d.MaxConcurrency
	}
	if d.Transport() == TransportStdio {
		return 1
	}
	return 0
}

// TLS is how the gateway checks an https upstream and proves itself to it
// (docs/config.md, "tls"): a CA bundle instead of the system's roots, a client
// certificate and its key, the name the server's certificate must carry. Files are read
// and checked when the config loads, and read again on each connect.
type TLS struct {
	CAFile     string `yaml:"ca_file"`
	CertFile   string `yaml:"cert_file"`
	KeyFile    string `yaml:"key_file"`
	ServerName string `yaml:"server_name"`
}

// files is the setting as internal/tlsfiles reads it. The upstreams convert it the same
// way (upstream.TLSFiles(d.TLS)): the door shows no internal type.
func (t TLS) files() tlsfiles.Files { return tlsfiles.Files(t) }

// ServerMeta is descriptive data shown in the admin API and UI.
type ServerMeta struct {
	Title       string `yaml:"title"`
	Description string `yaml:"description"`
	URL         string `yaml:"url"`
	Icon        string `yaml:"icon"`
}

// Timeouts bound an upstream's connection set-up and each call.
type Timeouts struct {
	Connect time.Duration `yaml:"connect"`
	Call    time.Duration `yaml:"call"`
}

// Transport kinds after normalisation.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "streamable_http"
	TransportSSE   = "sse"
	// TransportInProcess is an MCP server served by the Go program that embeds the gateway
	// (package embedded), reached without a socket. Only such a program can start it.
	TransportInProcess = "inprocess"
)

// Instance modes after resolution.
const (
	ModeShared     = "shared"
	ModePerSession = "per_session"
	// ModePerAgent: one instance per agent identity, shared by that agent's sessions.
	ModePerAgent = "per_agent"
	// ModePerCall: a fresh instance for every request, stopped when it is answered.
	ModePerCall = "per_call"
)

// Transport returns the normalised transport of a server: one of TransportStdio,
// TransportHTTP and TransportSSE, or the raw type when it is none of them (validation
// refuses it). Loading normalises Type itself, so every alias ("http", "streamable-http",
// "streamableHttp") reads as TransportHTTP wherever the config is used; code switches on
// Transport(), never on the raw string.
func (d *ServerDef) Transport() string { return NormalizeTransport(d.Type) }

// NormalizeTransport maps a server type as written to its transport constant; an unknown
// type comes back unchanged.
func NormalizeTransport(t string) string {
	switch t {
	case "http", "streamable_http", "streamable-http", "streamableHttp", "streamable":
		return TransportHTTP
	case "stdio":
		return TransportStdio
	case "sse":
		return TransportSSE
	case "inprocess", "in_process", "in-process":
		return TransportInProcess
	}
	return t
}

// ResolvedMode applies the auto rule: stdio is per_session unless stdio_proxy; an OAuth
// upstream whose grants are per user is per_agent (an instance per agent and identity, each
// with its identity's token); anything else shared.
func (d *ServerDef) ResolvedMode() string {
	switch d.Mode {
	case ModeShared, ModePerSession, ModePerAgent, ModePerCall:
		return d.Mode
	}
	if d.Transport() == TransportStdio && !d.StdioProxy {
		return ModePerSession
	}
	if d.Auth.PerUser() {
		return ModePerAgent
	}
	return ModeShared
}

// Enabled reports the server's default_enabled (true when unset).
func (d *ServerDef) Enabled() bool { return d.DefaultEnabled == nil || *d.DefaultEnabled }
