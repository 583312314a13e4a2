// Package listform decides which form of tools/list a session gets (full, thin or search)
// and builds the gateway's own list tools, describe_tools and search_tools, and their results.
//
// The forms (docs/sessions.md, "List forms"):
//   - full: every tool's definition as its upstream wrote it;
//   - thin: every tool, each cut to its name, first sentence and a reduced input schema
//     (a schema the reduction would misstate, with $defs, composition or conditionals,
//     whole less its free text), plus describe_tools for the whole definitions;
//   - search: the pinned tools in full plus search_tools, which returns the whole definitions
//     of the tools that best match a query. Every tool of the view stays callable by its real
//     name in every form, listed or not.
package listform

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// The forms, and auto, which asks Choose to pick one.
const (
	Full   = "full"
	Thin   = "thin"
	Search = "search"
	Auto   = "auto"
)

// Inputs are what Choose decides a session's form from.
type Inputs struct {
	// Mode is the form asked for (the session's header, else its agent's setting, else the
	// gateway's): full, thin, search, or auto ("" counts as auto).
	Mode string
	// FullTokens is the size of the view's whole tools/list in full form; Tools its count.
	FullTokens int
	Tools      int
	// MaxTools is the most tools the session's client takes (0: no cap).
	MaxTools int
	// FullMax and ThinMax are auto's thresholds: full up to FullMax tokens, thin up to
	// ThinMax, search above.
	FullMax, ThinMax int
	// Repeat reports whether the session's conversation was served this view in full
	// before (called only when auto would serve full; nil: never).
	Repeat func() bool
}

// Choose picks a session's form. A client's tool cap wins over everything: a view with as
// many tools as the client takes, or more, is served in search form, whatever was asked, since the
// client would otherwise drop tools it was told about. Otherwise an explicit form is kept,
// and auto picks by the size of the full list: full (thin for a conversation that saw this
// view in full before) up to FullMax tokens, thin up to ThinMax, search above.
func Choose(in Inputs) string {
	// A thin list adds describe_tools: a view of MaxTools tools would pass the cap by one.
	if in.MaxTools > 0 && in.Tools >= in.MaxTools {
		return Search
	}
	switch in.Mode {
	case Full, Thin, Search:
		return in.Mode
	}
	switch {
	case in.FullTokens <= in.FullMax:
		if in.Repeat != nil && in.Repeat() {
			return Thin
		}
		return Full
	case in.FullTokens <= in.ThinMax:
		return Thin
	default:
		return Search
	}
}

// The bounds of a search_tools call.
const (
	// MaxResults is the most definitions one query returns.
	MaxResults = 20
	// MaxQueryBytes bounds a query: longer ones are refused, not cut.
	MaxQueryBytes = 1024
	// MaxDescribe bounds the names of one describe_tools call (each named once in the
	// answer however often it is asked for), so one call cannot multiply a large
	// definition into an answer of any size.
	MaxDescribe = 50
)

// DescribeTool is the definition of the thin form's describe_tools, named name.
func DescribeTool(name string) json.RawMessage {
	def, _ := json.Marshal(map[string]any{
		"name":        name,
		"description": "Full definitions of the named tools. This list is short: first sentences, required arguments only.",
		"inputSchema": map[string]any{
			"type":       "object",
			"properties": map[string]any{"names": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}},
			"required":   []string{"names"},
		},
		"annotations": map[string]any{"readOnlyHint": true},
	})
	return def
}

// SearchTool is the definition of the search form's search_tools, named name. It names no
// default limit: that is http.search.results, which a reload may change.
func SearchTool(name string) json.RawMessage { return SearchToolWith(name, "") }

// SearchToolWith is SearchTool whose description ends with the map of the catalogue it
// searches (catMap, the view's Map: docs/sessions.md, "The catalogue map"); "" adds none.
func SearchToolWith(name, catMap string) json.RawMessage {
	desc := fmt.Sprintf("Finds tools by what they do: returns the full definitions of the tools that best match the query, best first. "+
		"This list shows only a few of the tools you can use; call a found tool directly by its name. "+
		"Query in plain words (e.g. \"read a file\", \"create order\"); limit is how many (at most %d).", MaxResults)
	if catMap != "" {
		desc += "\nThe catalogue (server: its groups of tools), whose words make good queries: " + catMap
	}
	def, _ := json.Marshal(map[string]any{
		"name":        name,
		"description": desc,
		"inputSchema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"query": map[string]any{"type": "string", "description": "what the tool should do, in plain words"},
				"limit": map[string]any{"type": "integer", "minimum": 1, "maximum": MaxResults},
			},
			"required": []string{"query"},
		},
		"annotations": map[string]any{"readOnlyHint": true},
	})
	return def
}

// DescribeResult is describe_tools' result over view v for the call's arguments.
func DescribeResult(v *registry.View, args json.RawMessage) json.RawMessage {
	var a struct {
		Names []string `json:"names"`
	}
	if err := json.Unmarshal(args, &a); err != nil || len(a.Names) == 0 {
		return ToolError("describe_tools needs {\"names\": [\"tool\", …]}")
	}
	if len(a.Names) > MaxDescribe {
		return ToolError(fmt.Sprintf("describe_tools takes at most %d names at a time", MaxDescribe))
	}
	defs := []json.RawMessage{}
	var missing, held []string
	seen := map[string]bool{}
	for _, n := range a.Names {
		if seen[n] {
			continue
		}
		seen[n] = true
		switch t := v.Tool(n); {
		case t != nil:
			defs = append(defs, t.Def)
		case v.Held(n):
			held = append(held, n)
		default:
			missing = append(missing, n)
		}
	}
	var extra []string
	if len(missing) > 0 {
		extra = append(extra, fmt.Sprintf("unknown tools: %v", missing))
	}
	if len(held) > 0 {
		extra = append(extra, fmt.Sprintf("held until an admin approves their changed or new definitions: %v", held))
	}
	return toolsResult(defs, strings.Join(extra, "; "))
}

// searchArgs are a search_tools call's arguments.
type searchArgs struct {
	query string
	limit int
}

// errSearchArgs is the refusal of arguments search_tools cannot read at all.
const errSearchArgs = searchArgsError(`search_tools needs {"query": "what the tool should do"} and, optionally, "limit": 1..20`)

// searchArgsError is a constant error.
type searchArgsError string

func (e searchArgsError) Error() string { return string(e) }

// readSearchArgs reads search_tools' arguments strictly: exact-case members, none twice,
// none unknown, a non-empty query of valid UTF-8 within MaxQueryBytes, a whole limit in
// 1..MaxResults.
func readSearchArgs(args json.RawMessage, results int) (searchArgs, error) {
	a := searchArgs{limit: results}
	seenQuery := false
	err := wire.StrictMembers(args, func(k, v []byte) error {
		switch string(k) {
		case "query":
			q, err := wire.StrictString(v)
			if err != nil {
				return errSearchArgs
			}
			a.query, seenQuery = q, true
		case "limit":
			var n float64
			if json.Unmarshal(v, &n) != nil || n != float64(int(n)) || n < 1 || n > MaxResults {
				return fmt.Errorf("search_tools: limit must be a whole number from 1 to %d", MaxResults)
			}
			a.limit = int(n)
		default:
			return fmt.Errorf("search_tools: unknown argument %q (it takes query and limit)", string(k))
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, wire.ErrDuplicateMember) {
			return a, errors.New("search_tools: an argument is given more than once")
		}
		if errors.Is(err, errSearchArgs) || !strings.HasPrefix(err.Error(), "search_tools:") {
			return a, errSearchArgs
		}
		return a, err
	}
	if !seenQuery || strings.TrimSpace(a.query) == "" {
		return a, errSearchArgs
	}
	if len(a.query) > MaxQueryBytes || !utf8.ValidString(a.query) {
		return a, fmt.Errorf("search_tools: the query is longer than %d bytes", MaxQueryBytes)
	}
	return a, nil
}

// SearchResult is search_tools' result over view v for the call's arguments; results is
// the number of definitions returned when the call gives no limit, and usual, when not
// nil, the view's tools (indexes into v.Tools) the caller uses most, best first: the
// candidates when no word of the query matches (registry.View.SearchRanked). It also
// returns the names found, best first, for the caller's log.
func SearchResult(v *registry.View, args json.RawMessage, results int, usual func() []int) (json.RawMessage, []string) {
	a, err := readSearchArgs(args, results)
	if err != nil {
		return ToolError(err.Error()), nil
	}
	found, confidence := v.SearchRanked(a.query, a.limit, usual)
	defs := make([]json.RawMessage, 0, len(found))
	names := make([]string, 0, len(found))
	for _, t := range found {
		defs = append(defs, t.Def)
		names = append(names, t.Exposed)
	}
	return searchResult(defs, confidence), names
}

// searchResult is search_tools' result: the definitions found, how sure the ranking is
// (structuredContent.confidence), and for the model a line saying so when it is not sure.
func searchResult(defs []json.RawMessage, confidence string) json.RawMessage {
	body, _ := json.Marshal(map[string]any{"tools": defs, "confidence": confidence})
	content := []map[string]string{{"type": "text", "text": string(body)}}
	switch {
	case len(defs) == 0:
		content = append(content, map[string]string{"type": "text", "text": "no tool is available to this session"})
	case confidence == "none":
		content = append(content, map[string]string{"type": "text", "text": "no tool matches the query; these are candidates (tools sharing a word's first letters, else the ones this agent uses most). Try other words, or the catalogue's own nouns from this tool's description"})
	}
	b, _ := json.Marshal(map[string]any{
		"content":           content,
		"structuredContent": map[string]any{"tools": defs, "confidence": confidence},
	})
	return b
}

// toolsResult is a tool result listing defs, as text for the model and as structured
// content, with an optional note as a second text block.
func toolsResult(defs []json.RawMessage, note string) json.RawMessage {
	body, _ := json.Marshal(map[string]any{"tools": defs})
	content := []map[string]string{{"type": "text", "text": string(body)}}
	if note != "" {
		content = append(content, map[string]string{"type": "text", "text": note})
	}
	b, _ := json.Marshal(map[string]any{
		"content":           content,
		"structuredContent": map[string]any{"tools": defs},
	})
	return b
}

// ToolError is a tool result that reports a gateway-side failure to the model.
func ToolError(text string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{
		"content": []map[string]string{{"type": "text", "text": text}},
		"isError": true,
	})
	return b
}
