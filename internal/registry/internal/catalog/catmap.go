package catalog

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/mcpgw/mcpgw/plugin"
)

// The catalogue map (docs/sessions.md, "The catalogue map"): a line that names, in few
// tokens, the servers of a view and the groups of their tools, for the search form's
// search_tools description, so a model that sees only the search tool still learns the
// catalogue's own nouns. It is derived from the view alone (what the view's filter admits
// and integrity serves: a tool the session cannot see gives no word), built once per view,
// and byte-stable: servers in byte order, each server's groups by how many of its tools
// they hold, then in byte order.
//
//   - A plugin's tools are grouped by their resource type's kind (a table of the sql
//     plugin): "clinic: allergies, appointments, patients".
//   - Any other server's tools by the words of their upstream names, less the common verbs
//     and fill words below and the server's own name: "filesystem: file, directory, …"; a
//     server whose names are all verbs is named by its verbs.
//
// Upstream text is never copied: a word is letters and digits only (any script), lower
// case, at most mapWordMax bytes; a server name keeps letters, digits, '-', '_' and '.',
// at most mapServerMax bytes. The map is cut to MapBudget tokens: first fewer groups per
// server (each cut server ends "+N more"), then fewer servers ("…and N more servers").

// MapBudget is the most o200k_base tokens a catalogue map takes.
const MapBudget = 200

const (
	mapWordMax   = 24 // a longer word is left out
	mapServerMax = 32 // a longer server name is cut
	mapKindWords = 4  // the most words a plugin kind is named by
	// mapBytesPerToken bounds the bytes of a map whose tokens are counted: a rendering
	// longer than MapBudget × this is over budget without counting (o200k spends a token
	// on every few bytes of such lists), so a huge view costs no huge count.
	mapBytesPerToken = 12
)

// mapVerb reports whether w is a verb of tool names that every kind of server uses: it
// names no group, unless a server's names have nothing else.
func mapVerb(w string) bool {
	switch w {
	case "get", "list", "read", "write", "create", "update", "delete", "add", "remove", "set",
		"search", "find", "open", "edit", "move", "run", "count", "put", "patch", "fetch",
		"query", "make", "show", "describe", "check", "use", "toggle", "trigger":
		return true
	}
	return false
}

// mapFill reports whether w is a fill word of tool names, which never names a group.
func mapFill(w string) bool {
	switch w {
	case "a", "an", "the", "and", "or", "to", "of", "for", "by", "in", "on", "as", "from",
		"with", "all", "new", "multiple":
		return true
	}
	return len(w) < 2 || isNumber(w) || len(w) <= 3 && w[0] == 'v' && isNumber(w[1:])
}

// viewMap is a view's catalogue map and the derived bytes built from it, each on first use.
type viewMap struct {
	once sync.Once
	text string
}

// Map is the view's catalogue map (see above), built once per view; "" for a view without
// tools.
func (v *View) Map() string {
	v.catMap.once.Do(func() { v.catMap.text = buildMap(v.Tools) })
	return v.catMap.text
}

// Memo is what build makes for key over this view, built once per view and key (a
// definition the gateway derives from the view, such as its search tool with the map).
// Keys share the view's page cache under their own prefix.
func (v *View) Memo(key string, build func() json.RawMessage) json.RawMessage {
	ck := "memo:" + key
	if p, hit := v.pages.Load(ck); hit {
		return p.(*Page).Bytes
	}
	p, _ := v.pages.LoadOrStore(ck, &Page{Bytes: build()})
	return p.(*Page).Bytes
}

// mapEntry is one server's part of the map: its name and its groups, best first.
type mapEntry struct {
	server string
	groups []*group
}

// buildMap is the map of tools (see above).
func buildMap(tools []*Tool) string {
	entries := mapEntries(tools)
	if len(entries) == 0 {
		return ""
	}
	k := fillMap(entries)
	if k == nil {
		return fewerServers(entries)
	}
	s := renderMap(entries, k)
	// The pieces' counts add up to the whole's, since o200k's pre-tokenizer splits at
	// ", " and "; "; should they not, the last groups added go until it fits.
	for last := len(entries) - 1; !fitsMap(s); {
		for k[last] <= 1 {
			if last--; last < 0 {
				return fewerServers(entries)
			}
		}
		k[last]--
		s = renderMap(entries, k)
	}
	return s
}

// fillMap is how many groups each entry shows: one each, then more while the count of
// the pieces stays within MapBudget (a "+N more" counted at mapMoreTokens), the groups
// that hold the most tools first (then the earlier in their entry, then the earlier
// entry), each entry's in its order: an entry whose next group does not fit shows no
// later one. nil when one group each is already over.
func fillMap(entries []mapEntry) []int {
	k := make([]int, len(entries))
	used := 0
	type cand struct{ entry, group, tools int }
	var cands []cand
	for i, e := range entries {
		if i > 0 {
			used += countPiece("; ")
		}
		used += countPiece(e.server+": ") + countPiece(e.groups[0].shown)
		if len(e.groups) > 1 {
			used += mapMoreTokens
		}
		k[i] = 1
		for j := 1; j < len(e.groups); j++ {
			cands = append(cands, cand{i, j, e.groups[j].tools})
		}
	}
	if used > MapBudget {
		return nil
	}
	slices.SortFunc(cands, func(a, b cand) int {
		if a.tools != b.tools {
			return b.tools - a.tools
		}
		if a.group != b.group {
			return a.group - b.group
		}
		return a.entry - b.entry
	})
	blocked := make([]bool, len(entries))
	for _, c := range cands {
		if blocked[c.entry] || k[c.entry] != c.group {
			continue
		}
		e := entries[c.entry]
		cost := countPiece(", " + e.groups[c.group].shown)
		if c.group+1 == len(e.groups) {
			cost -= mapMoreTokens // the last group shown: no "+N more"
		}
		if used+cost > MapBudget {
			blocked[c.entry] = true
			continue
		}
		used += cost
		k[c.entry]++
	}
	return k
}

// mapMoreTokens is what " +N more" is counted at while filling (" +", the number, " more").
const mapMoreTokens = 3

// countPiece is the tokens of a piece of the map.
func countPiece(s string) int { return CountTokens([]byte(s)) }

// fewerServers is the map when one group of each server is over budget: as many servers
// as fit with one group each, then how many are left.
func fewerServers(entries []mapEntry) string {
	var b strings.Builder
	for i, e := range entries {
		rest := "; …and " + strconv.Itoa(len(entries)-i-1) + " more servers"
		if i == len(entries)-1 {
			rest = ""
		}
		prev := b.Len()
		if i > 0 {
			b.WriteString("; ")
		}
		writeEntry(&b, e, 1)
		if !fitsMap(b.String() + rest) {
			if i == 0 {
				return "…and " + strconv.Itoa(len(entries)) + " servers"
			}
			return b.String()[:prev] + "; …and " + strconv.Itoa(len(entries)-i) + " more servers"
		}
	}
	return b.String()
}

// fitsMap reports whether s is within MapBudget tokens.
func fitsMap(s string) bool {
	return len(s) <= MapBudget*mapBytesPerToken && CountTokens([]byte(s)) <= MapBudget
}

// renderMap is every entry with k[i] groups.
func renderMap(entries []mapEntry, k []int) string {
	var b strings.Builder
	for i, e := range entries {
		if i > 0 {
			b.WriteString("; ")
		}
		writeEntry(&b, e, k[i])
	}
	return b.String()
}

// writeEntry writes "server: g1, g2 +N more" with at most k groups.
func writeEntry(b *strings.Builder, e mapEntry, k int) {
	b.WriteString(e.server)
	b.WriteString(": ")
	for i, g := range e.groups[:min(k, len(e.groups))] {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(g.shown)
	}
	if n := len(e.groups) - k; n > 0 {
		b.WriteString(" +")
		b.WriteString(strconv.Itoa(n))
		b.WriteString(" more")
	}
}

// mapEntries are the servers of tools with their groups, servers in byte order (by the
// name the map shows); a server with no group is left out.
func mapEntries(tools []*Tool) []mapEntry {
	byServer := map[string]*groupCount{}
	var servers []string
	for _, t := range tools {
		name := mapServerName(t.Server)
		if name == "" {
			continue
		}
		gc := byServer[name]
		if gc == nil {
			gc = &groupCount{server: name, own: map[string]bool{}, nouns: map[string]*group{}, verbs: map[string]*group{}}
			for _, w := range mapWords(name) {
				gc.own[w] = true
			}
			byServer[name] = gc
			servers = append(servers, name)
		}
		gc.add(t)
	}
	slices.Sort(servers)
	out := make([]mapEntry, 0, len(servers))
	for _, s := range servers {
		if g := byServer[s].ranked(); len(g) > 0 {
			out = append(out, mapEntry{server: s, groups: g})
		}
	}
	return out
}

// group is one group of a server's tools: the word shown and how many tools it holds.
type group struct {
	shown string
	tools int
}

// groupCount gathers one server's groups: nouns (kinds or name words), and verbs for a
// server whose names have no other word.
type groupCount struct {
	server       string
	own          map[string]bool // the words of the server's name, which name no group
	nouns, verbs map[string]*group
}

// add counts tool t in its groups: a plugin tool in its kind (utility tools in none),
// another tool in each distinct word of its name.
func (gc *groupCount) add(t *Tool) {
	if t.PluginTool != nil {
		if kind := pluginKind(t.PluginTool); kind != "" {
			count(gc.nouns, kind, kind)
		}
		return
	}
	seen := map[string]bool{}
	for _, w := range mapWords(t.Name) {
		key := foldPlural(w)
		if seen[key] || gc.own[w] || gc.own[key] {
			continue
		}
		seen[key] = true
		switch {
		case mapFill(w):
		case mapVerb(w):
			count(gc.verbs, key, w)
		default:
			count(gc.nouns, key, w)
		}
	}
}

// count adds a tool to the group key of m, shown as shown (the first form seen, or the
// shorter, then the smaller in byte order, so the form does not depend on tool order).
func count(m map[string]*group, key, shown string) {
	g := m[key]
	if g == nil {
		m[key] = &group{shown: shown, tools: 1}
		return
	}
	g.tools++
	if len(shown) < len(g.shown) || len(shown) == len(g.shown) && shown < g.shown {
		g.shown = shown
	}
}

// ranked are the server's groups, most tools first, then in byte order: its nouns, or its
// verbs when it has none.
func (gc *groupCount) ranked() []*group {
	m := gc.nouns
	if len(m) == 0 {
		m = gc.verbs
	}
	gs := make([]*group, 0, len(m))
	for _, g := range m {
		gs = append(gs, g)
	}
	slices.SortFunc(gs, func(a, b *group) int {
		if a.tools != b.tools {
			return b.tools - a.tools
		}
		return strings.Compare(a.shown, b.shown)
	})
	return gs
}

// pluginKind is the kind of a plugin tool's resource type in words ("proof of delivery"),
// or "" for a utility tool.
func pluginKind(pt *plugin.Tool) string {
	if pt.Key == "" {
		return ""
	}
	_, _, kind, err := plugin.SplitKey(pt.Key)
	if err != nil {
		kind = pt.Key
	}
	words := mapWords(kind)
	return strings.Join(words[:min(len(words), mapKindWords)], " ")
}

// mapWords are the words of an upstream name: runs of letters and digits, split also where
// a lower-case letter meets an upper-case one, lower case; longer than mapWordMax bytes
// are left out. Everything else (separators, control and format characters) only
// separates.
func mapWords(s string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			if w := strings.ToLower(string(cur)); len(w) <= mapWordMax {
				words = append(words, w)
			}
			cur = cur[:0]
		}
	}
	prevLower := false
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			prevLower = false
			continue
		}
		if unicode.IsUpper(r) && prevLower {
			flush()
		}
		cur = append(cur, r)
		prevLower = unicode.IsLower(r) || unicode.IsDigit(r)
	}
	flush()
	return words
}

// foldPlural is the key that puts a word and its plural in one group: "ies" → "y", a
// final "s" dropped (not "ss", "us" or "is").
func foldPlural(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") &&
		!strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:len(w)-1]
	}
	return w
}

// isNumber reports whether w is digits only.
func isNumber(w string) bool {
	return strings.IndexFunc(w, func(r rune) bool { return !unicode.IsDigit(r) }) < 0
}

// mapServerName is a server's name as the map shows it: letters, digits, '-', '_' and
// '.', cut to mapServerMax bytes ("" when nothing is left).
func mapServerName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '.' {
			if b.Len()+utf8.RuneLen(r) > mapServerMax {
				break
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}
