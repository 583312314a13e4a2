package config

import (
	"path"
	"regexp"
	"strings"
)

// ClientProfile is one clients.<name> entry: what a known MCP client takes, recognised by
// the clientInfo.name it sends in initialize (docs/config.md, "Clients").
type ClientProfile struct {
	// Match are case-insensitive globs over clientInfo.name (path.Match syntax), e.g.
	// "cursor*".
	Match []string `yaml:"match"`
	// NameMax is the longest tool name the client takes (0: the naming.max_length). A
	// client that puts its own prefix before the gateway's names (mcp__mcpgw__ in Claude
	// Code) takes that many bytes fewer; the built-in profiles count it for the key mcpgw.
	NameMax int `yaml:"name_max"`
	// NamePattern is a regexp every name must match; names are already [A-Za-z0-9_-], so
	// this is for stricter clients (checked to compile).
	NamePattern string `yaml:"name_pattern"`
	// MaxTools is the most tools the client takes (0: no cap); over it, the session gets
	// the search form.
	MaxTools int `yaml:"max_tools"`
	// DefersTools marks a client that defers tools itself (its own tool search indexes the
	// definitions and loads them on demand): unless its session's header or its agent
	// asks for a form, it is served the full form, which its search indexes best, rather
	// than the gateway deferring a second time (thin or search). Its cap still wins.
	DefersTools bool `yaml:"defers_tools"`
}

// ClientProfile returns the profile whose Match fits clientName (first by sorted profile name), or nil.
func (c *Config) ClientProfile(clientName string) (string, *ClientProfile) {
	name := strings.ToLower(clientName)
	for _, id := range sortedKeys(c.Clients) {
		p := c.Clients[id]
		if p == nil {
			continue
		}
		for _, g := range p.Match {
			if ok, err := path.Match(strings.ToLower(g), name); err == nil && ok {
				return id, p
			}
		}
	}
	return "", nil
}

// NameLimit is the longest tool name the client takes: NameMax, or naming.max_length
// when the profile sets none or a longer one (names are never longer than that).
func (p *ClientProfile) NameLimit(n Naming) int {
	if p == nil || p.NameMax == 0 || p.NameMax > n.MaxLength {
		return n.MaxLength
	}
	return p.NameMax
}

// NameRE compiles NamePattern (nil when there is none; validation refused one that does
// not compile). It compiles on each call: a caller keeps the result for its session.
func (p *ClientProfile) NameRE() *regexp.Regexp {
	if p == nil || p.NamePattern == "" {
		return nil
	}
	re, err := regexp.Compile(p.NamePattern)
	if err != nil {
		return nil
	}
	return re
}

// copilotNamePattern is the pattern GitHub Copilot's model API holds every tool name to
// ("CAPIError: 400 tools.N.custom.name: String should match pattern ...").
const copilotNamePattern = `^[a-zA-Z0-9_-]{1,128}$`

// DefaultClients returns the built-in client profiles, a new map on each call (the config
// merges it under the file's clients). The numbers and their sources are in
// docs/config.md, "Clients"; a name limit that the client applies to its own prefix plus
// the tool name is given here minus that prefix for the server key mcpgw, the key
// `mcpgw client-config` writes.
func DefaultClients() map[string]*ClientProfile {
	return map[string]*ClientProfile{
		// Claude Code names a tool mcp__<key>__<tool>; the Anthropic API takes 64 bytes.
		// It defers MCP tools behind its own ToolSearch.
		"claude-code": {Match: []string{"claude-code"}, NameMax: 64 - len("mcp__mcpgw__"), DefersTools: true},
		// Cursor filters out a tool whose server key and name together reach 60
		// characters, and sends the agent its first 40 tools.
		"cursor": {Match: []string{"cursor*"}, NameMax: 59 - len("mcpgw"), MaxTools: 40},
		// VS Code with Copilot: 64 bytes, Copilot's pattern, 128 tools a request.
		"vscode": {Match: []string{"visual studio code*", "visual-studio-code*", "vscode*"},
			NameMax: 64, NamePattern: copilotNamePattern, MaxTools: 128, DefersTools: true},
		// Copilot outside VS Code (the CLI, JetBrains, Xcode): the same model API.
		"copilot": {Match: []string{"copilot*", "github-copilot*", "*-copilot-*"},
			NameMax: 64, NamePattern: copilotNamePattern, MaxTools: 128},
		// Windsurf's Cascade takes 100 tools at a time.
		"windsurf": {Match: []string{"windsurf*"}, MaxTools: 100},
		// Gemini CLI names a tool mcp_<key>_<tool> within 63 characters; the Gemini API
		// takes 512 function declarations a request.
		"gemini-cli": {Match: []string{"gemini-cli*"}, NameMax: 63 - len("mcp_mcpgw_"), MaxTools: 512},
		// Codex names a tool <key>__<tool> within 64 bytes (longer ones it hashes itself).
		// It defers MCP tools behind its tool_search.
		"codex": {Match: []string{"codex*"}, NameMax: 64 - len("mcpgw__"), DefersTools: true},
		// Qwen Code defers MCP tools behind its tool_search.
		"qwen-code": {Match: []string{"qwen-code*", "qwen code*"}, DefersTools: true},
	}
}

// applyClientDefaults merges the built-in profiles under the file's: a profile the file
// names (null included) stays the file's.
func (c *Config) applyClientDefaults() {
	if c.Clients == nil {
		c.Clients = map[string]*ClientProfile{}
	}
	for id, p := range DefaultClients() {
		if _, ok := c.Clients[id]; !ok {
			c.Clients[id] = p
		}
	}
}

// MinClientNameMax is the least name_max a client profile may set: the gateway's own list
// tools (mcpgw__describe_tools, 21 bytes) are not shortened, so a client must take them.
const MinClientNameMax = 24
