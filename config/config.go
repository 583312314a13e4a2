// Package config is mcpgw's configuration model: the types of mcpgw.yaml, loading with
// ${VAR} expansion, defaults, migration of older versions, and validation that lists every
// problem at once. It knows nothing of running servers; the registry and the gateway read it.
package config

import (
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/mcpgw/mcpgw/internal/tlsfiles"
)

// CurrentVersion is the schema version this build writes and reads. Older files migrate
// forward on load (see migrate).
const CurrentVersion = 2

// Config is the whole gateway configuration: the shape of mcpgw.yaml (docs/config.md).
type Config struct {
	Version   int                        `yaml:"version"`
	Listen    string                     `yaml:"listen"`
	StateDir  string                     `yaml:"state_dir"`
	Store     string                     `yaml:"store"`
	Naming    Naming                     `yaml:"naming"`
	Auth      AuthConfig                 `yaml:"auth"`
	HTTP      HTTPConfig                 `yaml:"http"`
	Upstream  UpstreamDefaults           `yaml:"upstream"`
	Log       LogConfig                  `yaml:"log"`
	Servers   map[string]*ServerDef      `yaml:"servers"`
	Plugins   map[string]*PluginDef      `yaml:"plugins"`
	Agents    map[string]*AgentConfig    `yaml:"agents"`
	Executors map[string]*ExecutorConfig `yaml:"executors"`
	Tasks     map[string]*TaskConfig     `yaml:"tasks"`
	// Projects are the tier between the global servers and a task (projects.go).
	Projects map[string]*ProjectConfig `yaml:"projects"`
	// Tracing exports OpenTelemetry traces over OTLP/HTTP; off unless otlp_endpoint is set
	// (tracing.go, docs/tracing.md).
	Tracing TracingConfig `yaml:"tracing"`
	// Admin says what the admin API may change (docs/security.md#local-trust).
	Admin AdminConfig `yaml:"admin"`
	// Clients is the table of known MCP clients, by the clientInfo.name they send in
	// initialize: the longest tool name and the most tools each takes (clients.go). The
	// built-in profiles (DefaultClients) are merged under the file's: an entry of the same
	// name replaces the built-in one.
	Clients map[string]*ClientProfile `yaml:"clients"`
	// Integrity pins the definitions servers and plugins serve (integrity.go).
	Integrity IntegrityConfig `yaml:"integrity"`
	// UpstreamCredentials keeps the tokens mcpgw holds for OAuth upstreams and names
	// where consent comes back to (upstreamauth.go).
	UpstreamCredentials UpstreamCredentials `yaml:"upstream_credentials"`

	// Path is the file the config was read from ("" for the embedded default).
	Path string `yaml:"-"`
	// ChangedBy names the admin act that made this config the running one, for the
	// integrity records of what it changes ("": a config reload; the admin API sets
	// "admin API (<actor>)"). An admin's change is approved by that act
	// (docs/integrity.md).
	ChangedBy string `yaml:"-"`
}

// Naming says how upstream tool and prompt names become exposed names.
type Naming struct {
	Prefix    string `yaml:"prefix"`    // always | never
	Separator string `yaml:"separator"` // default "__"
	MaxLength int    `yaml:"max_length"`
}

// AuthConfig selects how callers are identified (docs/auth.md).
type AuthConfig struct {
	Mode string `yaml:"mode"` // none | api_key | jwt | oauth
	// AllowNonLoopback lets mode none run on a non-loopback listener.
	AllowNonLoopback bool         `yaml:"allow_non_loopback"`
	Headers          HeaderNames  `yaml:"headers"`
	APIKeys          []APIKeyDef  `yaml:"api_keys"`
	JWT              JWTConfig    `yaml:"jwt"`
	OAuth            OAuthConfig  `yaml:"oauth"`
	AdminToken       string       `yaml:"admin_token"`
	Audit            AuditConfig  `yaml:"audit"`
	Metrics          MetricsLabel `yaml:"metrics"`
	// DisabledAgent is what an agent with enabled: false gets: "refuse" (403, the
	// default) or "empty" (its sessions open and list nothing, for clients that treat a
	// refusal as a broken server).
	DisabledAgent string `yaml:"disabled_agent"`
}

// HeaderNames are the identity headers; a deployment may rename them.
type HeaderNames struct {
	Agent        string `yaml:"agent"`
	Conversation string `yaml:"conversation"`
	Task         string `yaml:"task"`
	Executor     string `yaml:"executor"`
}

// APIKeyDef binds a hashed API key to an agent. The key itself is never stored.
type APIKeyDef struct {
	Agent  string `yaml:"agent"`
	SHA256 string `yaml:"sha256"` // hex SHA-256 of the key
	ID     string `yaml:"id"`
	// ReadOnly and ConnectionScope narrow what the key's holder may use, as an agent's
	// read_only and connection_scope do; the narrower of the agent and the key wins.
	ReadOnly        bool     `yaml:"read_only"`
	ConnectionScope []string `yaml:"connection_scope"`
}

// JWTConfig verifies (and, for `mcpgw token issue`, signs) JSON Web Tokens.
type JWTConfig struct {
	Issuer     string        `yaml:"issuer"`
	Audience   string        `yaml:"audience"`
	ClockSkew  time.Duration `yaml:"clock_skew"`
	AgentClaim string        `yaml:"agent_claim"` // default "sub"
	Keys       []JWTKey      `yaml:"keys"`
}

// JWTKey is one verification key with its pinned algorithm.
type JWTKey struct {
	Kid            string `yaml:"kid"`
	Alg            string `yaml:"alg"` // HS256 HS384 HS512 RS256 RS384 RS512 PS256 ES256 ES384 EdDSA
	Secret         string `yaml:"secret"`
	PublicKey      string `yaml:"public_key"` // PEM
	PublicKeyFile  string `yaml:"public_key_file"`
	PrivateKeyFile string `yaml:"private_key_file"` // only for `mcpgw token issue`
}

// OAuthConfig makes the gateway an OAuth 2.1 resource server.
type OAuthConfig struct {
	// Resource is the canonical URI of this gateway's MCP endpoint (audience by default).
	Resource             string        `yaml:"resource"`
	AuthorizationServers []string      `yaml:"authorization_servers"`
	Issuer               string        `yaml:"issuer"`
	Audience             string        `yaml:"audience"`
	JWKSURL              string        `yaml:"jwks_url"`
	Scopes               []string      `yaml:"scopes"`
	AgentClaim           string        `yaml:"agent_claim"` // default "sub"
	ClockSkew            time.Duration `yaml:"clock_skew"`
	JWKSRefresh          time.Duration `yaml:"jwks_refresh"`
}

// AuditConfig says where the audit log goes.
type AuditConfig struct {
	Path     string `yaml:"path"` // default state_dir/audit.jsonl; "off" disables
	Disabled bool   `yaml:"-"`
}

// MetricsLabel bounds the cardinality of the agent label on metrics.
type MetricsLabel struct {
	AgentLabel string `yaml:"agent_label"` // all | top:N | off (default top:50)
}

// HTTPConfig holds the HTTP front's limits and allow-lists.
type HTTPConfig struct {
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// AllowedHosts are extra Host header values accepted besides the listener's own names.
	AllowedHosts []string `yaml:"allowed_hosts"`
	// AllowedOrigins are extra Origin values accepted besides the listener's own origins.
	AllowedOrigins []string      `yaml:"allowed_origins"`
	PageSize       int           `yaml:"page_size"`
	SessionIdle    time.Duration `yaml:"session_idle_timeout"`
	// UnusedSession ends a session that made no request after initialize (a health check
	// that never says goodbye) and holds no stream, sooner than SessionIdle (default 5m).
	UnusedSession time.Duration `yaml:"unused_session_timeout"`
	// Handshake is the default tools/list form for agents that set none: auto (chosen per
	// session from the size of its view in tokens, Auto, and what the client takes, its
	// profile in Clients), full, thin (names and short descriptions; schemas on demand) or
	// search (a search tool and the pinned tools; every tool stays callable by its name).
	Handshake string `yaml:"handshake"`
	// Search configures the search form (forms.go).
	Search SearchConfig `yaml:"search"`
	// Auto holds the thresholds by which the auto form picks full, thin or search.
	Auto AutoForm `yaml:"auto"`
	// BodyTimeout bounds reading one request body (a client that sends its body slowly
	// holds a connection and a buffer; default 30s).
	BodyTimeout time.Duration `yaml:"body_timeout"`
	// BodyMinRate is the slowest a request body may arrive, in bytes a second on average
	// after BodyRateGrace; slower is answered 408 like a body past BodyTimeout
	// (default 1024).
	BodyMinRate int64 `yaml:"body_min_rate"`
	// BodyRateGrace is the time BodyMinRate allows before a body's first byte (default
	// 10s); at BodyTimeout or more the rate does not apply.
	BodyRateGrace time.Duration `yaml:"body_rate_grace"`
	// MaxConnections caps the HTTP listener's open connections (default 4096).
	MaxConnections int `yaml:"max_connections"`
	// StreamQueue is how many messages may wait for one client stream before it is closed
	// as a slow reader (default 1024).
	StreamQueue int `yaml:"stream_queue"`
	// ResumeBufferBytes bounds the events kept for replay of one POST event stream
	// (Last-Event-ID); past it the oldest are dropped (default 1 MiB).
	ResumeBufferBytes int `yaml:"resume_buffer_bytes"`
	// ResumeFor is how long a finished stream's events stay replayable (default 5m).
	ResumeFor time.Duration `yaml:"resume_for"`
	// ResumeMaxBytes bounds the replay buffers of all sessions together (default 64 MiB);
	// past it new events are not kept.
	ResumeMaxBytes int64 `yaml:"resume_max_bytes"`
	// TrustedProxies are the addresses (IPs or CIDRs) of reverse proxies whose
	// X-Forwarded-For / Forwarded headers name the client. A request that carries those
	// headers from any other peer is never taken for a local one (docs/security.md).
	TrustedProxies []string `yaml:"trusted_proxies"`
	// MaxSessions bounds the live sessions of every agent together (default
	// DefaultMaxSessions); a new session past it evicts an idle one (docs/config.md,
	// "Fair shares").
	MaxSessions int `yaml:"max_sessions"`
	// MaxSessionsPerAgent bounds one agent's live sessions (default: a quarter of
	// MaxSessions, at least 1); a new session past it evicts that agent's oldest idle one.
	MaxSessionsPerAgent int `yaml:"max_sessions_per_agent"`
	// MaxSubscriptionsPerSession bounds the resource URIs one session is subscribed to
	// (resources/subscribe, and the URIs its stateless listen streams name; default 100).
	MaxSubscriptionsPerSession int `yaml:"max_subscriptions_per_session"`
	// MaxSubscriptionsPerAgent bounds the resource URIs all sessions of one agent are
	// subscribed to together (default 1000).
	MaxSubscriptionsPerAgent int `yaml:"max_subscriptions_per_agent"`
	// MaxURIBytes bounds the length of a URI a session subscribes to (default 8192).
	MaxURIBytes int `yaml:"max_uri_bytes"`
}

// AdminConfig limits the admin API.
type AdminConfig struct {
	// AllowCommands (default true) lets the admin API add or change servers and plugins
	// that run a command (stdio servers, out-of-process plugins) and executors that inject
	// environment into them, and test such servers. false keeps commands to the file: the
	// API refuses those writes whoever asks.
	AllowCommands *bool `yaml:"allow_commands"`
}

// CommandsAllowed reports admin.allow_commands (true when unset).
func (a AdminConfig) CommandsAllowed() bool { return a.AllowCommands == nil || *a.AllowCommands }

// UpstreamDefaults apply to every server that does not set its own.
type UpstreamDefaults struct {
	ConnectTimeout time.Duration `yaml:"connect_timeout"`
	// StartWait is how long serve waits for the servers and plugins to come up before it
	// serves (0, the default: it serves at once, with the catalogue they have so far, and
	// sends list_changed as the others come up; /readyz says starting meanwhile).
	StartWait       time.Duration `yaml:"start_wait"`
	CallTimeout     time.Duration `yaml:"call_timeout"`
	ProtocolVersion string        `yaml:"protocol_version"`
	// MaxPerSession caps the per_session instances of one server.
	MaxPerSession int `yaml:"max_instances"`
	// IdleTimeout reaps a per_session instance unused for this long.
	IdleTimeout time.Duration `yaml:"idle_timeout"`
	// MaxMessageBytes bounds one message from an upstream, and so one result (default
	// 32 MiB). A larger message fails its call and restarts a stdio instance.
	MaxMessageBytes int `yaml:"max_message_bytes"`
	// BusyPoll is how long the only call waiting for an upstream's or plugin's answer
	// waits busily instead of sleeping (default 0: never; negative: never; Linux only).
	BusyPoll time.Duration `yaml:"busy_poll"`
	// MaxInstancesPerAgent is the default of servers.<name>.max_instances_per_agent (0:
	// half of the server's own bound, see ServerDef.MaxInstancesPerAgent).
	MaxInstancesPerAgent int `yaml:"max_instances_per_agent"`
	// StartConcurrency bounds the upstream instances the gateway starts at once for
	// itself: shared connections, catalogue probes and warm pool refills, at start-up and
	// on every restart after a failure (0: the default, 2 × GOMAXPROCS and at least 4).
	// A start waits for a slot before its connect timeout begins, so a large fleet comes
	// up in turns instead of every server timing out while all of them compete for CPUs.
	StartConcurrency int `yaml:"start_concurrency"`
	// RelistInterval is how often, at most, an upstream's list_changed makes the gateway
	// read that connection's lists again (default 1s): the notifications that come sooner
	// are coalesced into one re-list when the interval is over, so the last one is always
	// honoured, and an upstream cannot make the gateway list, fingerprint and store its
	// catalogue as fast as it can send.
	RelistInterval time.Duration `yaml:"relist_interval"`
}

// LogConfig configures the gateway's own log.
type LogConfig struct {
	Level  string `yaml:"level"`  // debug | info | warn | error
	Format string `yaml:"format"` // json | text
}

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

// AgentConfig is an agents.<id> entry (docs/config.md).
type AgentConfig struct {
	Enabled  *bool      `yaml:"enabled"`
	Servers  []AgentUse `yaml:"servers"`
	Tools    ToolFilter `yaml:"tools"`
	ReadOnly bool       `yaml:"read_only"`
	// ConnectionScope limits the plugin connections the agent may use, by connection id
	// (nil: every connection). Other ids are absent from the tools' connectionId enum and
	// refused when sent.
	ConnectionScope []string `yaml:"connection_scope"`
	// Handshake is the agent's tools/list form (auto, full, thin or search; "": the
	// http.handshake).
	Handshake string `yaml:"handshake"`
	// PinnedTools are globs over exposed tool names listed in full in the search form for
	// this agent, besides http.search.pinned.
	PinnedTools []string    `yaml:"pinned_tools"`
	Executor    string      `yaml:"executor"`
	Keys        []string    `yaml:"api_keys"`
	Extra       interface{} `yaml:"-"`
}

// AgentUse names one server an agent may use, optionally with its own mode.
type AgentUse struct {
	Name string
	Mode string
}

// UnmarshalYAML accepts "name" or {name: x, mode: y}.
func (u *AgentUse) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		u.Name = n.Value
		return nil
	}
	var v struct {
		Name string `yaml:"name"`
		Mode string `yaml:"mode"`
	}
	if err := n.Decode(&v); err != nil {
		return err
	}
	u.Name, u.Mode = v.Name, v.Mode
	return nil
}

// ToolFilter holds allow and deny globs over exposed tool names.
type ToolFilter struct {
	Allow []string `yaml:"allow"`
	Deny  []string `yaml:"deny"`
}

// ExecutorConfig is an executor and its MCP policy.
type ExecutorConfig struct {
	Type      string         `yaml:"type"`
	MCPPolicy ExecutorPolicy `yaml:"mcp_policy"`
}

// ExecutorPolicy is an executor's mcp_policy (docs/config.md).
type ExecutorPolicy struct {
	AllowStdio          *bool             `yaml:"allow_stdio"`
	AllowHTTP           *bool             `yaml:"allow_http"`
	AllowSSE            *bool             `yaml:"allow_sse"`
	AllowStreamableHTTP *bool             `yaml:"allow_streamable_http"`
	URLRewrite          map[string]string `yaml:"url_rewrite"`
	EnvInjection        map[string]string `yaml:"env_injection"`
	// EnvInjectionOverridesServer makes env_injection win even over a server that sets
	// allow_env_override (by default the policy's value wins over the server's own env,
	// unless the server sets allow_env_override).
	EnvInjectionOverridesServer bool     `yaml:"env_injection_overrides_server"`
	AllowlistServers            []string `yaml:"allowlist_servers"`
	DenylistServers             []string `yaml:"denylist_servers"`
}

// AllowsTransport applies the policy's transport switches to a normalised transport.
// allow_http and allow_streamable_http both name streamable HTTP ("http" is its short
// name in a server's type), so either one set to false forbids it. A transport the policy
// does not know is refused: a new transport must be allowed explicitly. An inprocess server
// has no switch (the gateway reaches it in its own process, wherever the agent runs); the
// policy's lists name it like any server.
func (p ExecutorPolicy) AllowsTransport(transport string) bool {
	allowed := func(b *bool) bool { return b == nil || *b }
	switch transport {
	case TransportInProcess:
		return true
	case TransportStdio:
		return allowed(p.AllowStdio)
	case TransportHTTP:
		return allowed(p.AllowHTTP) && allowed(p.AllowStreamableHTTP)
	case TransportSSE:
		return allowed(p.AllowSSE)
	}
	return false
}

// TaskConfig is a task provisioned from the file.
type TaskConfig struct {
	EnabledMCPServers []string `yaml:"enabled_mcp_servers"`
	Agent             string   `yaml:"agent"`
	// Project names the project the task belongs to: its servers narrow the task's
	// session before the task's own enabled_mcp_servers do (docs/auth.md).
	Project string `yaml:"project"`
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

// PluginTypes are the plugin types the gateway can run.
var PluginTypes = []string{"sql", PluginTypeGo, PluginTypeSelf}

// Has reports whether name is a configured server or plugin: the names sessions enable.
func (c *Config) Has(name string) bool {
	if _, ok := c.Servers[name]; ok {
		return true
	}
	_, ok := c.Plugins[name]
	return ok
}

// RewriteURL applies the longest matching prefix rule of an executor's url_rewrite to u
// (u itself when no rule matches).
func RewriteURL(u string, rules map[string]string) string {
	best := ""
	for from := range rules {
		if strings.HasPrefix(u, from) && len(from) > len(best) {
			best = from
		}
	}
	if best == "" {
		return u
	}
	return rules[best] + u[len(best):]
}

// RewrittenURLs are the distinct URLs the executors' url_rewrite rules make of u, in
// executor name order, without u itself.
func RewrittenURLs(executors map[string]*ExecutorConfig, u string) []string {
	var out []string
	for _, name := range sortedKeys(executors) {
		e := executors[name]
		if e == nil {
			continue
		}
		if r := RewriteURL(u, e.MCPPolicy.URLRewrite); r != u && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}
