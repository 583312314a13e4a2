package config

import (
	"slices"
	"strings"
	"testing"
)

func TestFormDefaults(t *testing.T) {
	cfg, _, err := Parse([]byte("store: memory\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.HTTP.Handshake != FormAuto {
		t.Errorf("http.handshake = %q, want auto", cfg.HTTP.Handshake)
	}
	if cfg.HTTP.Search.Results != DefaultSearchResults || cfg.HTTP.Search.Pinned != nil {
		t.Errorf("http.search = %+v, want results %d and nothing pinned", cfg.HTTP.Search, DefaultSearchResults)
	}
	if a := cfg.HTTP.Auto; a.FullMaxTokens != DefaultAutoFullMaxTokens || a.ThinMaxTokens != DefaultAutoThinMaxTokens {
		t.Errorf("http.auto = %+v, want %d and %d", a, DefaultAutoFullMaxTokens, DefaultAutoThinMaxTokens)
	}
	set, _, err := Parse([]byte("store: memory\nhttp:\n  handshake: search\n  search: {pinned: [\"github__*\"], results: 8}\n  auto: {full_max_tokens: 100, thin_max_tokens: 900}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if set.HTTP.Handshake != FormSearch || set.HTTP.Search.Results != 8 || !slices.Equal(set.HTTP.Search.Pinned, []string{"github__*"}) {
		t.Errorf("http as set: %+v", set.HTTP)
	}
	if a := set.HTTP.Auto; a.FullMaxTokens != 100 || a.ThinMaxTokens != 900 {
		t.Errorf("http.auto as set: %+v", a)
	}
}

func TestPinnedTools(t *testing.T) {
	cfg, _, err := Parse([]byte(`store: memory
servers:
  gh: {type: http, url: "http://127.0.0.1:9/mcp"}
http:
  search: {pinned: ["gh__get_*"]}
agents:
  bot: {servers: [gh], pinned_tools: ["gh__create_issue"]}
  plain: {servers: [gh]}
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.PinnedTools("bot"); !slices.Equal(got, []string{"gh__get_*", "gh__create_issue"}) {
		t.Errorf("bot: %q", got)
	}
	if got := cfg.PinnedTools("plain"); !slices.Equal(got, []string{"gh__get_*"}) {
		t.Errorf("plain: %q", got)
	}
	if got := cfg.PinnedTools("nobody"); !slices.Equal(got, []string{"gh__get_*"}) {
		t.Errorf("an unknown agent: %q", got)
	}
	// The result is the caller's: appending to it leaves the config alone.
	_ = append(cfg.PinnedTools("plain"), "x")
	got := cfg.PinnedTools("bot")
	got[0] = "changed"
	if cfg.HTTP.Search.Pinned[0] != "gh__get_*" {
		t.Error("PinnedTools handed out the config's own slice")
	}
}

func TestFormProblems(t *testing.T) {
	const servers = "store: memory\nservers:\n  gh: {type: http, url: \"http://127.0.0.1:9/mcp\"}\n"
	tests := []struct {
		name, yaml string
		want       []string // substrings of the problems, one each
	}{
		{"search is a form", "http: {handshake: search}\nagents:\n  a: {servers: [gh], handshake: search}\n", nil},
		{"unknown http form", "http: {handshake: tiny}\n", []string{`http.handshake: "tiny" is not one of auto, full, thin, search`}},
		{"unknown agent form", "agents:\n  a: {servers: [gh], handshake: tiny}\n", []string{`agents.a: handshake "tiny" is not one of auto, full, thin, search`}},
		{"bad pinned glob", "http:\n  search: {pinned: [\"ok*\", \"[bad\"]}\n", []string{`http.search.pinned[1]: bad glob "[bad"`}},
		{"bad agent pinned glob", "agents:\n  a: {servers: [gh], pinned_tools: [\"[bad\"]}\n", []string{`agents.a.pinned_tools[0]: bad glob "[bad"`}},
		{"results too many", "http:\n  search: {results: 21}\n", []string{"http.search.results: 21 must be between 1 and 20"}},
		{"results negative", "http:\n  search: {results: -1}\n", []string{"http.search.results: -1 must be between 1 and 20"}},
		{"results at the bounds", "http:\n  search: {results: 20}\n", nil},
		{"negative full", "http:\n  auto: {full_max_tokens: -5, thin_max_tokens: 10}\n", []string{"http.auto.full_max_tokens: -5 must not be negative"}},
		{"thin below full", "http:\n  auto: {full_max_tokens: 5000, thin_max_tokens: 3000}\n", []string{"http.auto.thin_max_tokens: 3000 is less than http.auto.full_max_tokens (5000)"}},
		{"thin equal to full", "http:\n  auto: {full_max_tokens: 3000, thin_max_tokens: 3000}\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ps, err := Parse([]byte(servers + tt.yaml))
			checkProblems(t, ps, err, tt.want)
		})
	}
}

// checkProblems holds the errors of a parse to want: one error containing each, and no
// other.
func checkProblems(t *testing.T, ps Problems, err error, want []string) {
	t.Helper()
	var errs []string
	for _, p := range ps {
		if !p.Warning {
			errs = append(errs, p.String())
		}
	}
	if len(want) == 0 {
		if err != nil || len(errs) > 0 {
			t.Fatalf("want no error, got %v\n  %s", err, strings.Join(errs, "\n  "))
		}
		return
	}
	if len(errs) != len(want) {
		t.Errorf("%d errors, want %d:\n  %s", len(errs), len(want), strings.Join(errs, "\n  "))
	}
	for _, w := range want {
		if !slices.ContainsFunc(errs, func(e string) bool { return strings.Contains(e, w) }) {
			t.Errorf("no error contains %q:\n  %s", w, strings.Join(errs, "\n  "))
		}
	}
}
