package toolsearch

import (
	"slices"
	"testing"
)

func TestTokens(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"getUserById", []string{"get", "user", "id"}},
		{"HTTPServer", []string{"http", "server"}},
		{"filesystem__read_file", []string{"filesystem", "read", "fil"}},
		{"get-tiny-image", []string{"get", "tiny", "imag"}},
		{"shop_shop_v1_customers_find", []string{"shop", "shop", "v1", "customer", "find"}},
		{"path/to.the-file", []string{"path", "fil"}},
		{"Lists the directories of a path.", []string{"list", "directory", "path"}},
		{"base64 o200k userID2Name", []string{"base64", "o200k", "user", "id2", "nam"}},
		{"the a of to", nil},
		{"x y 7", []string{"7"}},
		{"", nil},
		{"Ünïcode Straße", []string{"ünïcod", "straß"}},
	}
	for _, c := range cases {
		if got := Tokens(c.in); !slices.Equal(got, c.want) {
			t.Errorf("Tokens(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestStem(t *testing.T) {
	cases := map[string]string{
		// plurals
		"files": "fil", "entries": "entry", "directories": "directory", "processes": "process",
		"matches": "match", "boxes": "box", "indexes": "index", "ids": "id", "status": "status",
		"analysis": "analysis", "address": "address", "types": "typ", "aliases": "alias",
		// -ed, -ied, -ing
		"created": "creat", "creating": "creat", "creates": "creat", "create": "creat",
		"listing": "list", "listed": "list", "running": "run", "mapped": "map", "added": "add",
		"called": "call", "passed": "pass", "modified": "modify", "copied": "copy",
		"need": "need", "seed": "seed", "red": "red", "string": "string", "thing": "thing",
		"embedded": "embed", "updating": "updat", "update": "updat",
		// left alone
		"id": "id", "go": "go", "tree": "tree", "v1": "v1",
	}
	for in, want := range cases {
		if got := Stem(in); got != want {
			t.Errorf("Stem(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestStemMeets: the forms a user types meet the forms tool authors write.
func TestStemMeets(t *testing.T) {
	groups := [][]string{
		{"delete", "deletes", "deleted", "deleting"},
		{"file", "files", "filed"},
		{"change", "changes", "changed", "changing"},
		{"cache", "caches", "cached", "caching"},
		{"entry", "entries"},
		{"search", "searches", "searched", "searching"},
		{"observation", "observations"},
		{"relation", "relations"},
	}
	for _, g := range groups {
		for _, w := range g[1:] {
			if Stem(w) != Stem(g[0]) {
				t.Errorf("Stem(%q) = %q, Stem(%q) = %q: they should meet", w, Stem(w), g[0], Stem(g[0]))
			}
		}
	}
}

func TestSynonymTable(t *testing.T) {
	tab := synonymTable()
	if !slices.Contains(tab[Stem("remove")], Stem("delete")) {
		t.Errorf("remove's synonyms %q lack delete", tab[Stem("remove")])
	}
	if !slices.Contains(tab[Stem("folder")], Stem("directory")) {
		t.Errorf("folder's synonyms %q lack directory", tab[Stem("folder")])
	}
	for w, syns := range tab {
		if slices.Contains(syns, w) {
			t.Errorf("%q lists itself as a synonym", w)
		}
	}
	seen := map[string]int{}
	for i, g := range synonymGroups() {
		for _, w := range g {
			if j, ok := seen[Stem(w)]; ok && j != i {
				t.Errorf("%q is in groups %d and %d", w, j, i)
			}
			seen[Stem(w)] = i
		}
	}
}
