package config

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/mcpgw/mcpgw/internal/statedir"
)

// DefaultStateDir is where state lives when the config names no state_dir.
func DefaultStateDir() string { return statedir.Default() }

// DefaultStartConcurrency is upstream.start_concurrency when the config sets none: two
// starts per CPU the gateway may use, and at least 4. A node or Python server spends its
// start on the CPU, so more at once only makes every start slower (and each closer to its
// connect timeout); a little more than one per CPU keeps the CPUs busy while some starts
// wait on their program's files or network.
func DefaultStartConcurrency() int { return max(4, 2*runtime.GOMAXPROCS(0)) }

// The auto form's thresholds when http.auto sets none, in o200k tokens of a view's full
// tool list: full up to DefaultAutoFullMaxTokens, thin up to DefaultAutoThinMaxTokens,
// search above. From the token benchmark (make bench, T1; docs/performance.md): in its
// 10-task loop thin costs less than full on every catalogue (0.39x on 17 tools, 2418 full
// tokens), so full is kept only below that: views of a dozen tersely described tools (the
// conformance suite's 29-tool server lists in 1291), where a turn pays at most about 1.5k
// tokens more and the client keeps every schema keyword as written; search beats thin on the
// catalogues of 337-502 tools only when its results are short: with the structured ranking
// of plugin tools (more finders, whose filter schemas are long, among the results) its loop
// is 295k-372k there against thin's 190k-276k (99k-148k full tokens), and it loses on the
// 67-tool one (15k: 139k against 37k). Thin's loop grows about 1.85x the full list's tokens
// and search's is 295k-372k at 337-502 tools, so they cross near 160k-200k full tokens: 200000.
const (
	DefaultAutoFullMaxTokens = 2000
	DefaultAutoThinMaxTokens = 200000
)

// The search form's results a query returns when it does not say (http.search.results),
// and the most it may be set to.
const (
	DefaultSearchResults = 3
	MaxSearchResults     = 20
)

// ApplyDefaults fills what c leaves unset, as Load and Parse do: a config built in code
// (a host embedding the gateway) calls it, then Validate. It is idempotent.
func (c *Config) ApplyDefaults() { c.applyDefaults() }

func (c *Config) applyDefaults() {
	c.applyBaseDefaults()
	c.applyAuthDefaults()
	c.applyUpstreamDefaults()
	c.applyHTTPDefaults()
	c.applyLogDefaults()
	c.applyClientDefaults()
	c.applyIntegrityDefaults()
	applyUpstreamAuthDefaults(c)
	for _, d := range c.Servers {
		c.ApplyServerDefaults(d)
	}
	for _, d := range c.Plugins {
		if d == nil {
			continue
		}
		if d.CallTimeout == 0 {
			d.CallTimeout = c.Upstream.CallTimeout
		}
		if d.Refresh == 0 {
			d.Refresh = time.Minute
		}
	}
}

// applyBaseDefaults fills listen, state_dir, store and naming.
func (c *Config) applyBaseDefaults() {
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
}

// applyAuthDefaults fills auth; the audit path is under state_dir, so it runs after
// applyBaseDefaults.
func (c *Config) applyAuthDefaults() {
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
}

// applyUpstreamDefaults fills upstream, which the servers' and plugins' defaults come from.
func (c *Config) applyUpstreamDefaults() {
	if c.Upstream.ConnectTimeout == 0 {
		c.Upstream.ConnectTimeout = 30 * time.Second
	}
	if c.Upstream.CallTimeout == 0 {
		c.Upstream.CallTimeout = 120 * time.Second
	}
	if c.Upstream.ProtocolVersion == "" {
		c.Upstream.ProtocolVersion = ProtocolAuto
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
	if c.Upstream.StartConcurrency == 0 {
		c.Upstream.StartConcurrency = DefaultStartConcurrency()
	}
	if c.Upstream.RelistInterval == 0 {
		c.Upstream.RelistInterval = time.Second
	}
}

// applyHTTPDefaults fills http.
func (c *Config) applyHTTPDefaults() {
	if c.HTTP.MaxBodyBytes == 0 {
		c.HTTP.MaxBodyBytes = 4 << 20
	}
	if c.HTTP.PageSize == 0 {
		c.HTTP.PageSize = 1000
	}
	if c.HTTP.SessionIdle == 0 {
		c.HTTP.SessionIdle = 24 * time.Hour
	}
	if c.HTTP.BodyTimeout == 0 {
		c.HTTP.BodyTimeout = 30 * time.Second
	}
	if c.HTTP.BodyMinRate == 0 {
		c.HTTP.BodyMinRate = 1024
	}
	if c.HTTP.BodyRateGrace == 0 {
		c.HTTP.BodyRateGrace = 10 * time.Second
	}
	if c.HTTP.MaxConnections == 0 {
		c.HTTP.MaxConnections = 4096
	}
	if c.HTTP.StreamQueue == 0 {
		c.HTTP.StreamQueue = 1024
	}
	if c.HTTP.ResumeBufferBytes == 0 {
		c.HTTP.ResumeBufferBytes = 1 << 20
	}
	if c.HTTP.ResumeFor == 0 {
		c.HTTP.ResumeFor = 5 * time.Minute
	}
	if c.HTTP.ResumeMaxBytes == 0 {
		c.HTTP.ResumeMaxBytes = 64 << 20
	}
	if c.HTTP.MaxSessions == 0 {
		c.HTTP.MaxSessions = DefaultMaxSessions
	}
	if c.HTTP.MaxSessionsPerAgent == 0 {
		c.HTTP.MaxSessionsPerAgent = share(c.HTTP.MaxSessions, 4)
	}
	if c.HTTP.MaxSubscriptionsPerSession == 0 {
		c.HTTP.MaxSubscriptionsPerSession = 100
	}
	if c.HTTP.MaxSubscriptionsPerAgent == 0 {
		c.HTTP.MaxSubscriptionsPerAgent = 1000
	}
	if c.HTTP.MaxURIBytes == 0 {
		c.HTTP.MaxURIBytes = 8192
	}
	if c.HTTP.UnusedSession == 0 {
		c.HTTP.UnusedSession = 5 * time.Minute
	}
	if c.HTTP.Handshake == "" {
		c.HTTP.Handshake = FormAuto
	}
	if c.HTTP.Search.Results == 0 {
		c.HTTP.Search.Results = DefaultSearchResults
	}
	if c.HTTP.Auto.FullMaxTokens == 0 {
		c.HTTP.Auto.FullMaxTokens = DefaultAutoFullMaxTokens
	}
	if c.HTTP.Auto.ThinMaxTokens == 0 {
		c.HTTP.Auto.ThinMaxTokens = DefaultAutoThinMaxTokens
	}
}

// applyLogDefaults fills log.
func (c *Config) applyLogDefaults() {
	if c.Log.Level == "" {
		c.Log.Level = "info"
	}
	if c.Log.Format == "" {
		c.Log.Format = "json"
	}
}

// ApplyServerDefaults fills what a server definition leaves unset from the config's
// upstream defaults and normalises its transport, as loading does for the file's servers
// (the admin API runs it on the servers it adds).
func (c *Config) ApplyServerDefaults(d *ServerDef) {
	if d == nil {
		return
	}
	d.Type = NormalizeTransport(d.Type)
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
	c.applyInstanceDefaults(d)
	if d.Queue.Max == 0 {
		d.Queue.Max = DefaultQueueMax
	}
	if d.Queue.Timeout == 0 {
		d.Queue.Timeout = DefaultQueueTimeout
	}
	if d.Queue.MaxPerAgent == 0 {
		d.Queue.MaxPerAgent = share(d.Queue.Max, 2)
	}
}
