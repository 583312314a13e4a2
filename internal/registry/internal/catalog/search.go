package catalog

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/mcpgw/mcpgw/internal/registry/internal/toolsearch"
)

// SearchUsual is how many of the usual tools SearchRanked returns at most when no word of
// the query matches.
const SearchUsual = toolsearch.UsualMax

// viewSearch is a view's search index, built on the first Search.
type viewSearch struct {
	once sync.Once
	ix   *toolsearch.Index
}

// Search returns up to k tools of the view best matching query, best first; none when no
// tool matches. The index is built once per view, on first use, never on the tools/call
// path.
func (v *View) Search(query string, k int) []*Tool {
	return v.tools(v.index().Search(query, k))
}

// SearchRanked is Search that returns candidates even when no tool matches (while the view
// has tools), and how sure the ranking is: "high", "medium" or "none" (nothing matched;
// see toolsearch.Index.RankOr). When not even a word's first letters match, the
// candidates are the first of usual's tools (indexes into v.Tools, best first; nil for
// none), else the view's first tool.
func (v *View) SearchRanked(query string, k int, usual func() []int) ([]*Tool, string) {
	hits, conf := v.index().RankOr(query, k, usual)
	return v.tools(hits), string(conf)
}

// index is the view's search index, built on first use.
func (v *View) index() *toolsearch.Index {
	v.search.once.Do(func() {
		docs := make([]toolsearch.Doc, len(v.Tools))
		for i, t := range v.Tools {
			docs[i] = searchDoc(t)
		}
		v.search.ix = toolsearch.New(docs)
	})
	return v.search.ix
}

// tools are the view's tools of hits, in their order; nil for none.
func (v *View) tools(hits []toolsearch.Hit) []*Tool {
	if len(hits) == 0 {
		return nil
	}
	out := make([]*Tool, len(hits))
	for i, h := range hits {
		out[i] = v.Tools[h.Doc]
	}
	return out
}

// searchDoc is what the index reads of a tool's definition: its exposed name, description,
// and its input properties' names (sorted: the JSON object has no order Go keeps) and
// descriptions. A definition that does not parse is searched by its name alone.
func searchDoc(t *Tool) toolsearch.Doc {
	var def struct {
		Description string `json:"description"`
		InputSchema struct {
			Properties map[string]struct {
				Description string `json:"description"`
			} `json:"properties"`
		} `json:"inputSchema"`
	}
	_ = json.Unmarshal(t.Def, &def)
	params := slices.Sorted(maps.Keys(def.InputSchema.Properties))
	var text strings.Builder
	for _, p := range params {
		if d := def.InputSchema.Properties[p].Description; d != "" {
			text.WriteString(d)
			text.WriteString("\n")
		}
	}
	return toolsearch.Doc{Name: t.Exposed, Description: def.Description, Params: params, ParamText: text.String(), ReadOnly: t.ReadOnly}
}
