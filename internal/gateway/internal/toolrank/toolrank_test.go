package toolrank

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/store"
)

// Rank is a function of its input: the same counts and previous ranking give the same
// ranking (map order does not leak), ties go to the previous place, then to the key.
func TestRankDeterministic(t *testing.T) {
	counts := map[string]int64{"s\x00c": 3, "s\x00a": 3, "s\x00b": 5, "s\x00d": 1, "s\x00zero": 0}
	want := []string{"s\x00b", "s\x00a", "s\x00c", "s\x00d"}
	for i := range 50 {
		if got := Rank(counts, nil); !slices.Equal(got, want) {
			t.Fatalf("run %d: Rank = %q, want %q", i, got, want)
		}
	}
	// A tie is kept in the previous order.
	if got := Rank(map[string]int64{"a": 4, "b": 4}, []string{"b", "a"}); !slices.Equal(got, []string{"b", "a"}) {
		t.Errorf("tie with a previous ranking: %q, want b first", got)
	}
}

// Hysteresis: one more call does not reshuffle a ranking; a tool takes an incumbent's
// place once it has more than a quarter more calls, plus two.
func TestRankHysteresis(t *testing.T) {
	prev := []string{"inc"}
	for _, c := range []struct {
		challenger int64
		first      string
	}{{10, "inc"}, {11, "inc"}, {14, "inc"}, {15, "chal"}} {
		got := Rank(map[string]int64{"inc": 10, "chal": c.challenger}, prev)
		if got[0] != c.first {
			t.Errorf("incumbent 10 calls, challenger %d: ranking %q, want %s first", c.challenger, got, c.first)
		}
	}
	long := map[string]int64{}
	for i := range store.MaxToolRanking + 20 {
		long[fmt.Sprint(i)] = int64(i + 1)
	}
	if got := Rank(long, nil); len(got) != store.MaxToolRanking || got[0] != fmt.Sprint(store.MaxToolRanking+19) {
		t.Errorf("Rank of %d tools: %d kept, first %q", len(long), len(got), got[0])
	}
}

func tools(names ...string) []*registry.Tool {
	out := make([]*registry.Tool, len(names))
	for i, n := range names {
		def, _ := json.Marshal(map[string]any{"name": "s__" + n, "inputSchema": map[string]any{"type": "object"}})
		out[i] = &registry.Tool{Server: "s", Name: n, Exposed: "s__" + n, Def: def}
	}
	return out
}

func chosenNames(ts []*registry.Tool, chosen []bool) []string {
	var out []string
	for i, c := range chosen {
		if c {
			out = append(out, ts[i].Name)
		}
	}
	return out
}

// Pick takes the pinned tools, then the ranked ones, then view order, up to max, and
// reports them in view order; a ranked tool the view lacks is skipped.
func TestPick(t *testing.T) {
	ts := tools("a", "b", "c", "d", "e", "f")
	pin := func(t *registry.Tool) bool { return t.Name == "e" }
	ranking := []string{store.ToolUseKey("s", "gone"), store.ToolUseKey("s", "f"), store.ToolUseKey("s", "c")}
	for _, c := range []struct {
		max  int
		want []string
	}{
		{0, nil},
		{1, []string{"e"}},
		{2, []string{"e", "f"}},
		{3, []string{"c", "e", "f"}},
		{4, []string{"a", "c", "e", "f"}},
		{10, []string{"a", "b", "c", "d", "e", "f"}},
	} {
		if got := chosenNames(ts, Pick(ts, pin, ranking, c.max)); !slices.Equal(got, c.want) {
			t.Errorf("Pick(max %d) = %v, want %v", c.max, got, c.want)
		}
	}
	// Cold start (no ranking, no pins): the view's first tools.
	if got := chosenNames(ts, Pick(ts, nil, nil, 3)); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("cold Pick = %v, want the first three in view order", got)
	}
}

// Usual is the ranked tools the view holds, most used first, at most max; a ranked tool
// the view lacks is skipped.
func TestUsual(t *testing.T) {
	ts := tools("a", "b", "c", "d")
	ranking := []string{store.ToolUseKey("s", "gone"), store.ToolUseKey("s", "d"), store.ToolUseKey("x", "a"), store.ToolUseKey("s", "b"), store.ToolUseKey("s", "a")}
	for _, c := range []struct {
		max  int
		want []int
	}{{0, nil}, {1, []int{3}}, {2, []int{3, 1}}, {5, []int{3, 1, 0}}} {
		if got := Usual(ts, ranking, c.max); !slices.Equal(got, c.want) {
			t.Errorf("Usual(max %d) = %v, want %v", c.max, got, c.want)
		}
	}
	if got := Usual(ts, nil, 3); got != nil {
		t.Errorf("Usual with no ranking = %v", got)
	}
}

// The list's bytes depend only on the set chosen, not on the ranking's order: a change of
// order among the same most-used tools leaves the list byte for byte as it was (prompt
// caches keep hitting), and the same input gives the same bytes.
func TestPageByteStable(t *testing.T) {
	ts := tools("a", "b", "c", "d", "e")
	search := json.RawMessage(`{"name":"mcpgw__search_tools"}`)
	r1 := []string{store.ToolUseKey("s", "d"), store.ToolUseKey("s", "b")}
	r2 := []string{store.ToolUseKey("s", "b"), store.ToolUseKey("s", "d")}
	p1 := Page(ts, Pick(ts, nil, r1, 2), search)
	p2 := Page(ts, Pick(ts, nil, r2, 2), search)
	p3 := Page(ts, Pick(ts, nil, r1, 2), search)
	if string(p1.Bytes) != string(p2.Bytes) || string(p1.Bytes) != string(p3.Bytes) {
		t.Errorf("pages differ:\n%s\n%s\n%s", p1.Bytes, p2.Bytes, p3.Bytes)
	}
	want := `{"tools":[` + string(ts[1].Def) + `,` + string(ts[3].Def) + `,{"name":"mcpgw__search_tools"}]}`
	if string(p1.Bytes) != want || p1.Tokens <= 0 {
		t.Errorf("page = %s (%d tokens), want %s", p1.Bytes, p1.Tokens, want)
	}
	if !json.Valid(p1.Bytes) {
		t.Errorf("page is not JSON: %s", p1.Bytes)
	}
}

// Counting: anonymous calls are not counted, pairs beyond MaxPending are dropped, and
// Ranking flushes the asking agent's counts first.
func TestRanksCountAndRanking(t *testing.T) {
	m := store.NewMemory()
	r := New(m.ToolUses(), nil)
	r.Count("", "s", "x")
	for range 3 {
		r.Count("a1", "s", "read")
	}
	r.Count("a1", "s", "write")
	r.Count("a2", "s", "other")
	if got := r.Ranking("a1"); !slices.Equal(got, []string{store.ToolUseKey("s", "read"), store.ToolUseKey("s", "write")}) {
		t.Errorf("a1's ranking = %q", got)
	}
	if rec, _ := m.ToolUses().GetToolUse("a2"); len(rec.Counts) != 0 {
		t.Errorf("a2's counts written before a flush: %v", rec.Counts)
	}
	r.Flush()
	if rec, _ := m.ToolUses().GetToolUse("a2"); rec.Counts[store.ToolUseKey("s", "other")] != 1 || len(rec.Ranking) != 1 {
		t.Errorf("a2 after Flush: %+v", rec)
	}
	if rec, _ := m.ToolUses().GetToolUse(""); len(rec.Counts) != 0 {
		t.Errorf("an anonymous call was counted: %v", rec.Counts)
	}
	for i := range MaxPending + 10 {
		r.Count("a3", "s", fmt.Sprint(i))
	}
	r.mu.Lock()
	n, dropped := len(r.pending), r.dropped
	r.mu.Unlock()
	if n != MaxPending || dropped != 10 {
		t.Errorf("pending %d (want %d), dropped %d (want 10)", n, MaxPending, dropped)
	}
	var nilRanks *Ranks
	nilRanks.Count("a", "s", "t")
	if nilRanks.Ranking("a") != nil || New(nil, nil).Ranking("a") != nil {
		t.Error("a nil Ranks or store ranked something")
	}
}

// Count allocates nothing for a pair already counted: the call path stays as it was.
func TestCountAllocs(t *testing.T) {
	r := New(store.NewMemory().ToolUses(), nil)
	r.Count("agent", "server", "tool")
	if n := testing.AllocsPerRun(100, func() { r.Count("agent", "server", "tool") }); n != 0 {
		t.Errorf("Count allocates %v times a call", n)
	}
}
