package listform

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestChoose(t *testing.T) {
	yes := func() bool { return true }
	no := func() bool { return false }
	for _, c := range []struct {
		name string
		in   Inputs
		want string
	}{
		{"explicit full", Inputs{Mode: Full, FullTokens: 1e6, FullMax: 10, ThinMax: 20}, Full},
		{"explicit thin", Inputs{Mode: Thin, FullTokens: 1, FullMax: 10, ThinMax: 20}, Thin},
		{"explicit search", Inputs{Mode: Search, FullTokens: 1, FullMax: 10, ThinMax: 20}, Search},
		{"auto small first", Inputs{Mode: Auto, FullTokens: 10, FullMax: 10, ThinMax: 20, Repeat: no}, Full},
		{"auto small repeat", Inputs{Mode: Auto, FullTokens: 10, FullMax: 10, ThinMax: 20, Repeat: yes}, Thin},
		{"empty mode is auto", Inputs{FullTokens: 5, FullMax: 10, ThinMax: 20}, Full},
		{"auto medium", Inputs{Mode: Auto, FullTokens: 11, FullMax: 10, ThinMax: 20, Repeat: yes}, Thin},
		{"auto large", Inputs{Mode: Auto, FullTokens: 21, FullMax: 10, ThinMax: 20}, Search},
		{"cap beats full", Inputs{Mode: Full, Tools: 41, MaxTools: 40}, Search},
		{"cap beats auto", Inputs{Mode: Auto, Tools: 41, MaxTools: 40, FullTokens: 1, FullMax: 10}, Search},
		{"at the cap (a thin list adds describe_tools)", Inputs{Mode: Thin, Tools: 40, MaxTools: 40}, Search},
		{"under the cap", Inputs{Mode: Full, Tools: 39, MaxTools: 40}, Full},
	} {
		if got := Choose(c.in); got != c.want {
			t.Errorf("%s: Choose = %s, want %s", c.name, got, c.want)
		}
	}
}

// Repeat records a conversation's full list: Choose must not call it unless auto would
// serve full.
func TestChooseAsksRepeatOnlyForFull(t *testing.T) {
	called := 0
	rep := func() bool { called++; return false }
	Choose(Inputs{Mode: Auto, FullTokens: 50, FullMax: 10, ThinMax: 20, Repeat: rep})
	Choose(Inputs{Mode: Thin, Repeat: rep})
	Choose(Inputs{Mode: Auto, Tools: 9, MaxTools: 3, Repeat: rep})
	if called != 0 {
		t.Fatalf("Repeat called %d times for lists auto does not serve in full", called)
	}
	Choose(Inputs{Mode: Auto, FullTokens: 5, FullMax: 10, ThinMax: 20, Repeat: rep})
	if called != 1 {
		t.Fatalf("Repeat called %d times for a small view, want 1", called)
	}
}

func TestReadSearchArgs(t *testing.T) {
	for _, c := range []struct {
		args    string
		query   string
		limit   int
		wantErr string
	}{
		{`{"query":"read a file"}`, "read a file", 5, ""},
		{`{"query":"x","limit":3}`, "x", 3, ""},
		{`{"limit":20,"query":"x"}`, "x", 20, ""},
		{`{"query":"x","limit":0}`, "", 0, "limit must be"},
		{`{"query":"x","limit":21}`, "", 0, "limit must be"},
		{`{"query":"x","limit":2.5}`, "", 0, "limit must be"},
		{`{"query":"x","limit":"3"}`, "", 0, "limit must be"},
		{`{"query":"  "}`, "", 0, "search_tools needs"},
		{`{}`, "", 0, "search_tools needs"},
		{`{"query":3}`, "", 0, "search_tools needs"},
		{`{"Query":"x"}`, "", 0, `unknown argument "Query"`},
		{`{"query":"x","query":"y"}`, "", 0, "more than once"},
		{`[1]`, "", 0, "search_tools needs"},
		{`{"query":"x"`, "", 0, "search_tools needs"},
		{`{"query":"` + strings.Repeat("a", MaxQueryBytes+1) + `"}`, "", 0, "longer than"},
		{`{"query":"x","extra":1}`, "", 0, `unknown argument "extra"`},
	} {
		a, err := readSearchArgs(json.RawMessage(c.args), 5)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%.60s: err = %v, want %q", c.args, err, c.wantErr)
			}
			continue
		}
		if err != nil || a.query != c.query || a.limit != c.limit {
			t.Errorf("%.60s: got %+v, %v; want query %q limit %d", c.args, a, err, c.query, c.limit)
		}
	}
}

func TestOwnToolDefsAreValid(t *testing.T) {
	for _, def := range []json.RawMessage{DescribeTool("mcpgw__describe_tools"), SearchTool("mcpgw__search_tools")} {
		var d struct {
			Name        string         `json:"name"`
			Description string         `json:"description"`
			InputSchema map[string]any `json:"inputSchema"`
		}
		if err := json.Unmarshal(def, &d); err != nil || d.Name == "" || d.Description == "" || d.InputSchema["type"] != "object" {
			t.Errorf("tool definition %s: %+v, %v", def, d, err)
		}
	}
	if !strings.Contains(string(SearchTool("s")), "at most 20") {
		t.Errorf("search tool's description does not give its bound: %s", SearchTool("s"))
	}
}

// describe_tools names each tool once and takes a bounded number of names.
func TestDescribeBounds(t *testing.T) {
	names := make([]string, MaxDescribe+1)
	for i := range names {
		names[i] = "x"
	}
	args, _ := json.Marshal(map[string]any{"names": names})
	if res := string(DescribeResult(nil, args)); !strings.Contains(res, "at most") || !strings.Contains(res, `"isError":true`) {
		t.Errorf("describe with %d names: %s", len(names), res)
	}
}

// search_tools' result carries the ranking's confidence, and tells the model in words
// when the tools found are only candidates.
func TestSearchResultConfidence(t *testing.T) {
	def := json.RawMessage(`{"name":"a"}`)
	for _, c := range []struct {
		defs       []json.RawMessage
		confidence string
		note       string
	}{
		{[]json.RawMessage{def}, "high", ""},
		{[]json.RawMessage{def}, "none", "the ones this agent uses most"},
		{nil, "none", "no tool is available"},
	} {
		var r struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			Structured struct {
				Tools      []json.RawMessage `json:"tools"`
				Confidence string            `json:"confidence"`
			} `json:"structuredContent"`
		}
		if err := json.Unmarshal(searchResult(c.defs, c.confidence), &r); err != nil {
			t.Fatal(err)
		}
		if r.Structured.Confidence != c.confidence || len(r.Structured.Tools) != len(c.defs) {
			t.Errorf("%s: structuredContent %+v", c.confidence, r.Structured)
		}
		switch {
		case c.note == "" && len(r.Content) != 1:
			t.Errorf("%s: a note where none is due: %+v", c.confidence, r.Content)
		case c.note != "" && (len(r.Content) != 2 || !strings.Contains(r.Content[1].Text, c.note)):
			t.Errorf("%s: want a note with %q, got %+v", c.confidence, c.note, r.Content)
		}
	}
}
