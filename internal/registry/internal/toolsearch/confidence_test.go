package toolsearch

import "testing"

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
