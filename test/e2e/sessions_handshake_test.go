package e2e

// Full and thin handshakes (docs/sessions.md): the first tools/list of an (agent,
// conversation) for a view is full; later sessions of that conversation with the same view
// get the thin form, whose tools are all still there and callable by name; a thin call
// with bad arguments answers the full schema; mcpgw__describe_tools gives the full
// definitions; X-MCP-Handshake overrides; bytes are counted by form.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/registry"
)

// thinMaxRatio guards the thin list's size: at most 25% of the full list's bytes here (the
// token benchmark's target is 20% of the tokens on its medium catalogue).
const thinMaxRatio = 0.25

func TestHandshakeFullThin(t *testing.T) {
	needGatewayBin(t)
	everything := serverEverythingScript(t)
	fsScript := npmServerScript(t, "server-filesystem")
	memScript := npmServerScript(t, "server-memory")
	work := t.TempDir()
	allowed := filepath.Join(work, "allowed")
	if err := os.MkdirAll(allowed, 0o755); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, `
log: {level: info, format: text}
# auto serves full up to a high threshold here, so a conversation's first session is full
# and the next thin: what this test is about.
http: {page_size: 1000, auto: {full_max_tokens: 1000000, thin_max_tokens: 1000000}}
upstream: {call_timeout: 60s}
servers:
  everything: {type: stdio, command: {{node}}, args: [`+yamlQuote(everything)+`]}
  filesystem: {type: stdio, command: {{node}}, args: [`+yamlQuote(fsScript)+`, `+yamlQuote(allowed)+`]}
  memory:
    type: stdio
    command: {{node}}
    args: [`+yamlQuote(memScript)+`]
    env: {MEMORY_FILE_PATH: `+yamlQuote(filepath.Join(work, "memory.jsonl"))+`}
agents:
  a1: {servers: [everything, filesystem, memory]}
  a2: {servers: [everything, filesystem, memory], tools: {deny: ["memory__delete_*"]}}
tasks:
  t1: {enabled_mcp_servers: [everything, memory], agent: a1}
`)
	const describe = "mcpgw__describe_tools"
	id := func(kv ...string) map[string]string {
		h := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			h[kv[i]] = kv[i+1]
		}
		return h
	}
	bytesByForm := map[string]int{}
	sessionsByForm := map[string]int{}
	// open opens a session and lists its tools once; form is what the test expects it to
	// be served, for the metric totals below.
	open := func(form string, hdr map[string]string) (*sessRaw, []byte, sessList) {
		t.Helper()
		s := sessOpen(t, g.URL, hdr)
		raw, l := s.list(t)
		bytesByForm[form] += len(raw)
		sessionsByForm[form]++
		return s, raw, l
	}

	// --- The first session of (a1, c1): full.
	_, fullRaw, full := open("full", id("X-Agent-ID", "a1", "X-Conversation-ID", "c1"))
	fullDefs := hsDefsByName(t, full)
	for _, srv := range []string{"everything__", "filesystem__", "memory__"} {
		if hsWithPrefixCount(fullDefs, srv) == 0 {
			t.Fatalf("the full list has no %s tools: %v", srv, hsSortedNames(fullDefs))
		}
	}
	if _, ok := fullDefs[describe]; ok {
		t.Errorf("the full list offers %s", describe)
	}

	// --- A second session of the same conversation and view: thin.
	s2, thinRaw, thin := open("thin", id("X-Agent-ID", "a1", "X-Conversation-ID", "c1"))
	thinDefs := hsDefsByName(t, thin)
	// The figures docs/metrics.md quotes: the same lists in o200k_base tokens and bytes/4.
	fullTok, thinTok := registry.CountTokens(fullRaw), registry.CountTokens(thinRaw)
	t.Logf("tools/list tokens (%s): full %d (bytes/4: %d), thin %d (bytes/4: %d)", registry.TokenizerName, fullTok, len(fullRaw)/4, thinTok, len(thinRaw)/4)
	if thinTok <= 0 || thinTok >= fullTok {
		t.Errorf("thin list %d tokens, full %d", thinTok, fullTok)
	}
	ratio := float64(len(thinRaw)) / float64(len(fullRaw))
	t.Logf("tools/list of %d tools: full %d bytes, thin %d bytes (%d tools with %s): thin/full = %.3f (target <= %.2f)",
		len(fullDefs), len(fullRaw), len(thinRaw), len(thinDefs), describe, ratio, thinMaxRatio)
	t.Logf("full bytes by part: %s", hsPartSizes(full))
	t.Logf("thin bytes by part: %s", hsPartSizes(thin))
	if ratio > thinMaxRatio {
		t.Errorf("the thin list is %.1f%% of the full list's bytes (%d of %d), above the %.0f%% target; largest thin definitions: %s; annotations: %s",
			100*ratio, len(thinRaw), len(fullRaw), 100*thinMaxRatio, hsLargestDefs(thin, 5), hsAnnotationStats(thin, len(thinRaw), len(fullRaw)))
	}
	if string(thinRaw) == string(fullRaw) {
		t.Fatalf("the second session of conversation c1 got the full list again")
	}
	for name := range fullDefs {
		if _, ok := thinDefs[name]; !ok {
			t.Errorf("the thin list lacks %s", name)
		}
	}
	if _, ok := thinDefs[describe]; !ok {
		t.Errorf("the thin list does not offer %s", describe)
	}
	if len(thinDefs) != len(fullDefs)+1 {
		t.Errorf("the thin list has %d tools, want the full list's %d plus %s", len(thinDefs), len(fullDefs), describe)
	}
	for name, d := range thinDefs {
		if name == describe {
			continue
		}
		var td, fd map[string]any
		_ = json.Unmarshal(d, &td)
		_ = json.Unmarshal(fullDefs[name], &fd)
		if _, ok := td["outputSchema"]; ok {
			t.Errorf("thin %s keeps its output schema", name)
		}
		if tdesc, _ := td["description"].(string); len(tdesc) > 0 {
			fdesc, _ := fd["description"].(string)
			// The first sentence, cut with an ellipsis past 60 bytes.
			start := strings.TrimSuffix(strings.TrimSuffix(tdesc, "…"), ".")
			if len(start) > 60 || !strings.HasPrefix(strings.TrimSpace(fdesc), start) {
				t.Errorf("thin %s description %q is not the start of the full one %q", name, tdesc, fdesc)
			}
		}
		if hsSchemaHasKey(td["inputSchema"], "description") {
			t.Errorf("thin %s input schema keeps descriptions", name)
		}
	}

	// Schema-on-error first (before the session's own upstream instance exists), then a
	// call by name, then schema-on-error again with the instance running.
	badCall := func(t *testing.T, when, name string, args map[string]any) {
		t.Helper()
		text, isErr, a := s2.toolCall(t, name, args)
		if !isErr {
			t.Errorf("%s: %s with bad arguments %v in the thin session: no isError: %q", when, name, args, text)
			return
		}
		var res struct {
			StructuredContent struct {
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"structuredContent"`
		}
		_ = json.Unmarshal(a.Result, &res)
		want := hsInputSchemaOf(t, fullDefs[name])
		if !hsJSONEqual(res.StructuredContent.InputSchema, want) {
			t.Errorf("%s: %s schema-on-error: structuredContent.inputSchema is not the full schema\n got  %s\n want %s",
				when, name, res.StructuredContent.InputSchema, want)
		}
		// The text carries the full schema too (a model reads content, not structuredContent).
		var full map[string]any
		_ = json.Unmarshal(want, &full)
		for _, d := range hsSchemaDescriptions(full) {
			if !strings.Contains(text, d) {
				t.Errorf("%s: %s schema-on-error text lacks the full schema's %q:\n%s", when, name, d, text)
				break
			}
		}
	}
	// The session's GET stream tells when its view changes (its own instance re-listing).
	st2 := sessOpenStream(t, g.URL, s2.headers())
	if st2.Status != 200 {
		t.Fatalf("GET stream of the thin session: HTTP %d", st2.Status)
	}
	badCall(t, "before any call", "everything__echo", map[string]any{"message": 123})
	badCall(t, "before any call", "memory__create_entities", map[string]any{"entities": "not a list"})
	if text, isErr, _ := s2.toolCall(t, "everything__echo", map[string]any{"message": "thin"}); isErr || !strings.Contains(text, "Echo: thin") {
		t.Errorf("everything__echo by name in the thin session: isError=%v %q", isErr, text)
	}
	if text, isErr, _ := s2.toolCall(t, "filesystem__list_allowed_directories", map[string]any{}); isErr || !strings.Contains(text, filepath.Base(allowed)) {
		t.Errorf("filesystem__list_allowed_directories in the thin session: isError=%v %q", isErr, text)
	}
	// The session has still seen only the thin definitions (it has not listed again), so
	// schema-on-error must still answer now that its own everything instance runs.
	changed, events := st2.wait("notifications/tools/list_changed", 5*time.Second)
	t.Logf("thin session's view changed once its own instance ran: %v (events %q)", changed, events)
	t.Run("SchemaOnErrorWithOwnInstance", func(t *testing.T) {
		badCall(t, "with its instance running", "everything__echo", map[string]any{})
	})

	// mcpgw__describe_tools: the full definitions, as the full list has them.
	names := []string{"everything__echo", "filesystem__read_text_file", "memory__create_entities"}
	text, isErr, a := s2.toolCall(t, describe, map[string]any{"names": names})
	if isErr {
		t.Errorf("%s: isError: %s", describe, text)
	}
	var desc struct {
		StructuredContent struct {
			Tools []json.RawMessage `json:"tools"`
		} `json:"structuredContent"`
	}
	_ = json.Unmarshal(a.Result, &desc)
	if len(desc.StructuredContent.Tools) != len(names) {
		t.Errorf("%s returned %d definitions for %v", describe, len(desc.StructuredContent.Tools), names)
	}
	for _, d := range desc.StructuredContent.Tools {
		n := sessToolName(d)
		if !hsJSONEqual(d, fullDefs[n]) {
			t.Errorf("%s %s differs from the full list's definition\n got  %s\n want %s", describe, n, d, fullDefs[n])
		}
	}
	var fromText struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal([]byte(hsFirstLine(text)), &fromText); err != nil || len(fromText.Tools) != len(names) {
		t.Errorf("%s text content is not the JSON of %d definitions (%v): %.300s", describe, len(names), err, text)
	}

	// --- Another conversation: full again.
	_, raw3, _ := open("full", id("X-Agent-ID", "a1", "X-Conversation-ID", "c2"))
	if string(raw3) != string(fullRaw) {
		t.Errorf("the first session of conversation c2 is not the full list (%d bytes, full %d)", len(raw3), len(fullRaw))
	}

	// --- A changed view: another agent with a deny glob, and the same conversation id.
	_, raw4, l4 := open("full", id("X-Agent-ID", "a2", "X-Conversation-ID", "c1"))
	hsCheckFullOf(t, "agent a2 (deny memory__delete_*)", raw4, l4, fullDefs)
	if d := hsDefsByName(t, l4); hsWithPrefixCount(d, "memory__delete_") != 0 {
		t.Errorf("agent a2 sees memory__delete_* despite its deny glob")
	}
	// The same agent and conversation in a task with fewer servers: a new view, full;
	// a second session of that view: thin.
	_, raw5, l5 := open("full", id("X-Agent-ID", "a1", "X-Conversation-ID", "c1", "X-Task-ID", "t1"))
	hsCheckFullOf(t, "a1/c1 in task t1", raw5, l5, fullDefs)
	if d := hsDefsByName(t, l5); hsWithPrefixCount(d, "filesystem__") != 0 {
		t.Errorf("task t1 (everything, memory) sees filesystem tools")
	}
	_, raw6, l6 := open("thin", id("X-Agent-ID", "a1", "X-Conversation-ID", "c1", "X-Task-ID", "t1"))
	if d := hsDefsByName(t, l6); d[describe] == nil || string(raw6) == string(raw5) {
		t.Errorf("the second session of a1/c1 in task t1 did not get the thin list (%d bytes, full %d)", len(raw6), len(raw5))
	}

	// --- X-MCP-Handshake overrides.
	_, raw7, _ := open("full", id("X-Agent-ID", "a1", "X-Conversation-ID", "c1", "X-MCP-Handshake", "full"))
	if string(raw7) != string(fullRaw) {
		t.Errorf("X-MCP-Handshake: full did not give the full list (%d bytes, full %d)", len(raw7), len(fullRaw))
	}
	_, raw8, _ := open("thin", id("X-Agent-ID", "a1", "X-Conversation-ID", "c3", "X-MCP-Handshake", "thin"))
	if string(raw8) != string(thinRaw) {
		t.Errorf("X-MCP-Handshake: thin on a new conversation did not give the thin list (%d bytes, thin %d)", len(raw8), len(thinRaw))
	}
	// c3 never received the full definitions (its only session forced thin): its next
	// automatic session must get them.
	_, raw9, _ := open("full", id("X-Agent-ID", "a1", "X-Conversation-ID", "c3"))
	if string(raw9) != string(fullRaw) {
		t.Errorf("conversation c3, whose only list was a forced thin one, got no full list on its next session (%d bytes)", len(raw9))
	}

	// --- Metrics by form.
	m, err := getMetrics(g)
	if err != nil {
		t.Fatal(err)
	}
	for _, form := range []string{"full", "thin"} {
		hs, _ := metricValue(m, "mcpgw_handshakes_total", map[string]string{"form": form})
		b, _ := metricSum(m, "mcpgw_tools_list_bytes_total", map[string]string{"form": form})
		tok, _ := metricSum(m, "mcpgw_tools_list_estimated_tokens_total", map[string]string{"form": form})
		t.Logf("metrics form=%s: handshakes %v, list bytes %v, estimated tokens %v", form, hs, b, tok)
		if int(hs) != sessionsByForm[form] {
			t.Errorf("mcpgw_handshakes_total{form=%q} = %v, want %d", form, hs, sessionsByForm[form])
		}
		if int(b) != bytesByForm[form] {
			t.Errorf("mcpgw_tools_list_bytes_total{form=%q} = %v, want %d (the bytes the sessions received)", form, b, bytesByForm[form])
		}
		if tok <= 0 || tok > b {
			t.Errorf("mcpgw_tools_list_estimated_tokens_total{form=%q} = %v for %v bytes", form, tok, b)
		}
	}
}

// hsDefsByName indexes a list's tool definitions by name (a duplicate fails the test).
func hsDefsByName(t *testing.T, l sessList) map[string]json.RawMessage {
	t.Helper()
	out := map[string]json.RawMessage{}
	for _, d := range l.Tools {
		n := sessToolName(d)
		if _, dup := out[n]; dup {
			t.Errorf("tool %s listed twice", n)
		}
		out[n] = d
	}
	return out
}

// hsCheckFullOf asserts that a list is in the full form: no describe tool, and every
// definition as a1's full list has it.
func hsCheckFullOf(t *testing.T, what string, raw []byte, l sessList, fullDefs map[string]json.RawMessage) {
	t.Helper()
	defs := hsDefsByName(t, l)
	if _, ok := defs["mcpgw__describe_tools"]; ok {
		t.Errorf("%s: got the thin list (%d bytes), want full for a changed view", what, len(raw))
		return
	}
	for n, d := range defs {
		if f, ok := fullDefs[n]; !ok || !hsJSONEqual(d, f) {
			t.Errorf("%s: %s is not its full definition", what, n)
		}
	}
}

func hsWithPrefixCount(defs map[string]json.RawMessage, prefix string) int {
	n := 0
	for name := range defs {
		if strings.HasPrefix(name, prefix) {
			n++
		}
	}
	return n
}

func hsSortedNames(defs map[string]json.RawMessage) []string {
	out := make([]string, 0, len(defs))
	for n := range defs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func hsInputSchemaOf(t *testing.T, def json.RawMessage) json.RawMessage {
	t.Helper()
	var d struct {
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if err := json.Unmarshal(def, &d); err != nil || len(d.InputSchema) == 0 {
		t.Fatalf("no input schema in %s", def)
	}
	return d.InputSchema
}

func hsJSONEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// hsSchemaHasKey reports whether a schema (or any schema below it) has keyword key. A
// property named key is not a keyword.
func hsSchemaHasKey(v any, key string) bool {
	m, ok := v.(map[string]any)
	if !ok {
		if l, ok := v.([]any); ok {
			for _, e := range l {
				if hsSchemaHasKey(e, key) {
					return true
				}
			}
		}
		return false
	}
	for k, val := range m {
		if k == key {
			return true
		}
		if k == "properties" || k == "$defs" || k == "definitions" {
			if props, ok := val.(map[string]any); ok {
				for _, p := range props {
					if hsSchemaHasKey(p, key) {
						return true
					}
				}
			}
			continue
		}
		if hsSchemaHasKey(val, key) {
			return true
		}
	}
	return false
}

// hsSchemaDescriptions lists the description strings in a schema (what the thin form drops).
func hsSchemaDescriptions(v any) []string {
	var out []string
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		if depth > 20 {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			if d, ok := x["description"].(string); ok && d != "" {
				out = append(out, d)
			}
			for k, val := range x {
				if k != "description" {
					walk(val, depth+1)
				}
			}
		case []any:
			for _, e := range x {
				walk(e, depth+1)
			}
		}
	}
	walk(v, 0)
	sort.Strings(out)
	return out
}

// hsPartSizes sums the bytes of each member of a list's tool definitions.
func hsPartSizes(l sessList) string {
	sizes := map[string]int{}
	for _, d := range l.Tools {
		var m map[string]json.RawMessage
		if json.Unmarshal(d, &m) != nil {
			continue
		}
		for k, v := range m {
			sizes[k] += len(k) + 3 + len(v)
		}
	}
	keys := make([]string, 0, len(sizes))
	for k := range sizes {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return sizes[b] - sizes[a] })
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s %d; ", k, sizes[k])
	}
	return b.String()
}

// hsLargestDefs names the n largest definitions of a list with their sizes.
func hsLargestDefs(l sessList, n int) string {
	type sz struct {
		name string
		size int
	}
	var all []sz
	for _, d := range l.Tools {
		all = append(all, sz{sessToolName(d), len(d)})
	}
	slices.SortFunc(all, func(a, b sz) int { return b.size - a.size })
	var b strings.Builder
	for i := 0; i < n && i < len(all); i++ {
		fmt.Fprintf(&b, "%s %d; ", all[i].name, all[i].size)
	}
	return b.String()
}

func hsFirstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// hsAnnotationStats says how many bytes the thin list spends on annotation hints, and how
// many of those only restate the spec's defaults (readOnlyHint false, destructiveHint
// true, idempotentHint false, openWorldHint true).
func hsAnnotationStats(l sessList, thinBytes, fullBytes int) string {
	defaults := map[string]bool{"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": true}
	total, atDefault, tools := 0, 0, 0
	for _, d := range l.Tools {
		var m struct {
			Annotations map[string]json.RawMessage `json:"annotations"`
		}
		if json.Unmarshal(d, &m) != nil || m.Annotations == nil {
			continue
		}
		tools++
		b, _ := json.Marshal(m.Annotations)
		total += len(`,"annotations":`) + len(b)
		for k, v := range m.Annotations {
			var val bool
			if def, ok := defaults[k]; ok && json.Unmarshal(v, &val) == nil && val == def {
				atDefault += len(k) + 3 + len(v) + 1
			}
		}
	}
	return fmt.Sprintf("%d tools carry %d bytes of annotations, %d of them restating defaults; without annotations the thin list would be %.1f%% of full",
		tools, total, atDefault, 100*float64(thinBytes-total)/float64(fullBytes))
}
