package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/admin"
	"github.com/mcpgw/mcpgw/internal/registry"
)

// The Integrity page (docs/integrity.md): per server or plugin, the definitions that wait
// for an admin, each with its flags and a field-level diff against the approved one, and
// the pinned ones. Every string on it comes from an upstream, so besides html/template's
// escaping it is shown with its invisible and bidirectional characters written out.

// integrityServer is one server or plugin on the Integrity page.
type integrityServer struct {
	Name    string
	Waiting []integrityDef // held or warned: what a decision is asked for
	Pinned  []integrityDef // approved, nothing waiting
	Flagged []integrityDef // the pinned ones the heuristics flag (shown outside the collapsed list)
}

// integrityDef is one definition on the page.
type integrityDef struct {
	admin.PinRow
	// Flags are the heuristics' flags of the definition that waits (Waiting) or of the
	// approved one (Pinned); FlagsUnread is set when they could not be read.
	Flags       []registry.DefFlag
	FlagsUnread bool
	Diff        []diffRow
	Why         string // the reason, in words
	Def         string // the definition that waits, indented
}

// diffRow is one change of a held definition: Old and New are JSON text ("" when absent).
type diffRow struct {
	Op, Path, Old, New string
}

// reasonText says in words why a definition waits.
func reasonText(reason string) string {
	switch reason {
	case "first_use":
		return "the first catalogue of a server whose first use is held (first_use: hold)"
	case "changed":
		return "changed since an admin approved it"
	case "new":
		return "new on a server whose catalogue was already pinned (a renamed definition is new too)"
	case "suspicious":
		return "flagged by the heuristics, which hold it (suspicious: hold)"
	}
	return reason
}

// ServeIntegrity is the Integrity page: what waits, server by server, and what is pinned,
// a page of definitions at a time (?cursor= the next page's, ?limit= definitions a page:
// the admin API's paging), so that what an upstream makes the gateway hold cannot make
// the page as large as all of it.
func (u *UI) ServeIntegrity(w http.ResponseWriter, r *http.Request) {
	q := admin.IntegrityQuery{Cursor: r.URL.Query().Get("cursor")}
	if n, err := strconv.Atoi(r.URL.Query().Get("limit")); err == nil && n >= 1 && n <= admin.MaxIntegrityPage {
		q.Limit = n
	}
	pg, err := u.port.IntegrityRows(q)
	if err != nil {
		u.view.Render(w, r, http.StatusBadRequest, "integrity", "Integrity", map[string]any{"Error": err.Error()})
		return
	}
	byName := map[string]*integrityServer{}
	if q.Cursor == "" {
		for name := range pg.HeldByServer { // every server with pins, whether anything of it waits or not
			byName[name] = &integrityServer{Name: name}
		}
	}
	waiting := 0
	for _, n := range pg.HeldByServer {
		waiting += n
	}
	for _, row := range pg.Rows {
		s := byName[row.Server]
		if s == nil {
			s = &integrityServer{Name: row.Server}
			byName[row.Server] = s
		}
		d := integrityDefOf(row)
		switch {
		case row.Held != nil && row.State != "rejected":
			s.Waiting = append(s.Waiting, d)
			if row.State == "warned" {
				waiting++ // held_by_server counts the held ones
			}
		case len(d.Flags) > 0 || d.FlagsUnread:
			s.Flagged = append(s.Flagged, d)
			s.Pinned = append(s.Pinned, d)
		default:
			s.Pinned = append(s.Pinned, d)
		}
	}
	servers := make([]*integrityServer, 0, len(byName))
	for _, s := range byName {
		servers = append(servers, s)
	}
	// What waits first, then by name.
	slices.SortFunc(servers, func(a, b *integrityServer) int {
		if (len(a.Waiting) > 0) != (len(b.Waiting) > 0) {
			if len(a.Waiting) > 0 {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	next := ""
	if pg.Next != "" {
		v := url.Values{"cursor": {pg.Next}}
		if q.Limit != 0 {
			v.Set("limit", strconv.Itoa(q.Limit))
		}
		next = "/ui/integrity?" + v.Encode()
	}
	u.view.Render(w, r, http.StatusOK, "integrity", "Integrity", map[string]any{"Servers": servers, "Waiting": waiting, "Next": next, "Paged": q.Cursor != ""})
}

// integrityDefOf is a row of GET /api/integrity as the page shows it.
func integrityDefOf(row admin.PinRow) integrityDef {
	d := integrityDef{PinRow: row}
	flags := row.Flags
	if row.Held != nil {
		flags = row.Held.Flags
		d.Why = reasonText(row.Held.Reason)
		d.Def = indentJSON(row.Held.Def)
		for _, c := range row.Diff {
			d.Diff = append(d.Diff, diffRow{Op: c.Op, Path: c.Path, Old: string(c.Old), New: string(c.New)})
		}
	}
	if len(bytes.TrimSpace(flags)) > 0 && string(bytes.TrimSpace(flags)) != "null" {
		if err := json.Unmarshal(flags, &d.Flags); err != nil {
			d.FlagsUnread = true
		}
	}
	return d
}

// indentJSON is raw indented for reading (as it is when it is not JSON).
func indentJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

// shownText is a piece of text as the page shows it: Text as it is, or, for a character
// that would not show or would reorder the text around it, Mark (its code point).
type shownText struct {
	Text, Mark string
}

// reveal splits s into plain text and marks for the characters a reader would not see:
// format characters (zero-width, bidirectional controls, Unicode tags, the soft hyphen),
// control characters but newline and tab, line and paragraph separators, variation
// selectors, the Hangul fillers, and bytes that are not UTF-8. The template escapes the
// text and shows each mark as U+XXXX, so a name or a description cannot hide what it says
// or display in another order than it is stored.
func reveal(s string) []shownText {
	var out []shownText
	start := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		mark := ""
		switch {
		case r == utf8.RuneError && size == 1:
			mark = fmt.Sprintf("byte 0x%02X", s[i])
		case hiddenRune(r):
			mark = fmt.Sprintf("U+%04X", r)
		}
		if mark != "" {
			if start < i {
				out = append(out, shownText{Text: s[start:i]})
			}
			out = append(out, shownText{Mark: mark})
			start = i + size
		}
		i += size
	}
	if start < len(s) {
		out = append(out, shownText{Text: s[start:]})
	}
	return out
}

// hiddenRune reports whether r does not show as itself (reveal).
func hiddenRune(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case unicode.IsControl(r), unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Variation_Selector):
		return true
	}
	switch r {
	case 0x115F, 0x1160, 0x3164, 0xFFA0: // Hangul fillers: letters that draw nothing
		return true
	}
	return false
}
