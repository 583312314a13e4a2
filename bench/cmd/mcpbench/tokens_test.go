package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func TestUnlistedQueries(t *testing.T) {
	outs := []*catalogueOutcome{{Set: "s", Names: []string{"a__x", "a__y"}}, {Set: "s", Names: []string{"b__z"}}, {Set: "other", Names: []string{"d__v"}}}
	qs := []tokenQuery{{Query: "x", Tool: "a__x"}, {Query: "z", Tool: "b__z"}, {Query: "w", Tool: "c__w"}, {Query: "v", Tool: "d__v"}}
	if got := unlistedQueries(qs, "s", outs); !slices.Equal(got, []string{"c__w", "d__v"}) {
		t.Fatalf("unlistedQueries = %v", got)
	}
}

// The query sets in the repo: at least 50 queries in the tuned set and 40 in each new
// one, each naming one tool once in a form a catalogue can list.
func TestQuerySetShape(t *testing.T) {
	for _, c := range tokenCatalogues(false) {
		t.Run(c.Name, func(t *testing.T) { querySetShape(t, "../../../"+c.querySet(), c.QuerySet == "") })
	}
}

func querySetShape(t *testing.T, path string, tuned bool) {
	qs, err := loadQueries(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[bool]int{true: 50, false: 40}[tuned]; len(qs) < want {
		t.Fatalf("%d queries, want at least %d", len(qs), want)
	}
	seen := map[string]bool{}
	for _, q := range qs {
		if strings.TrimSpace(q.Query) == "" || q.Tool == "" {
			t.Errorf("empty query or tool: %+v", q)
		}
		if seen[q.Query] {
			t.Errorf("query %q twice", q.Query)
		}
		seen[q.Query] = true
		if strings.Contains(q.Query, q.Tool) {
			t.Errorf("query %q names its tool", q.Query)
		}
	}
}

// fakeGateway answers as mcpgw does for T1: a list per form asked at initialize (the
// search form only when offerSearch), event-stream answers to tools/list, and a search
// tool that returns the tools whose own name the query contains.
type fakeGateway struct {
	mu          sync.Mutex
	forms       map[string]string // session id → X-Mcp-Handshake
	tools       []string
	offerSearch bool
}

func (f *fakeGateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name      string `json:"name"`
			Arguments struct {
				Query string `json:"query"`
			} `json:"arguments"`
		} `json:"params"`
	}
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	answer := func(result any) {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: \n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\nevent: message\ndata: %s\n\n", b)
	}
	switch m.Method {
	case "initialize":
		id := strconv.Itoa(len(f.forms) + 1)
		f.forms[id] = r.Header.Get("X-Mcp-Handshake")
		w.Header().Set("Mcp-Session-Id", id)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID)
	case "notifications/initialized":
		w.WriteHeader(http.StatusAccepted)
	case "tools/list":
		names := f.tools
		switch f.forms[r.Header.Get("Mcp-Session-Id")] {
		case formSearch:
			if f.offerSearch {
				names = []string{searchToolName}
			}
		case formThin:
			names = append(slices.Clone(f.tools), describeToolName)
		}
		var tools []map[string]string
		for _, n := range names {
			tools = append(tools, map[string]string{"name": n, "description": "the " + n + " tool"})
		}
		answer(map[string]any{"tools": tools})
	case "tools/call":
		if m.Params.Name == searchToolName {
			var found []map[string]string
			for _, n := range f.tools {
				if _, own, _ := strings.Cut(n, "__"); strings.Contains(m.Params.Arguments.Query, own) {
					found = append(found, map[string]string{"name": n})
				}
			}
			answer(map[string]any{"content": []any{}, "structuredContent": map[string]any{"tools": found}})
			return
		}
		if !slices.Contains(f.tools, m.Params.Name) {
			answer(map[string]any{"content": []any{map[string]string{"type": "text", "text": "no such tool"}}, "isError": true})
			return
		}
		answer(map[string]any{"content": []any{map[string]string{"type": "text", "text": "done"}}})
	}
}

func fakeTarget(t *testing.T, offerSearch bool) *target {
	t.Helper()
	srv := httptest.NewServer(&fakeGateway{forms: map[string]string{}, tools: []string{"srv__echo", "srv__sum"}, offerSearch: offerSearch})
	t.Cleanup(srv.Close)
	return newTarget("fake", srv.URL+"/mcp", "", 1)
}

func TestRunTokenForm(t *testing.T) {
	tasks := []loopTask{
		task("please echo this", "srv__echo", `{"message":"x"}`),
		task("add two numbers", "srv__sum", `{"a":1,"b":2}`),
		task("call a tool that is gone", "srv__gone", `{}`),
	}
	count := func(b []byte) int { return len(b) } // bytes stand in for tokens
	ctx := context.Background()
	gw := fakeTarget(t, true)

	full, names, err := runTokenForm(ctx, gw, formFull, tasks, count)
	if err != nil {
		t.Fatal(err)
	}
	if full.Served != formFull || full.Tools != 2 || full.Pages != 1 || !slices.Equal(names, []string{"srv__echo", "srv__sum"}) {
		t.Fatalf("full: %+v, names %v", full, names)
	}
	if full.ListTokens < 50 || full.Loop.Turns != 3 || len(full.Failed) != 1 || !strings.Contains(full.Failed[0], "srv__gone") {
		t.Fatalf("full: %+v", full)
	}
	thin, _, err := runTokenForm(ctx, gw, formThin, tasks, count)
	if err != nil {
		t.Fatal(err)
	}
	if thin.Served != formThin || thin.Tools != 3 {
		t.Fatalf("thin: %+v", thin)
	}
	search, _, err := runTokenForm(ctx, gw, formSearch, tasks, count)
	if err != nil {
		t.Fatal(err)
	}
	// Only "please echo this" names its tool's own name: one search of three finds it.
	if search.Served != formSearch || search.Loop.Turns != 6 || search.Found != 1 || search.ListTokens >= full.ListTokens {
		t.Fatalf("search: %+v", search)
	}
	if search.Loop.Carried <= full.Loop.Carried {
		t.Fatalf("search carries its calls and results too: %d vs full's %d", search.Loop.Carried, full.Loop.Carried)
	}

	none, _, err := runTokenForm(ctx, fakeTarget(t, false), formSearch, tasks, count)
	if err != nil {
		t.Fatal(err)
	}
	if none.Served != notOffered || none.Loop.Turns != 0 {
		t.Fatalf("search not offered: %+v", none)
	}
}

func TestSearchHitRate(t *testing.T) {
	out := &catalogueOutcome{Name: "fake", Names: []string{"srv__echo", "srv__sum"}}
	qs := []tokenQuery{
		{Query: "echo it back", Tool: "srv__echo"},
		{Query: "add numbers", Tool: "srv__sum"},        // the fake finds nothing: a miss
		{Query: "other catalogue", Tool: "other__tool"}, // not this catalogue's: skipped
	}
	if err := searchHitRate(context.Background(), fakeTarget(t, true), out, qs, 0); err != nil {
		t.Fatal(err)
	}
	if out.Queries != 2 || out.Hits != 1 || len(out.Misses) != 1 || !strings.Contains(out.Misses[0], "srv__sum") {
		t.Fatalf("hit rate: %+v", out)
	}
	capped := &catalogueOutcome{Name: "fake", Names: out.Names}
	if err := searchHitRate(context.Background(), fakeTarget(t, true), capped, qs, 1); err != nil {
		t.Fatal(err)
	}
	if capped.Queries != 1 {
		t.Fatalf("maxQueries 1 asked %d", capped.Queries)
	}
}
