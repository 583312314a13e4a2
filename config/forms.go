package config

import "slices"

// The tools/list forms a session can be served (http.handshake, agents.<id>.handshake).
const (
	FormAuto   = "auto"
	FormFull   = "full"
	FormThin   = "thin"
	FormSearch = "search"
)

// validForm reports whether s is one of the forms.
func validForm(s string) bool {
	switch s {
	case FormAuto, FormFull, FormThin, FormSearch:
		return true
	}
	return false
}

// SearchConfig is http.search: the search form lists a search tool and the pinned tools;
// a query returns the full definitions of the best matches, and every tool stays callable
// by its exposed name.
type SearchConfig struct {
	// Pinned are globs over exposed tool names (path.Match syntax) always listed in full
	// in the search form; an agent's pinned_tools add to them.
	Pinned []string `yaml:"pinned"`
	// Results is how many definitions a query returns when it does not say (default
	// DefaultSearchResults, 1 to MaxSearchResults).
	Results int `yaml:"results"`
}

// AutoForm is http.auto: the thresholds, in tokens of the view's full tool list (o200k),
// by which the auto form picks a session's form.
type AutoForm struct {
	// FullMaxTokens: a view whose full list is at most this many tokens is served full
	// (default DefaultAutoFullMaxTokens).
	FullMaxTokens int `yaml:"full_max_tokens"`
	// ThinMaxTokens: a larger view up to this many tokens is served thin, and one above it
	// the search form (default DefaultAutoThinMaxTokens).
	ThinMaxTokens int `yaml:"thin_max_tokens"`
}

// PinnedTools returns the globs of the tools the search form lists in full for an agent:
// http.search.pinned, then the agent's pinned_tools (an unknown agent: the first alone).
// The slice is the caller's.
func (c *Config) PinnedTools(agent string) []string {
	out := slices.Clone(c.HTTP.Search.Pinned)
	if a := c.Agents[agent]; a != nil {
		out = append(out, a.PinnedTools...)
	}
	return out
}
