// Package config is mcpgw's configuration model: the types of mcpgw.yaml, loading with
// ${VAR} expansion, defaults, migration of older versions, and validation that lists every
// problem at once. It knows nothing of running servers; the registry and the gateway read it.
package config

import (
	"time"
)

// CurrentVersion is the schema version this build writes and reads. Older files migrate
// forward on load (see migrate).
const CurrentVersion = 2

// Config is the whole gateway configuration: the shape of mcpgw.yaml (docs/config.md).
// Here and in the types of its parts, a field is the YAML key of its tag, and
// docs/config.md documents each key; a config built in code gets a file's defaults from
// ApplyDefaults and is checked by Validate.
type Config struct {
	Version   int                        `yaml:"version"`   // the schema version (CurrentVersion; older ones migrate on load)
	Listen    string                     `yaml:"listen"`    // host:port the gateway serves on
	StateDir  string                     `yaml:"state_dir"` // the gateway's own directory: store file, keys, audit log
	Store     string                     `yaml:"store"`     // bolt | memory | a redis:// URL
	Naming    Naming                     `yaml:"naming"`    // how upstream names become exposed names
	Auth      AuthConfig                 `yaml:"auth"`      // who a request is (docs/auth.md)
	HTTP      HTTPConfig                 `yaml:"http"`      // the HTTP server's limits and hosts
	Upstream  UpstreamDefaults           `yaml:"upstream"`  // defaults for every upstream
	Log       LogConfig                  `yaml:"log"`       // the gateway's own log
	Servers   map[string]*ServerDef      `yaml:"servers"`   // the upstream MCP servers, by name
	Plugins   map[string]*PluginDef      `yaml:"plugins"`   // the resource providers served as tools, by name
	Agents    map[string]*AgentConfig    `yaml:"agents"`    // the agents, by id: their servers and limits
	Executors map[string]*ExecutorConfig `yaml:"executors"` // the executors, by id: their MCP policy
	Tasks     map[string]*TaskConfig     `yaml:"tasks"`     // tasks provisioned from the file, by id
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

// Has reports whether name is a configured server or plugin: the names sessions enable.
func (c *Config) Has(name string) bool {
	if _, ok := c.Servers[name]; ok {
		return true
	}
	_, ok := c.Plugins[name]
	return ok
}
