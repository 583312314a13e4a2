package ui

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/admin"
)

// Skills on the Servers page (docs/ui.md): beside each server's tool count its skill
// count, and below the servers a table of the skills the running servers list, as GET
// /api/skills lists them (the same port call, so the page shows what the admin API shows
// the signed-in admin). Every string of a skill but its digest comes from an upstream:
// the page escapes it, writes out its invisible characters, and bounds how much of it
// (and how many skills a server) it shows, so that an upstream cannot make the page as
// large as its catalogue.

const (
	// maxSkillsShown is how many skills of one server the page lists; the rest are
	// counted in a row that points to GET /api/skills?server=.
	maxSkillsShown = 100
	// maxSkillText is how many characters of a skill's name, URI or description the page
	// shows; a longer one is cut and says how long it is.
	maxSkillText = 300
)

// skillCount is how many skills a server lists, and how many of them integrity holds.
type skillCount struct {
	All, Held int
}

// skillItem is one skill in the page's table.
type skillItem struct {
	Server      string
	Name        cutText
	URI         cutText // as clients see it
	Description cutText
	Files       int
	Dynamic     bool
	Hash        string // the whole fingerprint (the cell's title)
	Digest      string // its short form
	Held        bool
	// Policy is its server's integrity policy (pin, warn, off): what a skill that is not
	// held is (approved, served while any change waits for review, or not pinned at all).
	Policy string
	// First marks the first row of a server (the table's server cell starts there).
	First bool
	// Left, on the row after a server's last shown skill, is how many of its skills the
	// page left out (the row shows no skill).
	Left int
}

// skillsView is the Skills table: its rows in server order, each server's as it lists
// them, with a row counting what was left out after a server whose skills were cut.
type skillsView struct {
	Rows   []skillItem
	Count  int // skills listed by every server
	Held   int
	Counts map[string]skillCount
}

// cutText is text shown at most maxSkillText characters long: Cut says it was cut and
// Len is its whole length in characters.
type cutText struct {
	Text string
	Cut  bool
	Len  int
}

// cut is s as the page shows it: at most maxSkillText characters (never splitting one).
func cut(s string) cutText {
	n := utf8.RuneCountInString(s)
	if n <= maxSkillText {
		return cutText{Text: s, Len: n}
	}
	i, k := 0, 0
	for k < maxSkillText {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		k++
	}
	return cutText{Text: s[:i], Cut: true, Len: n}
}

// shortDigest is a fingerprint's short form: its algorithm and the first 12 digits
// ("sha256:0123456789ab…"); "" for none.
func shortDigest(h string) string {
	alg, digits, ok := strings.Cut(h, ":")
	if !ok {
		alg, digits = "", h
	}
	if utf8.RuneCountInString(digits) > 12 {
		digits = string([]rune(digits)[:12]) + "…"
	}
	if alg == "" {
		return digits
	}
	return cut(alg).Text + ":" + digits
}

// skills reads the skills of every running server as GET /api/skills lists them and
// makes the page's table of them, each with its server's integrity policy.
func (u *UI) skills() skillsView {
	cfg := u.port.Config()
	return skillsOf(u.port.Skills(""), func(server string) string { return cfg.IntegrityOf(server).Policy })
}

// skillsOf is the Skills table of rows: by server, each server's in the order of rows
// (the admin API's: as the server lists them).
func skillsOf(rows []admin.SkillRow, policy func(server string) string) skillsView {
	rows = slices.Clone(rows)
	slices.SortStableFunc(rows, func(a, b admin.SkillRow) int { return strings.Compare(a.Server, b.Server) })
	v := skillsView{Counts: map[string]skillCount{}}
	for _, r := range rows {
		c := v.Counts[r.Server]
		c.All++
		if r.Held {
			c.Held++
			v.Held++
		}
		v.Counts[r.Server] = c
		v.Count++
		if c.All > maxSkillsShown {
			if last := &v.Rows[len(v.Rows)-1]; last.Left > 0 {
				last.Left++
			} else {
				v.Rows = append(v.Rows, skillItem{Server: r.Server, Left: 1})
			}
			continue
		}
		v.Rows = append(v.Rows, skillItem{Server: r.Server, Name: cut(r.Name), URI: cut(r.URI), Description: cut(r.Description),
			Files: r.Files, Dynamic: r.Dynamic, Hash: r.Hash, Digest: shortDigest(r.Hash), Held: r.Held, Policy: policy(r.Server), First: c.All == 1})
	}
	return v
}
