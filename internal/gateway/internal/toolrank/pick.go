package toolrank

import (
	"encoding/json"

	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/store"
)

// Pick chooses at most max of a view's tools for a capped client's list: first the tools
// pin keeps, in view order; then the ranked ones (ranking: store.ToolUseKey keys, most used
// first) that the view holds; then the rest in view order, so that a client with no usage
// yet (a cold start, a stateless caller) still gets tools, not only a search box. It
// reports the chosen by index into tools.
func Pick(tools []*registry.Tool, pin func(*registry.Tool) bool, ranking []string, max int) []bool {
	chosen := make([]bool, len(tools))
	n := 0
	if max <= 0 {
		return chosen
	}
	if pin != nil {
		for i, t := range tools {
			if n == max {
				return chosen
			}
			if pin(t) {
				chosen[i] = true
				n++
			}
		}
	}
	if len(ranking) > 0 && n < max {
		at := keyIndex(tools)
		for _, k := range ranking {
			if n == max {
				return chosen
			}
			if i, ok := at[k]; ok && !chosen[i] {
				chosen[i] = true
				n++
			}
		}
	}
	for i := range tools {
		if n == max {
			break
		}
		if !chosen[i] {
			chosen[i] = true
			n++
		}
	}
	return chosen
}

// Page is the tools/list result of the chosen tools' definitions, in view order, then
// extra (the gateway's own tools), in one page.
func Page(tools []*registry.Tool, chosen []bool, extra ...json.RawMessage) *registry.Page {
	size := 16
	for i, t := range tools {
		if chosen[i] {
			size += len(t.Def) + 1
		}
	}
	for _, e := range extra {
		size += len(e) + 1
	}
	b := make([]byte, 0, size)
	b = append(b, `{"tools":[`...)
	first := true
	add := func(d json.RawMessage) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, d...)
	}
	for i, t := range tools {
		if chosen[i] {
			add(t.Def)
		}
	}
	for _, e := range extra {
		add(e)
	}
	b = append(b, "]}"...)
	return &registry.Page{Bytes: b, Tokens: registry.CountTokens(b)}
}

// Usual is the indexes in tools of the first max keys of ranking (store.ToolUseKey) that
// tools holds, most used first: the candidates a search whose words match nothing answers
// with.
func Usual(tools []*registry.Tool, ranking []string, max int) []int {
	if len(ranking) == 0 || max <= 0 {
		return nil
	}
	at := keyIndex(tools)
	var out []int
	for _, k := range ranking {
		if len(out) == max {
			break
		}
		if i, ok := at[k]; ok {
			out = append(out, i)
		}
	}
	return out
}

// keyIndex maps each tool's usage key (store.ToolUseKey) to its index in tools.
func keyIndex(tools []*registry.Tool) map[string]int {
	at := make(map[string]int, len(tools))
	for i, t := range tools {
		at[store.ToolUseKey(t.Server, t.Name)] = i
	}
	return at
}
