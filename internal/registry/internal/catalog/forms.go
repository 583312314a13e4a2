package catalog

import (
	"encoding/json"
	"strconv"
)

// SearchPage is the search form's tools/list (docs/sessions.md, "List forms"): the tools pin
// admits, in full and in the view's order, at most max of them (0: no cap), followed by
// extra (the gateway's search tool), as one page. It is built and counted once per view and
// key, which must name pin's rules and max, so sessions with the same view and rules get the
// same bytes (client prompt caches keep hitting).
func (v *View) SearchPage(key string, pin func(*Tool) bool, max int, extra ...json.RawMessage) *Page {
	ck := "search:" + strconv.Itoa(max) + "\x00" + key
	if p, hit := v.pages.Load(ck); hit {
		return p.(*Page)
	}
	size := 16
	var defs []json.RawMessage
	for _, t := range v.Tools {
		if max > 0 && len(defs) == max {
			break
		}
		if pin != nil && pin(t) {
			defs = append(defs, t.Def)
			size += len(t.Def) + 1
		}
	}
	defs = append(defs, extra...)
	for _, e := range extra {
		size += len(e) + 1
	}
	b := make([]byte, 0, size)
	b = append(b, `{"tools":[`...)
	for i, d := range defs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, d...)
	}
	b = append(b, "]}"...)
	p, _ := v.pages.LoadOrStore(ck, &Page{Bytes: b, Tokens: CountTokens(b)})
	return p.(*Page)
}

// FullListTokens is the size in tokens of the view's whole tools/list in full form, one
// page, counted once per view (auto's measure of a view: docs/sessions.md).
func (v *View) FullListTokens() int {
	p, _ := v.ListPageCounted("tools", false, "", 0)
	return p.Tokens
}
