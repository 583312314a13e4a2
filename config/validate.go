package config

import (
	"fmt"
	"net"
	"regexp"
	"sort"
	"strconv"
	"strings"
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

// String is the problem as `mcpgw validate` prints it: "error: " or "warning: ", where
// it is, what is wrong, and the hint on a line of its own.
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

// Error is "invalid config: N problem(s)" (N the errors among them), then each problem
// (String) on a line of its own.
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

// Validate lists every problem it finds; it does not stop at the first. Each section of
// the config has its own check, run in the order of this list (the order problems are
// reported in).
func (cfg *Config) Validate() Problems {
	c := validator{cfg}
	var ps Problems
	ps = append(ps, c.ListenProblems()...)
	ps = append(ps, c.Tracing.problems()...)
	ps = append(ps, c.trustProblems()...)
	c.validateStore(&ps)
	c.validateNaming(&ps)
	c.validateAuth(&ps)
	c.validateLimits(&ps)
	c.validateForms(&ps)
	c.validateLog(&ps)
	c.validateServers(&ps)
	ps = append(ps, c.pluginProblems()...)
	ps = append(ps, c.inProcessProblems()...)
	c.validateAgents(&ps)
	c.validateExecutors(&ps)
	c.validateProjects(&ps)
	c.validateTasks(&ps)
	c.validateClients(&ps)
	c.validateIntegrity(&ps)
	validateUpstreamAuth(cfg, &ps)
	return ps
}

// validator holds the checks of Validate, one for each section of the config: they read
// the config they check (through the embedded *Config) and add what they find.
type validator struct{ *Config }

// add appends a problem whose text is format applied to a.
func (ps *Problems) add(warn bool, where, format string, a ...any) {
	*ps = append(*ps, Problem{Warning: warn, Where: where, Text: fmt.Sprintf(format, a...)})
}

// validateStore checks store.
func (c validator) validateStore(ps *Problems) {
	switch {
	case c.Store == "bolt", c.Store == "memory", strings.HasPrefix(c.Store, "redis://"), strings.HasPrefix(c.Store, "rediss://"), strings.HasPrefix(c.Store, "unix://"):
	default:
		ps.add(false, "store", "%q is not one of bolt, memory, redis://host:port/db", c.Store)
	}
}

var separatorRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,8}$`)

// validateNaming checks naming.
func (c validator) validateNaming(ps *Problems) {
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

// validateLog checks log.
func (c validator) validateLog(ps *Problems) {
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
