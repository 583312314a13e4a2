package config

import (
	"regexp"
	"strings"
	"testing"
)

func TestDefaultClientsMergeUnderTheFile(t *testing.T) {
	cfg, _, err := Parse([]byte(`store: memory
clients:
  cursor: {match: ["my-cursor*"], max_tools: 10}
  zed: {match: ["zed*"], name_max: 40}
`))
	if err != nil {
		t.Fatal(err)
	}
	for id := range DefaultClients() {
		if cfg.Clients[id] == nil {
			t.Errorf("built-in profile %q is missing after the merge", id)
		}
	}
	if c := cfg.Clients["cursor"]; c.MaxTools != 10 || c.NameMax != 0 || len(c.Match) != 1 {
		t.Errorf("the file's cursor must replace the built-in one whole: %+v", c)
	}
	if z := cfg.Clients["zed"]; z == nil || z.NameMax != 40 {
		t.Errorf("the file's own profile: %+v", z)
	}
	// Defaults again (ApplyDefaults is idempotent) keep the file's entry.
	cfg.ApplyDefaults()
	if cfg.Clients["cursor"].MaxTools != 10 {
		t.Error("ApplyDefaults a second time replaced the file's profile")
	}
	// Each config has its own profiles: changing one leaves DefaultClients alone.
	cfg.Clients["vscode"].MaxTools = 1
	if DefaultClients()["vscode"].MaxTools != 128 {
		t.Error("DefaultClients shares its profiles between configs")
	}
}

// TestDefaultClientsMatchTheirClients: the clientInfo.name each client is known to send
// (docs/config.md, "Clients") finds its profile, and each built-in profile is valid.
func TestDefaultClientsMatchTheirClients(t *testing.T) {
	cfg, ps, err := Parse([]byte("store: memory\n"))
	if err != nil || ps.HasErrors() {
		t.Fatalf("the built-in profiles do not validate: %v", err)
	}
	for sent, want := range map[string]string{
		"claude-code":                   "claude-code",
		"cursor-vscode":                 "cursor",
		"Visual Studio Code":            "vscode",
		"Visual Studio Code - Insiders": "vscode",
		"Visual-Studio-Code":            "vscode",
		"github-copilot-developer":      "copilot",
		"JetBrains-IU-copilot-intellij": "copilot",
		"Windsurf":                      "windsurf",
		"windsurf-client":               "windsurf",
		"gemini-cli-mcp-client":         "gemini-cli",
		"codex-mcp-client":              "codex",
		"Codex":                         "codex",
	} {
		id, p := cfg.ClientProfile(sent)
		if id != want || p == nil {
			t.Errorf("ClientProfile(%q) = %q, want %q", sent, id, want)
		}
	}
	if id, p := cfg.ClientProfile("mcp-inspector"); id != "" || p != nil {
		t.Errorf("an unknown client found %q", id)
	}
	if id, _ := cfg.ClientProfile(""); id != "" {
		t.Errorf("an empty name found %q", id)
	}
	_, vs := cfg.ClientProfile("Visual Studio Code")
	re := regexp.MustCompile(vs.NamePattern)
	if !re.MatchString("github__create_issue") || re.MatchString("a.b") {
		t.Errorf("the Copilot pattern %s", vs.NamePattern)
	}
	if _, c := cfg.ClientProfile("cursor-vscode"); c.NameMax > 60 || c.MaxTools != 40 {
		t.Errorf("cursor: %+v; Cursor takes names under 60 and 40 tools", c)
	}
}

func TestClientProfileFirstBySortedName(t *testing.T) {
	c := &Config{Clients: map[string]*ClientProfile{
		"b-wide":   {Match: []string{"*"}},
		"a-narrow": {Match: []string{"Acme*"}},
		"c-nil":    nil,
	}}
	if id, _ := c.ClientProfile("ACME agent"); id != "a-narrow" {
		t.Errorf("ACME agent: %q, want a-narrow (sorted first, matched case-insensitively)", id)
	}
	if id, _ := c.ClientProfile("other"); id != "b-wide" {
		t.Errorf("other: %q, want b-wide", id)
	}
	if id, _ := (&Config{}).ClientProfile("x"); id != "" {
		t.Errorf("no clients: %q", id)
	}
}

func TestClientProblems(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"a valid profile", "clients:\n  acme: {match: [\"acme*\"], name_max: 40, name_pattern: \"^[a-z_]+$\", max_tools: 3}\n", nil},
		{"no match", "clients:\n  acme: {name_max: 40}\n", []string{"clients.acme.match: no globs: the profile fits no client"}},
		{"an empty glob", "clients:\n  acme: {match: [\"\"]}\n", []string{"clients.acme.match[0]: empty glob"}},
		{"a bad glob", "clients:\n  acme: {match: [\"acme[\"]}\n", []string{`clients.acme.match[0]: bad glob "acme["`}},
		{"name_max too small", "clients:\n  acme: {match: [a], name_max: 23}\n", []string{"clients.acme.name_max: 23 must be between 24 and 128"}},
		{"name_max too large", "clients:\n  acme: {match: [a], name_max: 129}\n", []string{"clients.acme.name_max: 129 must be between 24 and 128"}},
		{"name_max at the bounds", "clients:\n  a1: {match: [a], name_max: 24}\n  a2: {match: [b], name_max: 128}\n", nil},
		{"negative max_tools", "clients:\n  acme: {match: [a], max_tools: -1}\n", []string{"clients.acme.max_tools: -1 must not be negative"}},
		{"max_tools 1", "clients:\n  acme: {match: [a], max_tools: 1}\n", []string{"clients.acme.max_tools: 1 is too few"}},
		{"max_tools 2", "clients:\n  acme: {match: [a], max_tools: 2}\n", []string{"clients.acme.max_tools: 2 is too few"}},
		{"a bad pattern", "clients:\n  acme: {match: [a], name_pattern: \"^[a-z\"}\n", []string{`clients.acme.name_pattern: "^[a-z" does not compile`}},
		{"an empty entry", "clients:\n  cursor:\n", []string{"clients.cursor: empty client profile"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ps, err := Parse([]byte("store: memory\n" + tt.yaml))
			checkProblems(t, ps, err, tt.want)
		})
	}
}

func TestClientProblemsAreOrdered(t *testing.T) {
	_, ps, _ := Parse([]byte("store: memory\nclients:\n  zz: {match: []}\n  aa: {match: []}\n"))
	var where []string
	for _, p := range ps {
		if strings.HasPrefix(p.Where, "clients.") {
			where = append(where, p.Where)
		}
	}
	if strings.Join(where, " ") != "clients.aa.match clients.zz.match" {
		t.Errorf("problems in %q, want name order", where)
	}
}

func TestClientProfileNameLimitAndRE(t *testing.T) {
	n := Naming{MaxLength: 64}
	for _, tt := range []struct {
		p    *ClientProfile
		want int
	}{{nil, 64}, {&ClientProfile{}, 64}, {&ClientProfile{NameMax: 40}, 40}, {&ClientProfile{NameMax: 100}, 64}} {
		if got := tt.p.NameLimit(n); got != tt.want {
			t.Errorf("NameLimit(%+v) = %d, want %d", tt.p, got, tt.want)
		}
	}
	if (&ClientProfile{}).NameRE() != nil || (*ClientProfile)(nil).NameRE() != nil {
		t.Error("no pattern must give a nil regexp")
	}
	if (&ClientProfile{NamePattern: "^[a-z"}).NameRE() != nil {
		t.Error("a pattern that does not compile must give nil")
	}
	re := (&ClientProfile{NamePattern: copilotNamePattern}).NameRE()
	if re == nil || !re.MatchString("a_b-c") || re.MatchString("a.b") {
		t.Errorf("NameRE: %v", re)
	}
}
