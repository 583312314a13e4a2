package config

import (
	"fmt"
	"path"
	"regexp"
)

// formList is the forms as problems name them.
const formList = "auto, full, thin, search"

// validateForms checks http.handshake, http.search and http.auto.
func (c validator) validateForms(ps *Problems) {
	if !validForm(c.HTTP.Handshake) {
		ps.add(false, "http.handshake", "%q is not one of %s", c.HTTP.Handshake, formList)
	}
	globProblems(ps, "http.search.pinned", c.HTTP.Search.Pinned)
	if r := c.HTTP.Search.Results; r < 1 || r > MaxSearchResults {
		ps.add(false, "http.search.results", "%d must be between 1 and %d", r, MaxSearchResults)
	}
	a := c.HTTP.Auto
	if a.FullMaxTokens < 0 {
		ps.add(false, "http.auto.full_max_tokens", "%d must not be negative", a.FullMaxTokens)
	}
	if a.ThinMaxTokens < a.FullMaxTokens {
		ps.add(false, "http.auto.thin_max_tokens", "%d is less than http.auto.full_max_tokens (%d): a view served thin is larger than one served full, so thin's threshold is the higher one", a.ThinMaxTokens, a.FullMaxTokens)
	}
}

// globProblems reports each glob of a list that path.Match refuses, by its index.
func globProblems(ps *Problems, where string, globs []string) {
	for i, g := range globs {
		if _, err := path.Match(g, ""); err != nil {
			ps.add(false, fmt.Sprintf("%s[%d]", where, i), "bad glob %q: %v", g, err)
		}
	}
}

// validateClients checks clients.<name>, in name order: each profile matches something,
// with globs that compile, and its limits are ones a session can be served within.
func (c validator) validateClients(ps *Problems) {
	for _, name := range sortedKeys(c.Clients) {
		p := c.Clients[name]
		where := "clients." + name
		if p == nil {
			ps.add(false, where, "empty client profile (remove the entry to keep the built-in one, if any)")
			continue
		}
		if len(p.Match) == 0 {
			ps.add(false, where+".match", "no globs: the profile fits no client (give the clientInfo.name it is for, e.g. \"cursor*\")")
		}
		for i, g := range p.Match {
			if g == "" {
				ps.add(false, fmt.Sprintf("%s.match[%d]", where, i), "empty glob: it fits no client")
			} else if _, err := path.Match(g, ""); err != nil {
				ps.add(false, fmt.Sprintf("%s.match[%d]", where, i), "bad glob %q: %v", g, err)
			}
		}
		if p.NameMax != 0 && (p.NameMax < MinClientNameMax || p.NameMax > 128) {
			ps.add(false, where+".name_max", "%d must be between %d and 128 (0: the naming.max_length)", p.NameMax, MinClientNameMax)
		}
		if p.NamePattern != "" {
			if _, err := regexp.Compile(p.NamePattern); err != nil {
				ps.add(false, where+".name_pattern", "%q does not compile: %v", p.NamePattern, err)
			}
		}
		switch {
		case p.MaxTools < 0:
			ps.add(false, where+".max_tools", "%d must not be negative (0: no cap)", p.MaxTools)
		case p.MaxTools == 1 || p.MaxTools == 2:
			ps.add(false, where+".max_tools", "%d is too few: over the cap a session gets the search form, which needs room for its own tools and a pinned one (0: no cap, else at least 3)", p.MaxTools)
		}
	}
}
