package config

import (
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Problem is one thing wrong with a config. Warnings do not stop the gateway.
type Problem struct {
	Warning bool
	Where   string
	Text    string
	// Hint says what a user can do about it, printed on a line of its own so that Text
	// stays exactly what it is where a text is fixed (SharedStdioError).
	Hint string
}

func (p Problem) String() string {
	kind := "error"
	if p.Warning {
		kind = "warning"
	}
	s := kind + ": " + p.Text
	if p.Where != "" {
		s = kind + ": " + p.Where + ": " + p.Text
	}
	if p.Hint != "" {
		s += "\n  " + p.Hint
	}
	return s
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

var serverNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// SharedStdioError is the exact message docs/config.md gives for shared mode on a stdio server.
func SharedStdioError(name string) string {
	return fmt.Sprintf("mcp server %q: shared mode requires HTTP/SSE/streamable HTTP transport (stdio is per-session only)", name)
}

// SharedStdioHint names the ways out of SharedStdioError.
const SharedStdioHint = "ways out: stdio_proxy: true (one process multiplexed for every session), mode: per_agent (one process per agent), or mode: per_call (one process per request)"

// Validate lists every problem it finds; it does not stop at the first. Each section of
// the config has its own check, run in the order of this list (the order problems are
// reported in).
func (c *Config) Validate() Problems {
	var ps Problems
	ps = append(ps, c.ListenProblems()...)
	ps = append(ps, c.Tracing.problems()...)
	ps = append(ps, c.trustProblems()...)
	c.validateStore(&ps)
	c.validateNaming(&ps)
	c.validateAuth(&ps)
	c.validateLimits(&ps)
	c.validateLog(&ps)
	c.validateServers(&ps)
	ps = append(ps, c.pluginProblems()...)
	ps = append(ps, c.inProcessProblems()...)
	c.validateAgents(&ps)
	c.validateExecutors(&ps)
	c.validateProjects(&ps)
	c.validateTasks(&ps)
	return ps
}

// add appends a problem whose text is format applied to a.
func (ps *Problems) add(warn bool, where, format string, a ...any) {
	*ps = append(*ps, Problem{Warning: warn, Where: where, Text: fmt.Sprintf(format, a...)})
}

// validateStore checks store.
func (c *Config) validateStore(ps *Problems) {
	switch {
	case c.Store == "bolt", c.Store == "memory", strings.HasPrefix(c.Store, "redis://"), strings.HasPrefix(c.Store, "rediss://"), strings.HasPrefix(c.Store, "unix://"):
	default:
		ps.add(false, "store", "%q is not one of bolt, memory, redis://host:port/db", c.Store)
	}
}

var separatorRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,8}$`)

// validateNaming checks naming.
func (c *Config) validateNaming(ps *Problems) {
	switch c.Naming.Prefix {
	case "always", "never":
	default:
		ps.add(false, "naming.prefix", "%q is not one of always, never", c.Naming.Prefix)
	}
	if !separatorRE.MatchString(c.Naming.Separator) {
		ps.add(false, "naming.separator", "%q must be 1 to 8 of the characters A-Z a-z 0-9 _ -", c.Naming.Separator)
	}
	if c.Naming.MaxLength < 16 || c.Naming.MaxLength > 128 {
		ps.add(false, "naming.max_length", "%d must be between 16 and 128", c.Naming.MaxLength)
	}
}

// validateAuth checks auth: the mode and what it needs, the JWT keys, the API keys and
// auth.metrics.
func (c *Config) validateAuth(ps *Problems) {
	switch c.Auth.Mode {
	case "none", "api_key":
	case "jwt":
		if len(c.Auth.JWT.Keys) == 0 {
			ps.add(false, "auth.jwt.keys", "mode jwt needs at least one key")
		}
	case "oauth":
		if c.Auth.OAuth.JWKSURL == "" {
			ps.add(false, "auth.oauth.jwks_url", "mode oauth needs the authorization server's JWKS URL")
		}
		if len(c.Auth.OAuth.AuthorizationServers) == 0 {
			ps.add(false, "auth.oauth.authorization_servers", "mode oauth needs at least one authorization server (RFC 9728)")
		}
	default:
		ps.add(false, "auth.mode", "%q is not one of none, api_key, jwt, oauth", c.Auth.Mode)
	}
	for i, k := range c.Auth.JWT.Keys {
		where := fmt.Sprintf("auth.jwt.keys[%d]", i)
		switch k.Alg {
		case "HS256", "HS384", "HS512":
			if k.Secret == "" {
				ps.add(false, where, "%s needs a secret", k.Alg)
			}
		case "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA":
			if k.PublicKey == "" && k.PublicKeyFile == "" && k.PrivateKeyFile == "" {
				ps.add(false, where, "%s needs public_key, public_key_file or private_key_file", k.Alg)
			}
		case "":
			ps.add(false, where, "missing alg (the algorithm is pinned per key)")
		default:
			ps.add(false, where, "unsupported alg %q", k.Alg)
		}
	}
	for i, k := range c.Auth.APIKeys {
		if _, ok := c.Agents[k.Agent]; len(c.Agents) > 0 && !ok {
			ps.add(false, fmt.Sprintf("auth.api_keys[%d]", i), "unknown agent %q", k.Agent)
		}
		*ps = append(*ps, c.connectionScopeProblems(fmt.Sprintf("auth.api_keys[%d].connection_scope", i), k.ConnectionScope)...)
		if _, err := hex.DecodeString(k.SHA256); err != nil || len(k.SHA256) != 64 {
			// Also catches `sha256sum` output pasted whole ("<hex>  -").
			ps.add(false, fmt.Sprintf("auth.api_keys[%d]", i), "sha256 must be 64 hex digits")
		}
	}
	switch c.Auth.DisabledAgent {
	case "", "refuse", "empty":
	default:
		ps.add(false, "auth.disabled_agent", "%q is not one of refuse, empty", c.Auth.DisabledAgent)
	}
	switch al := c.Auth.Metrics.AgentLabel; {
	case al == "all", al == "off", strings.HasPrefix(al, "top:"):
	default:
		ps.add(false, "auth.metrics.agent_label", "%q is not one of all, off, top:N", al)
	}
}

// validateLimits checks the sizes, counts and durations of http and upstream.
func (c *Config) validateLimits(ps *Problems) {
	if c.HTTP.MaxBodyBytes < 1024 {
		ps.add(false, "http.max_body_bytes", "%d is too small (at least 1024)", c.HTTP.MaxBodyBytes)
	}
	if c.Upstream.MaxMessageBytes < 4096 {
		ps.add(false, "upstream.max_message_bytes", "%d is too small (at least 4096)", c.Upstream.MaxMessageBytes)
	}
	if c.Upstream.StartWait < 0 {
		ps.add(false, "upstream.start_wait", "%s is negative (0 serves at once)", c.Upstream.StartWait)
	}
	if c.Upstream.BusyPoll > 10*time.Millisecond {
		ps.add(false, "upstream.busy_poll", "%s is too long (at most 10ms; negative turns it off)", c.Upstream.BusyPoll)
	}
	if c.HTTP.MaxSessions < 1 {
		ps.add(false, "http.max_sessions", "%d must be positive", c.HTTP.MaxSessions)
	}
	if c.HTTP.MaxSessionsPerAgent < 1 {
		ps.add(false, "http.max_sessions_per_agent", "%d must be positive", c.HTTP.MaxSessionsPerAgent)
	} else if c.HTTP.MaxSessionsPerAgent > c.HTTP.MaxSessions {
		ps.add(true, "http.max_sessions_per_agent", "%d is more than http.max_sessions (%d): one agent may hold every session", c.HTTP.MaxSessionsPerAgent, c.HTTP.MaxSessions)
	}
	if c.Upstream.MaxInstancesPerAgent < 0 {
		ps.add(false, "upstream.max_instances_per_agent", "must not be negative")
	}
	if c.Upstream.StartConcurrency < 1 {
		ps.add(false, "upstream.start_concurrency", "%d must be positive (leave it unset for the default, %d here)", c.Upstream.StartConcurrency, DefaultStartConcurrency())
	}
	if c.HTTP.MaxConnections < 1 {
		ps.add(false, "http.max_connections", "%d must be positive", c.HTTP.MaxConnections)
	}
	if c.HTTP.StreamQueue < 1 {
		ps.add(false, "http.stream_queue", "%d must be positive", c.HTTP.StreamQueue)
	}
	if c.HTTP.ResumeBufferBytes < 4096 {
		ps.add(false, "http.resume_buffer_bytes", "%d is too small (at least 4096)", c.HTTP.ResumeBufferBytes)
	}
	if c.HTTP.ResumeFor < 0 {
		ps.add(false, "http.resume_for", "must not be negative")
	}
	if c.HTTP.ResumeMaxBytes < int64(c.HTTP.ResumeBufferBytes) {
		ps.add(false, "http.resume_max_bytes", "%d is smaller than http.resume_buffer_bytes (%d)", c.HTTP.ResumeMaxBytes, c.HTTP.ResumeBufferBytes)
	}
	if c.HTTP.BodyTimeout < 0 {
		ps.add(false, "http.body_timeout", "must not be negative")
	}
	if c.HTTP.PageSize < 1 {
		ps.add(false, "http.page_size", "%d must be positive", c.HTTP.PageSize)
	}
	switch c.HTTP.Handshake {
	case "auto", "full", "thin":
	default:
		ps.add(false, "http.handshake", "%q is not one of auto, full, thin", c.HTTP.Handshake)
	}
}

// validateLog checks log.
func (c *Config) validateLog(ps *Problems) {
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		ps.add(false, "log.level", "%q is not one of debug, info, warn, error", c.Log.Level)
	}
	switch c.Log.Format {
	case "json", "text":
	default:
		ps.add(false, "log.format", "%q is not one of json, text", c.Log.Format)
	}
}

// validateServers checks servers.<name>, in name order.
func (c *Config) validateServers(ps *Problems) {
	for _, name := range sortedKeys(c.Servers) {
		d := c.Servers[name]
		where := "servers." + name
		if d == nil {
			ps.add(false, where, "empty server definition")
			continue
		}
		if !serverNameRE.MatchString(name) {
			ps.add(false, where, "server name must be 1 to 64 of the characters A-Z a-z 0-9 _ -")
		}
		if c.Naming.Prefix == "always" && strings.Contains(name, c.Naming.Separator) {
			ps.add(false, where, "server name contains the name separator %q, so exposed names would be ambiguous", c.Naming.Separator)
		}
		validateServerTransport(ps, where, d)
		switch d.Mode {
		case "auto", ModeShared, ModePerSession, ModePerAgent, ModePerCall:
		default:
			ps.add(false, where, "unknown mode %q (one of auto, shared, per_session, per_agent, per_call)", d.Mode)
		}
		*ps = append(*ps, instanceProblems(where, d)...)
		if d.Mode == ModeShared && d.Transport() == TransportStdio && !d.StdioProxy {
			*ps = append(*ps, Problem{Text: SharedStdioError(name), Hint: SharedStdioHint})
		}
		if d.ProtocolVer != "" && !SupportedUpstreamVersion(d.ProtocolVer) {
			ps.add(false, where, "protocol_version %q is not one of %s", d.ProtocolVer, strings.Join(upstreamVersions, ", "))
		}
		validateServerLimits(ps, where, d)
	}
}

// validateServerTransport checks a server's type and the command or url it needs.
func validateServerTransport(ps *Problems, where string, d *ServerDef) {
	switch d.Transport() {
	case TransportStdio:
		if d.Command == "" {
			ps.add(false, where, "type stdio needs a command")
		}
		if d.URL != "" {
			ps.add(true, where, "url is ignored for type stdio")
		}
	case TransportHTTP, TransportSSE:
		if d.URL == "" {
			ps.add(false, where, "type %s needs a url", d.Type)
		} else if u, err := url.Parse(d.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			ps.add(false, where, "url %q is not an http(s) URL", d.URL)
		}
		if d.Command != "" {
			ps.add(true, where, "command is ignored for type %s", d.Type)
		}
	case TransportInProcess: // validate_inprocess.go
	case "":
		ps.add(false, where, "missing type (one of stdio, http, streamable_http, sse, inprocess)")
	default:
		ps.add(false, where, "unknown type %q (one of stdio, http, streamable_http, streamable-http, sse, inprocess)", d.Type)
	}
}

// validateServerLimits checks a server's max_concurrency, queue and tls.
func validateServerLimits(ps *Problems, where string, d *ServerDef) {
	if d.MaxConcurrency != nil && *d.MaxConcurrency < 0 {
		ps.add(false, where+".max_concurrency", "must not be negative (0 is unlimited)")
	}
	if d.Queue.Max < 0 {
		ps.add(false, where+".queue.max", "must not be negative")
	}
	if d.Queue.Timeout < 0 {
		ps.add(false, where+".queue.timeout", "must not be negative")
	}
	if f := d.TLS.Files(); !f.IsZero() {
		switch {
		case d.Transport() == TransportStdio:
			ps.add(true, where+".tls", "is ignored for type stdio")
		case strings.HasPrefix(strings.ToLower(d.URL), "http://"):
			ps.add(true, where+".tls", "is ignored for an http:// url (it applies to https)")
		}
		if _, err := f.Load(); err != nil {
			ps.add(false, where+".tls", "%v", err)
		}
	}
}

// validateAgents checks agents.<name>, in name order.
func (c *Config) validateAgents(ps *Problems) {
	for _, name := range sortedKeys(c.Agents) {
		a := c.Agents[name]
		if a == nil {
			continue
		}
		c.validateAgent(ps, "agents."+name, a)
	}
}

// validateAgent checks one agent: its servers, tool globs, connection scope, handshake and
// executor.
func (c *Config) validateAgent(ps *Problems, where string, a *AgentConfig) {
	for _, u := range a.Servers {
		if !c.Has(u.Name) {
			ps.add(false, where, "unknown server %q (no server or plugin has that name)", u.Name)
		}
		if _, isPlugin := c.Plugins[u.Name]; isPlugin && u.Mode != "" && u.Mode != "auto" {
			ps.add(true, where, "plugin %q: mode %q is ignored (plugins run in the gateway)", u.Name, u.Mode)
		}
		switch u.Mode {
		case "", "auto", ModeShared, ModePerSession, ModePerAgent, ModePerCall:
		default:
			ps.add(false, where, "server %q: unknown mode %q", u.Name, u.Mode)
		}
		if d := c.Servers[u.Name]; d != nil && u.Mode == ModeShared && d.Transport() == TransportStdio && !d.StdioProxy {
			*ps = append(*ps, Problem{Where: where, Text: SharedStdioError(u.Name), Hint: SharedStdioHint})
		}
	}
	for _, g := range append(append([]string{}, a.Tools.Allow...), a.Tools.Deny...) {
		if _, err := filepath.Match(g, ""); err != nil {
			ps.add(false, where, "bad glob %q: %v", g, err)
		}
	}
	*ps = append(*ps, c.connectionScopeProblems(where+".connection_scope", a.ConnectionScope)...)
	switch a.Handshake {
	case "", "auto", "full", "thin":
	default:
		ps.add(false, where, "handshake %q is not one of auto, full, thin", a.Handshake)
	}
	if a.Executor != "" {
		if _, ok := c.Executors[a.Executor]; !ok {
			ps.add(false, where, "unknown executor %q", a.Executor)
		}
	}
}

// validateExecutors checks executors.<name>, in name order.
func (c *Config) validateExecutors(ps *Problems) {
	for _, name := range sortedKeys(c.Executors) {
		e := c.Executors[name]
		if e == nil {
			continue
		}
		c.validateExecutor(ps, "executors."+name, e)
	}
}

// validateExecutor checks one executor: its type and its mcp_policy.
func (c *Config) validateExecutor(ps *Problems, where string, e *ExecutorConfig) {
	switch e.Type {
	case "local_pc", "local_docker", "remote_docker", "remote_vps", "k8s":
	default:
		ps.add(false, where, "unknown type %q (one of local_pc, local_docker, remote_docker, remote_vps, k8s)", e.Type)
	}
	// What a session of this executor would log as skipped, said once here.
	for _, sn := range sortedKeys(c.Servers) {
		if d := c.Servers[sn]; d != nil && !e.MCPPolicy.AllowsTransport(d.Transport()) {
			ps.add(true, where+".mcp_policy", "does not allow transport %s: server %q is skipped for this executor's sessions", d.Transport(), sn)
		}
	}
	if len(e.MCPPolicy.AllowlistServers) > 0 && len(e.MCPPolicy.DenylistServers) > 0 {
		ps.add(true, where, "both allowlist_servers and denylist_servers are set; the allowlist wins")
	}
	for _, from := range sortedKeys(e.MCPPolicy.URLRewrite) {
		for _, side := range []string{from, e.MCPPolicy.URLRewrite[from]} {
			if u, err := url.Parse(side); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				ps.add(false, where+".mcp_policy.url_rewrite", "%q is not an http(s) URL prefix (both sides of a rule are, e.g. http://127.0.0.1:9000)", side)
			}
		}
	}
	for k := range e.MCPPolicy.EnvInjection {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			ps.add(false, where+".mcp_policy.env_injection", "%q is not an environment variable name", k)
		}
	}
	for _, s := range append(append([]string{}, e.MCPPolicy.AllowlistServers...), e.MCPPolicy.DenylistServers...) {
		if !c.Has(s) {
			ps.add(true, where, "names unknown server or plugin %q", s)
		}
	}
}

// validateTasks checks tasks.<name>, in name order.
func (c *Config) validateTasks(ps *Problems) {
	for _, name := range sortedKeys(c.Tasks) {
		t := c.Tasks[name]
		if t == nil {
			continue
		}
		for _, s := range t.EnabledMCPServers {
			if !c.Has(s) {
				ps.add(false, "tasks."+name, "unknown server %q (no server or plugin has that name)", s)
			}
		}
		if t.Agent != "" {
			if _, ok := c.Agents[t.Agent]; !ok {
				ps.add(false, "tasks."+name, "unknown agent %q", t.Agent)
			}
		}
		if t.Project != "" && c.Projects[t.Project] == nil {
			ps.add(false, "tasks."+name+".project", "unknown project %q", t.Project)
		}
	}
}

var upstreamVersions = []string{ProtocolAuto, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2026-07-28"}

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

// ListenProblems checks the listen address and what it implies for authentication: a port
// that is a number, and auth.mode none only on a loopback listener (it trusts identity
// headers) unless auth.allow_non_loopback says otherwise. serve runs it again after a
// --listen override, so validate and serve refuse the same configs.
func (c *Config) ListenProblems() Problems {
	var ps Problems
	host, port, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return Problems{{Where: "listen", Text: fmt.Sprintf("%q is not host:port: %v", c.Listen, err)}}
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		ps = append(ps, Problem{Where: "listen", Text: fmt.Sprintf("%q: port %q is not a number from 0 to 65535", c.Listen, port)})
	}
	ip := net.ParseIP(host)
	loopback := host == "localhost" || (ip != nil && ip.IsLoopback())
	if c.Auth.Mode == "none" && !loopback {
		if !c.Auth.AllowNonLoopback {
			ps = append(ps, Problem{Where: "listen", Text: fmt.Sprintf("auth.mode none trusts identity headers, so it only runs on a loopback listener; %s is not one (use a real auth mode, or set auth.allow_non_loopback: true to override)", c.Listen)})
		} else {
			ps = append(ps, Problem{Warning: true, Where: "listen", Text: "AUTH IS OFF on a non-loopback listener: anyone who can reach " + c.Listen + " can use every tool"})
		}
	}
	return ps
}

var connectionIDRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// ValidConnectionID reports whether id has the form of a plugin connection id.
func ValidConnectionID(id string) bool { return connectionIDRE.MatchString(id) }

// pluginProblems checks plugins.<name>: the name rules of servers (and no server of the
// same name: sessions enable both by name), a known type, and each connection.
func (c *Config) pluginProblems() Problems {
	var ps Problems
	for _, name := range sortedKeys(c.Plugins) {
		d := c.Plugins[name]
		where := "plugins." + name
		if d == nil {
			ps.add(false, where, "empty plugin definition")
			continue
		}
		if !serverNameRE.MatchString(name) {
			ps.add(false, where, "plugin name must be 1 to 64 of the characters A-Z a-z 0-9 _ -")
		}
		if _, clash := c.Servers[name]; clash {
			ps.add(false, where, "a server has the same name; sessions enable servers and plugins by name, so each name must be one or the other")
		}
		if d.OutOfProcess() || d.Type == "" && (len(d.Args) > 0 || len(d.Env) > 0 || d.Dir != "" || d.Config != nil) {
			ps = append(ps, commandPluginProblems(where, d)...)
			continue
		}
		if d.Dir != "" || len(d.Args) > 0 || len(d.Env) > 0 || d.Config != nil {
			ps.add(false, where, "args, env, dir and config are for plugins that run a command; a type %s plugin takes none", d.Type)
		}
		c.inProcessPluginProblems(&ps, name, where, d)
	}
	return ps
}

// inProcessPluginProblems checks what a plugin that runs in the gateway needs for its type.
func (c *Config) inProcessPluginProblems(ps *Problems, name, where string, d *PluginDef) {
	switch d.Type {
	case "sql":
		sqlPluginProblems(ps, where, d)
	case PluginTypeSelf:
		if len(d.Connections) > 0 {
			ps.add(false, where+".connections", "the mcpgw plugin has one connection, the gateway itself; remove them here")
		}
		if d.DefaultEnabled != nil && *d.DefaultEnabled {
			ps.add(false, where+".default_enabled", "the mcpgw plugin is only for agents that list it in their servers; it cannot be enabled by default")
		}
		if !c.listedByAnAgent(name) {
			ps.add(true, where, "no agent lists %q in its servers: no session sees its tools", name)
		}
	case PluginTypeGo:
		if len(d.Connections) > 0 {
			ps.add(false, where+".connections", "a go plugin's connections come from its provider; remove them here")
		}
		if d.CallTimeout < 0 {
			ps.add(false, where+".call_timeout", "must not be negative")
		}
	case "":
		ps.add(false, where, "missing type (one of %s) or command (an out-of-process plugin)", strings.Join(PluginTypes, ", "))
	default:
		ps.add(false, where, "unknown type %q (one of %s)", d.Type, strings.Join(PluginTypes, ", "))
	}
}

// sqlPluginProblems checks a sql plugin: its connections, in id order, and call_timeout.
func sqlPluginProblems(ps *Problems, where string, d *PluginDef) {
	if len(d.Connections) == 0 {
		ps.add(false, where+".connections", "at least one connection is needed")
	}
	for _, id := range sortedKeys(d.Connections) {
		cc := d.Connections[id]
		cw := where + ".connections." + id
		if !connectionIDRE.MatchString(id) {
			ps.add(false, cw, "connection id must be 1 to 64 of the characters A-Z a-z 0-9 _ . -")
		}
		if cc == nil {
			ps.add(false, cw, "empty connection")
			continue
		}
		sqlConnectionProblems(ps, cw, cc)
	}
	if d.CallTimeout < 0 {
		ps.add(false, where+".call_timeout", "must not be negative")
	}
}

// sqlConnectionProblems checks one connection of a sql plugin.
func sqlConnectionProblems(ps *Problems, cw string, cc *PluginConnection) {
	if cc.Driver != "sqlite" && cc.Driver != "postgres" {
		ps.add(false, cw+".driver", "%q is not supported (sqlite or postgres)", cc.Driver)
	}
	if cc.Driver != "postgres" && (cc.Listen || len(cc.Schemas) > 0) {
		ps.add(false, cw, "listen and schemas are for postgres connections")
	}
	if cc.Driver == "postgres" && cc.Seed != "" {
		ps.add(false, cw+".seed", "seeds are for sqlite connections")
	}
	if strings.TrimSpace(cc.DSN) == "" {
		ps.add(false, cw+".dsn", "required")
	}
	if cc.Driver == "sqlite" && cc.Database == "" && strings.TrimSpace(cc.DSN) != "" && isMemoryDSN(cc.DSN) {
		ps.add(false, cw+".database", "an in-memory database needs a database name")
	}
	if strings.Contains(cc.Database, "::") {
		ps.add(false, cw+".database", "%q must not contain \"::\" (it is the group of resource keys group::version::kind)", cc.Database)
	}
	if cc.Seed != "" {
		if st, err := os.Stat(cc.Seed); err != nil {
			ps.add(false, cw+".seed", "%v", err)
		} else if st.IsDir() {
			ps.add(false, cw+".seed", "%s is a directory, not a SQL script", cc.Seed)
		}
	}
}

// isMemoryDSN reports whether a sqlite DSN names an in-memory database.
func isMemoryDSN(dsn string) bool {
	p := strings.TrimPrefix(dsn, "file:")
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	return p == "" || p == ":memory:" || strings.Contains(dsn, "mode=memory")
}

// connectionScopeProblems checks a connection_scope (an agent's or a credential's): ids
// of the connection id form, each once; an id no plugin has is a warning (a plugin may be
// added later).
func (c *Config) connectionScopeProblems(where string, scope []string) Problems {
	var ps Problems
	seen := map[string]bool{}
	for _, id := range scope {
		switch {
		case !connectionIDRE.MatchString(id):
			ps = append(ps, Problem{Where: where, Text: fmt.Sprintf("%q is not a connection id (1 to 64 of the characters A-Z a-z 0-9 _ . -)", id)})
		case seen[id]:
			ps = append(ps, Problem{Warning: true, Where: where, Text: fmt.Sprintf("%q is listed twice", id)})
		case !c.hasConnection(id):
			ps = append(ps, Problem{Warning: true, Where: where, Text: fmt.Sprintf("no plugin has a connection %q", id)})
		}
		seen[id] = true
	}
	return ps
}

// listedByAnAgent reports whether some agent lists name in its servers.
func (c *Config) listedByAnAgent(name string) bool {
	for _, a := range c.Agents {
		if a == nil {
			continue
		}
		for _, u := range a.Servers {
			if u.Name == name {
				return true
			}
		}
	}
	return false
}

// hasConnection reports whether any plugin has a connection of that id.
func (c *Config) hasConnection(id string) bool {
	for _, d := range c.Plugins {
		if d != nil && d.Type == PluginTypeSelf && id == "gateway" {
			return true // the mcpgw plugin's one connection
		}
		if d != nil {
			if d.OutOfProcess() {
				return true // its connections are known once it runs
			}
			if _, ok := d.Connections[id]; ok {
				return true
			}
		}
	}
	return false
}
