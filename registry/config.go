package registry

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/mcpgw/mcpgw/statedir"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mcpgw/mcpgw/registry/upstream"
)

// ConfigVersion is the schema version this build writes and reads. Older files migrate
// forward on load (see migrate).
const ConfigVersion = 1

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
	Agents    map[string]*AgentConfig    `yaml:"agents"`
	Executors map[string]*ExecutorConfig `yaml:"executors"`
	Tasks     map[string]*TaskConfig     `yaml:"tasks"`

	// Path is the file the config was read from ("" for the embedded default).
	Path string `yaml:"-"`
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
	// BodyTimeout bounds reading one request body (a client that sends its body slowly
	// holds a connection and a buffer; default 30s).
	BodyTimeout time.Duration `yaml:"body_timeout"`
	// MaxConnections caps the HTTP listener's open connections (default 4096).
	MaxConnections int `yaml:"max_connections"`
	// StreamQueue is how many messages may wait for one client stream before it is closed
	// as a slow reader (default 1024).
	StreamQueue int `yaml:"stream_queue"`
}

// UpstreamDefaults apply to every server that does not set its own.
type UpstreamDefaults struct {
	ConnectTimeout  time.Duration `yaml:"connect_timeout"`
	CallTimeout     time.Duration `yaml:"call_timeout"`
	ProtocolVersion string        `yaml:"protocol_version"`
	// MaxPerSession caps the per_session instances of one server.
	MaxPerSession int `yaml:"max_instances"`
	// IdleTimeout reaps a per_session instance unused for this long.
	IdleTimeout time.Duration `yaml:"idle_timeout"`
	// MaxMessageBytes bounds one message from an upstream, and so one result (default
	// 32 MiB). A larger message fails its call and restarts a stdio instance.
	MaxMessageBytes int `yaml:"max_message_bytes"`
}

// LogConfig configures the gateway's own log.
type LogConfig struct {
	Level  string `yaml:"level"`  // debug | info | warn | error
	Format string `yaml:"format"` // json | text
}

// ServerDef is one upstream MCP server (docs/config.md, servers).
type ServerDef struct {
	Type           string            `yaml:"type"` // stdio | http | streamable_http | sse
	Command        string            `yaml:"command"`
	Args           []string          `yaml:"args"`
	Env            map[string]string `yaml:"env"`
	Dir            string            `yaml:"dir"`
	URL            string            `yaml:"url"`
	Headers        map[string]string `yaml:"headers"`
	Mode           string            `yaml:"mode"` // auto | shared | per_session
	StdioProxy     bool              `yaml:"stdio_proxy"`
	DefaultEnabled *bool             `yaml:"default_enabled"`
	Meta           ServerMeta        `yaml:"meta"`
	Timeouts       Timeouts          `yaml:"timeouts"`
	ProtocolVer    string            `yaml:"protocol_version"`
	MaxInstances   int               `yaml:"max_instances"`
	TLS            TLS               `yaml:"tls"`
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

// Files is the setting as the upstream package takes it.
func (t TLS) Files() upstream.TLSFiles { return upstream.TLSFiles(t) }

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
	Enabled   *bool       `yaml:"enabled"`
	Servers   []AgentUse  `yaml:"servers"`
	Tools     ToolFilter  `yaml:"tools"`
	ReadOnly  bool        `yaml:"read_only"`
	Handshake string      `yaml:"handshake"`
	Executor  string      `yaml:"executor"`
	Keys      []string    `yaml:"api_keys"`
	Extra     interface{} `yaml:"-"`
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
	AllowlistServers    []string          `yaml:"allowlist_servers"`
	DenylistServers     []string          `yaml:"denylist_servers"`
}

// TaskConfig is a task provisioned from the file.
type TaskConfig struct {
	EnabledMCPServers []string `yaml:"enabled_mcp_servers"`
	Agent             string   `yaml:"agent"`
}

// Transport kinds after normalisation.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "streamable_http"
	TransportSSE   = "sse"
)

// Instance modes after resolution.
const (
	ModeShared     = "shared"
	ModePerSession = "per_session"
)

// Transport returns the normalised transport of a server ("http" is streamable HTTP).
func (d *ServerDef) Transport() string {
	switch d.Type {
	case "http", "streamable_http", "streamable-http", "streamableHttp":
		return TransportHTTP
	}
	return d.Type
}

// ResolvedMode applies the auto rule: stdio is per_session unless stdio_proxy, anything else shared.
func (d *ServerDef) ResolvedMode() string {
	switch d.Mode {
	case ModeShared, ModePerSession:
		return d.Mode
	}
	if d.Transport() == TransportStdio && !d.StdioProxy {
		return ModePerSession
	}
	return ModeShared
}

// Enabled reports the server's default_enabled (true when unset).
func (d *ServerDef) Enabled() bool { return d.DefaultEnabled == nil || *d.DefaultEnabled }

// Problem is one thing wrong with a config. Warnings do not stop the gateway.
type Problem struct {
	Warning bool
	Where   string
	Text    string
}

func (p Problem) String() string {
	kind := "error"
	if p.Warning {
		kind = "warning"
	}
	if p.Where == "" {
		return kind + ": " + p.Text
	}
	return kind + ": " + p.Where + ": " + p.Text
}

// Problems is a list of config problems; as an error it lists them all.
type Problems []Problem

func (ps Problems) Error() string {
	var b strings.Builder
	n := 0
	for _, p := range ps {
		if !p.Warning {
			n++
		}
	}
	fmt.Fprintf(&b, "invalid config: %d problem(s)", n)
	for _, p := range ps {
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}

// HasErrors reports whether any problem is an error rather than a warning.
func (ps Problems) HasErrors() bool {
	for _, p := range ps {
		if !p.Warning {
			return true
		}
	}
	return false
}

// Warnings returns only the warnings.
func (ps Problems) Warnings() Problems {
	var w Problems
	for _, p := range ps {
		if p.Warning {
			w = append(w, p)
		}
	}
	return w
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// expandEnv replaces ${VAR} and ${VAR:-default}. Unset variables without a default expand
// to "" and are reported as warnings.
func expandEnv(src []byte, lookup func(string) (string, bool)) ([]byte, Problems) {
	var ps Problems
	seen := map[string]bool{}
	out := envRef.ReplaceAllFunc(src, func(m []byte) []byte {
		sub := envRef.FindSubmatch(m)
		name := string(sub[1])
		if v, ok := lookup(name); ok && v != "" {
			return []byte(v)
		}
		if len(sub[2]) > 0 {
			return sub[3]
		}
		if !seen[name] {
			seen[name] = true
			ps = append(ps, Problem{Warning: true, Text: fmt.Sprintf("environment variable %s is not set; ${%s} expands to an empty string", name, name)})
		}
		return nil
	})
	return out, ps
}

// LoadConfig reads, expands, parses, migrates and validates a config file. The returned
// Problems hold every warning; err is a Problems value when there are errors.
func LoadConfig(path string) (*Config, Problems, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read config: %w", err)
	}
	cfg, ps, err := ParseConfig(raw)
	if cfg != nil {
		cfg.Path = path
	}
	return cfg, ps, err
}

// ParseConfig is LoadConfig on bytes. ${VAR} references are expanded inside YAML scalar
// values (never across the document's structure, never in comments); unknown keys are
// errors, and validation still runs so that every problem is listed at once.
func ParseConfig(raw []byte) (*Config, Problems, error) {
	var ps Problems
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		ps = append(ps, yamlProblems(err)...)
		return nil, ps, ps
	}
	ps = append(ps, expandNode(&doc, os.LookupEnv, map[string]bool{})...)
	expanded, err := yaml.Marshal(&doc)
	if err != nil {
		ps = append(ps, Problem{Text: err.Error()})
		return nil, ps, ps
	}
	if len(doc.Content) == 0 {
		expanded = nil
	}
	cfg := &Config{}
	dec := yaml.NewDecoder(bytes.NewReader(expanded))
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil && !errors.Is(err, io.EOF) {
		ps = append(ps, yamlProblems(err)...)
		// Read what can be read, so that the other problems are listed too.
		cfg = &Config{}
		if err := yaml.Unmarshal(expanded, cfg); err != nil {
			return nil, ps, ps
		}
	}
	migrate(cfg)
	cfg.applyDefaults()
	ps = append(ps, cfg.Validate()...)
	if ps.HasErrors() {
		return cfg, ps, ps
	}
	return cfg, ps, nil
}

// expandNode expands ${VAR} in every scalar value of the document.
func expandNode(n *yaml.Node, lookup func(string) (string, bool), seen map[string]bool) Problems {
	var ps Problems
	if n.Kind == yaml.ScalarNode && strings.Contains(n.Value, "${") {
		out, p := expandEnv([]byte(n.Value), lookup)
		for _, q := range p {
			if !seen[q.Text] {
				seen[q.Text] = true
				ps = append(ps, q)
			}
		}
		if string(out) != n.Value {
			n.Value = string(out)
			switch {
			case n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0:
			case strings.ContainsAny(n.Value, "\"'#:{}[],&*!|>%@`\n\r\t") || strings.TrimSpace(n.Value) != n.Value:
				// A value with YAML syntax in it stays the string it is.
				n.Style, n.Tag = yaml.DoubleQuotedStyle, "!!str"
			default:
				n.Tag = "" // a plain value: its type is read from what it now says (8080, true)
			}
		}
	}
	for _, c := range n.Content {
		ps = append(ps, expandNode(c, lookup, seen)...)
	}
	return ps
}

func yamlProblems(err error) Problems {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		var ps Problems
		for _, e := range te.Errors {
			ps = append(ps, Problem{Text: e})
		}
		return ps
	}
	return Problems{{Text: err.Error()}}
}

// migrate brings an older schema forward. Version 0 (unset) is the same shape as 1.
func migrate(c *Config) {
	if c.Version < ConfigVersion {
		c.Version = ConfigVersion
	}
}

// DefaultStateDir is where state lives when the config names no state_dir.
func DefaultStateDir() string { return statedir.Default() }

func (c *Config) applyDefaults() {
	if c.Listen == "" {
		c.Listen = "127.0.0.1:8080"
	}
	if c.StateDir == "" {
		c.StateDir = DefaultStateDir()
	}
	if strings.HasPrefix(c.StateDir, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			c.StateDir = filepath.Join(home, c.StateDir[2:])
		}
	}
	if c.Store == "" {
		c.Store = "bolt"
	}
	if c.Naming.Prefix == "" {
		c.Naming.Prefix = "always"
	}
	if c.Naming.Separator == "" {
		c.Naming.Separator = "__"
	}
	if c.Naming.MaxLength == 0 {
		c.Naming.MaxLength = 64
	}
	if c.Auth.Mode == "" {
		c.Auth.Mode = "none"
	}
	h := &c.Auth.Headers
	for _, d := range []struct {
		p *string
		v string
	}{{&h.Agent, "X-Agent-ID"}, {&h.Conversation, "X-Conversation-ID"}, {&h.Task, "X-Task-ID"}, {&h.Executor, "X-Executor-ID"}} {
		if *d.p == "" {
			*d.p = d.v
		}
	}
	if c.Auth.JWT.AgentClaim == "" {
		c.Auth.JWT.AgentClaim = "sub"
	}
	if c.Auth.JWT.ClockSkew == 0 {
		c.Auth.JWT.ClockSkew = 30 * time.Second
	}
	if c.Auth.OAuth.AgentClaim == "" {
		c.Auth.OAuth.AgentClaim = "sub"
	}
	if c.Auth.OAuth.ClockSkew == 0 {
		c.Auth.OAuth.ClockSkew = 30 * time.Second
	}
	if c.Auth.OAuth.JWKSRefresh == 0 {
		c.Auth.OAuth.JWKSRefresh = 10 * time.Minute
	}
	switch c.Auth.Audit.Path {
	case "":
		c.Auth.Audit.Path = filepath.Join(c.StateDir, "audit.jsonl")
	case "off":
		c.Auth.Audit.Disabled = true
	}
	if c.Auth.Metrics.AgentLabel == "" {
		c.Auth.Metrics.AgentLabel = "top:50"
	}
	if c.HTTP.MaxBodyBytes == 0 {
		c.HTTP.MaxBodyBytes = 4 << 20
	}
	if c.HTTP.PageSize == 0 {
		c.HTTP.PageSize = 1000
	}
	if c.HTTP.SessionIdle == 0 {
		c.HTTP.SessionIdle = 24 * time.Hour
	}
	if c.Upstream.ConnectTimeout == 0 {
		c.Upstream.ConnectTimeout = 30 * time.Second
	}
	if c.Upstream.CallTimeout == 0 {
		c.Upstream.CallTimeout = 120 * time.Second
	}
	if c.Upstream.ProtocolVersion == "" {
		c.Upstream.ProtocolVersion = "2025-11-25"
	}
	if c.Upstream.MaxPerSession == 0 {
		c.Upstream.MaxPerSession = 256
	}
	if c.Upstream.IdleTimeout == 0 {
		c.Upstream.IdleTimeout = 30 * time.Minute
	}
	if c.Upstream.MaxMessageBytes == 0 {
		c.Upstream.MaxMessageBytes = 32 << 20
	}
	if c.HTTP.BodyTimeout == 0 {
		c.HTTP.BodyTimeout = 30 * time.Second
	}
	if c.HTTP.MaxConnections == 0 {
		c.HTTP.MaxConnections = 4096
	}
	if c.HTTP.StreamQueue == 0 {
		c.HTTP.StreamQueue = 1024
	}
	if c.Log.Level == "" {
		c.Log.Level = "info"
	}
	if c.Log.Format == "" {
		c.Log.Format = "json"
	}
	for _, d := range c.Servers {
		if d == nil {
			continue
		}
		if d.Mode == "" {
			d.Mode = "auto"
		}
		if d.Timeouts.Connect == 0 {
			d.Timeouts.Connect = c.Upstream.ConnectTimeout
		}
		if d.Timeouts.Call == 0 {
			d.Timeouts.Call = c.Upstream.CallTimeout
		}
		if d.ProtocolVer == "" {
			d.ProtocolVer = c.Upstream.ProtocolVersion
		}
		if d.MaxInstances == 0 {
			d.MaxInstances = c.Upstream.MaxPerSession
		}
	}
}

var serverNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// SharedStdioError is the exact message docs/config.md gives for shared mode on a stdio server.
func SharedStdioError(name string) string {
	return fmt.Sprintf("mcp server %q: shared mode requires HTTP/SSE/streamable HTTP transport (stdio is per-session only)", name)
}

// Validate lists every problem it finds; it does not stop at the first.
func (c *Config) Validate() Problems {
	var ps Problems
	add := func(warn bool, where, format string, a ...any) {
		ps = append(ps, Problem{Warning: warn, Where: where, Text: fmt.Sprintf(format, a...)})
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		add(false, "listen", "%q is not host:port: %v", c.Listen, err)
	}
	switch {
	case c.Store == "bolt", c.Store == "memory", strings.HasPrefix(c.Store, "redis://"), strings.HasPrefix(c.Store, "rediss://"), strings.HasPrefix(c.Store, "unix://"):
	default:
		add(false, "store", "%q is not one of bolt, memory, redis://host:port/db", c.Store)
	}
	switch c.Naming.Prefix {
	case "always", "never":
	default:
		add(false, "naming.prefix", "%q is not one of always, never", c.Naming.Prefix)
	}
	if !regexp.MustCompile(`^[A-Za-z0-9_-]{1,8}$`).MatchString(c.Naming.Separator) {
		add(false, "naming.separator", "%q must be 1 to 8 of the characters A-Z a-z 0-9 _ -", c.Naming.Separator)
	}
	if c.Naming.MaxLength < 16 || c.Naming.MaxLength > 128 {
		add(false, "naming.max_length", "%d must be between 16 and 128", c.Naming.MaxLength)
	}
	switch c.Auth.Mode {
	case "none", "api_key":
	case "jwt":
		if len(c.Auth.JWT.Keys) == 0 {
			add(false, "auth.jwt.keys", "mode jwt needs at least one key")
		}
	case "oauth":
		if c.Auth.OAuth.JWKSURL == "" {
			add(false, "auth.oauth.jwks_url", "mode oauth needs the authorization server's JWKS URL")
		}
		if len(c.Auth.OAuth.AuthorizationServers) == 0 {
			add(false, "auth.oauth.authorization_servers", "mode oauth needs at least one authorization server (RFC 9728)")
		}
	default:
		add(false, "auth.mode", "%q is not one of none, api_key, jwt, oauth", c.Auth.Mode)
	}
	for i, k := range c.Auth.JWT.Keys {
		where := fmt.Sprintf("auth.jwt.keys[%d]", i)
		switch k.Alg {
		case "HS256", "HS384", "HS512":
			if k.Secret == "" {
				add(false, where, "%s needs a secret", k.Alg)
			}
		case "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA":
			if k.PublicKey == "" && k.PublicKeyFile == "" && k.PrivateKeyFile == "" {
				add(false, where, "%s needs public_key, public_key_file or private_key_file", k.Alg)
			}
		case "":
			add(false, where, "missing alg (the algorithm is pinned per key)")
		default:
			add(false, where, "unsupported alg %q", k.Alg)
		}
	}
	for i, k := range c.Auth.APIKeys {
		if _, ok := c.Agents[k.Agent]; len(c.Agents) > 0 && !ok {
			add(false, fmt.Sprintf("auth.api_keys[%d]", i), "unknown agent %q", k.Agent)
		}
		if _, err := hex.DecodeString(k.SHA256); err != nil || len(k.SHA256) != 64 {
			// Also catches `sha256sum` output pasted whole ("<hex>  -").
			add(false, fmt.Sprintf("auth.api_keys[%d]", i), "sha256 must be 64 hex digits")
		}
	}
	switch al := c.Auth.Metrics.AgentLabel; {
	case al == "all", al == "off", strings.HasPrefix(al, "top:"):
	default:
		add(false, "auth.metrics.agent_label", "%q is not one of all, off, top:N", al)
	}
	if c.HTTP.MaxBodyBytes < 1024 {
		add(false, "http.max_body_bytes", "%d is too small (at least 1024)", c.HTTP.MaxBodyBytes)
	}
	if c.Upstream.MaxMessageBytes < 4096 {
		add(false, "upstream.max_message_bytes", "%d is too small (at least 4096)", c.Upstream.MaxMessageBytes)
	}
	if c.HTTP.MaxConnections < 1 {
		add(false, "http.max_connections", "%d must be positive", c.HTTP.MaxConnections)
	}
	if c.HTTP.StreamQueue < 1 {
		add(false, "http.stream_queue", "%d must be positive", c.HTTP.StreamQueue)
	}
	if c.HTTP.BodyTimeout < 0 {
		add(false, "http.body_timeout", "must not be negative")
	}
	if c.HTTP.PageSize < 1 {
		add(false, "http.page_size", "%d must be positive", c.HTTP.PageSize)
	}
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		add(false, "log.level", "%q is not one of debug, info, warn, error", c.Log.Level)
	}
	switch c.Log.Format {
	case "json", "text":
	default:
		add(false, "log.format", "%q is not one of json, text", c.Log.Format)
	}

	for _, name := range sortedKeys(c.Servers) {
		d := c.Servers[name]
		where := "servers." + name
		if d == nil {
			add(false, where, "empty server definition")
			continue
		}
		if !serverNameRE.MatchString(name) {
			add(false, where, "server name must be 1 to 64 of the characters A-Z a-z 0-9 _ -")
		}
		if c.Naming.Prefix == "always" && strings.Contains(name, c.Naming.Separator) {
			add(false, where, "server name contains the name separator %q, so exposed names would be ambiguous", c.Naming.Separator)
		}
		switch d.Transport() {
		case TransportStdio:
			if d.Command == "" {
				add(false, where, "type stdio needs a command")
			}
			if d.URL != "" {
				add(true, where, "url is ignored for type stdio")
			}
		case TransportHTTP, TransportSSE:
			if d.URL == "" {
				add(false, where, "type %s needs a url", d.Type)
			} else if u, err := url.Parse(d.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				add(false, where, "url %q is not an http(s) URL", d.URL)
			}
			if d.Command != "" {
				add(true, where, "command is ignored for type %s", d.Type)
			}
		case "":
			add(false, where, "missing type (one of stdio, http, streamable_http, sse)")
		default:
			add(false, where, "unknown type %q (one of stdio, http, streamable_http, sse)", d.Type)
		}
		switch d.Mode {
		case "auto", ModeShared, ModePerSession:
		default:
			add(false, where, "unknown mode %q (one of auto, shared, per_session)", d.Mode)
		}
		if d.Mode == ModeShared && d.Transport() == TransportStdio && !d.StdioProxy {
			add(false, "", "%s", SharedStdioError(name))
		}
		if d.ProtocolVer != "" && !SupportedUpstreamVersion(d.ProtocolVer) {
			add(false, where, "protocol_version %q is not one of %s", d.ProtocolVer, strings.Join(upstreamVersions, ", "))
		}
		if f := d.TLS.Files(); !f.IsZero() {
			switch {
			case d.Transport() == TransportStdio:
				add(true, where+".tls", "is ignored for type stdio")
			case strings.HasPrefix(strings.ToLower(d.URL), "http://"):
				add(true, where+".tls", "is ignored for an http:// url (it applies to https)")
			}
			if _, err := f.Load(); err != nil {
				add(false, where+".tls", "%v", err)
			}
		}
	}

	for _, name := range sortedKeys(c.Agents) {
		a := c.Agents[name]
		where := "agents." + name
		if a == nil {
			continue
		}
		for _, u := range a.Servers {
			if _, ok := c.Servers[u.Name]; !ok {
				add(false, where, "unknown server %q", u.Name)
			}
			switch u.Mode {
			case "", "auto", ModeShared, ModePerSession:
			default:
				add(false, where, "server %q: unknown mode %q", u.Name, u.Mode)
			}
			if d := c.Servers[u.Name]; d != nil && u.Mode == ModeShared && d.Transport() == TransportStdio && !d.StdioProxy {
				add(false, where, "%s", SharedStdioError(u.Name))
			}
		}
		for _, g := range append(append([]string{}, a.Tools.Allow...), a.Tools.Deny...) {
			if _, err := filepath.Match(g, ""); err != nil {
				add(false, where, "bad glob %q: %v", g, err)
			}
		}
		switch a.Handshake {
		case "", "auto", "full", "thin":
		default:
			add(false, where, "handshake %q is not one of auto, full, thin", a.Handshake)
		}
		if a.Executor != "" {
			if _, ok := c.Executors[a.Executor]; !ok {
				add(false, where, "unknown executor %q", a.Executor)
			}
		}
	}
	for _, name := range sortedKeys(c.Executors) {
		e := c.Executors[name]
		where := "executors." + name
		if e == nil {
			continue
		}
		switch e.Type {
		case "local_pc", "local_docker", "remote_docker", "remote_vps", "k8s":
		default:
			add(false, where, "unknown type %q (one of local_pc, local_docker, remote_docker, remote_vps, k8s)", e.Type)
		}
		if len(e.MCPPolicy.AllowlistServers) > 0 && len(e.MCPPolicy.DenylistServers) > 0 {
			add(true, where, "both allowlist_servers and denylist_servers are set; the allowlist wins")
		}
		for _, s := range append(append([]string{}, e.MCPPolicy.AllowlistServers...), e.MCPPolicy.DenylistServers...) {
			if _, ok := c.Servers[s]; !ok {
				add(true, where, "names unknown server %q", s)
			}
		}
	}
	for _, name := range sortedKeys(c.Tasks) {
		t := c.Tasks[name]
		if t == nil {
			continue
		}
		for _, s := range t.EnabledMCPServers {
			if _, ok := c.Servers[s]; !ok {
				add(false, "tasks."+name, "unknown server %q", s)
			}
		}
		if t.Agent != "" {
			if _, ok := c.Agents[t.Agent]; !ok {
				add(false, "tasks."+name, "unknown agent %q", t.Agent)
			}
		}
	}
	return ps
}

var upstreamVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// SupportedUpstreamVersion reports whether the gateway can speak v to an upstream.
func SupportedUpstreamVersion(v string) bool {
	for _, s := range upstreamVersions {
		if s == v {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
