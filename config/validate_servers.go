package config

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

var serverNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// SharedStdioError is the exact message docs/config.md gives for shared mode on a stdio server.
func SharedStdioError(name string) string {
	return fmt.Sprintf("mcp server %q: shared mode requires HTTP/SSE/streamable HTTP transport (stdio is per-session only)", name)
}

// SharedStdioHint names the ways out of SharedStdioError.
const SharedStdioHint = "ways out: stdio_proxy: true (one process multiplexed for every session), mode: per_agent (one process per agent), or mode: per_call (one process per request)"

// validateServers checks servers.<name>, in name order.
func (c validator) validateServers(ps *Problems) {
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
			ps.add(false, where, "protocol_version %q is not one of %s", d.ProtocolVer, strings.Join(upstreamVersions(), ", "))
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
		if d.AllowEnvOverride {
			ps.add(true, where+".allow_env_override", "is ignored for type %s (env_injection reaches stdio servers only)", d.Type)
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
	if f := d.TLS.files(); !f.IsZero() {
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

// upstreamVersions are the protocol_version values a server may set (a new slice each
// call: no package-level table anyone could write to).
func upstreamVersions() []string {
	return []string{ProtocolAuto, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2026-07-28"}
}

// SupportedUpstreamVersion reports whether the gateway can speak v to an upstream.
func SupportedUpstreamVersion(v string) bool {
	return slices.Contains(upstreamVersions(), v)
}
