package toolsearch

import (
	"slices"
	"testing"
)

func rankFixture() *Index {
	return New([]Doc{
		{Name: "fs__read_file", Description: "Read a file from disk.", Params: []string{"path"}, ReadOnly: true},
		{Name: "fs__write_file", Description: "Write a file to disk.", Params: []string{"path", "content"}},
		{Name: "fleet_v1_vehicles_find", Description: "Find vehicles.", Params: []string{"registration"}, ReadOnly: true},
		{Name: "maint_windows_list", Description: "List maintenance windows.", ReadOnly: true},
	})
}

// Rank says how sure it is: words matched and a clear lead (high), words matched with a
// rival close behind (medium).
func TestRankConfidence(t *testing.T) {
	ix := rankFixture()
	for _, c := range []struct {
		query string
		first string
		want  Confidence
	}{
		{"read a file", "fs__read_file", High},
		{"file", "fs__read_file", Medium},
	} {
		hits, conf := ix.Rank(c.query, 3)
		if len(hits) == 0 || conf != c.want {
			t.Errorf("Rank(%q) = %v, %s; want %s", c.query, hits, conf, c.want)
			continue
		}
		docs := []string{"fs__read_file", "fs__write_file", "fleet_v1_vehicles_find", "maint_windows_list"}
		if got := docs[hits[0].Doc]; got != c.first {
			t.Errorf("Rank(%q) first = %s, want %s", c.query, got, c.first)
		}
	}
}

// A query that matches nothing still gets candidates, at confidence none: those sharing a
// word's first letters, else the first tools; never an empty answer while there are tools.
func TestRankNeverEmpty(t *testing.T) {
	ix := rankFixture()
	if hits := ix.Search("vehiqq", 3); len(hits) != 0 {
		t.Fatalf("Search(vehiqq) = %v; the fixture is meant to have no match", hits)
	}
	hits, conf := ix.Rank("vehiqq", 3)
	if conf != None || len(hits) != 1 || hits[0].Doc != 2 {
		t.Errorf("Rank(vehiqq) = %v, %s; want fleet_v1_vehicles_find at none", hits, conf)
	}
	// Nothing shares even a word's first letters: one tool, the view's first, not k of
	// them. Any tool is as likely as another, and each is a whole definition the model
	// reads and keeps; the answer's text line asks for other words.
	for _, q := range []string{"qqqzzz", "", "the of a", "\x00\xff"} {
		hits, conf := ix.Rank(q, 3)
		if conf != None || len(hits) != 1 || hits[0].Doc != 0 {
			t.Errorf("Rank(%q) = %v, %s; want the first tool alone at none", q, hits, conf)
		}
	}
	if hits, _ := ix.Rank("file", 0); hits != nil {
		t.Errorf("k=0 gave %v", hits)
	}
	if hits, _ := New(nil).Rank("file", 3); hits != nil {
		t.Errorf("an empty index gave %v", hits)
	}
}

// RankOr answers a query that matches nothing, not even by first letters, with the usual
// documents (in their order, at most UsualMax and k, out-of-range and repeated ones
// skipped) and asks for them only then.
func TestRankOrUsual(t *testing.T) {
	ix := rankFixture()
	calls := 0
	usual := func(ds ...int) func() []int {
		return func() []int { calls++; return ds }
	}
	for _, c := range []struct {
		query string
		k     int
		usual []int
		want  []int
		asked bool
	}{
		{"qqqzzz", 3, []int{3, 1}, []int{3, 1}, true},
		{"qqqzzz", 5, []int{2, 2, -1, 9, 1, 0, 3}, []int{2, 1, 0}, true},
		{"qqqzzz", 1, []int{3, 1}, []int{3}, true},
		{"qqqzzz", 3, []int{}, []int{0}, true},
		{"qqqzzz", 3, []int{7}, []int{0}, true},
		{"read a file", 3, []int{3}, nil, false},
		{"vehiqq", 3, []int{3}, []int{2}, false},
	} {
		calls = 0
		hits, conf := ix.RankOr(c.query, c.k, usual(c.usual...))
		var got []int
		for _, h := range hits {
			got = append(got, h.Doc)
		}
		if c.asked != (calls == 1) || calls > 1 {
			t.Errorf("RankOr(%q, %v): usual called %d times", c.query, c.usual, calls)
		}
		if c.want == nil {
			if conf == None {
				t.Errorf("RankOr(%q) = %v at none; want a match", c.query, got)
			}
			continue
		}
		if conf != None || !slices.Equal(got, c.want) {
			t.Errorf("RankOr(%q, k %d, usual %v) = %v, %s; want %v at none", c.query, c.k, c.usual, got, conf, c.want)
		}
	}
	if hits, _ := ix.RankOr("qqqzzz", 3, nil); len(hits) != 1 || hits[0].Doc != 0 {
		t.Errorf("RankOr with no usual = %v, want the first document", hits)
	}
}
