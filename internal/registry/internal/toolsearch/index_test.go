package toolsearch

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"
)

// names is the Doc names of hits, in order.
func names(docs []Doc, hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = docs[h.Doc].Name
	}
	return out
}

func TestSearchRanking(t *testing.T) {
	cases := []struct {
		name  string
		docs  []Doc
		query string
		first string
	}{{
		name: "a tool named for the word beats one that mentions it",
		docs: []Doc{
			{Name: "util__repeat", Description: "Works like echo: returns the message unchanged."},
			{Name: "util__echo", Description: "Returns the message unchanged."},
		},
		query: "echo", first: "util__echo",
	}, {
		name: "a rare word outweighs a common one",
		docs: []Doc{
			{Name: "a__one", Description: "Reads a record."},
			{Name: "a__two", Description: "Reads a record."},
			{Name: "a__three", Description: "Reads a record."},
			{Name: "a__four", Description: "Reads a record and its checksum."},
			{Name: "a__five", Description: "Reads and reads a record, again reads."},
		},
		query: "reads checksum", first: "a__four",
	}, {
		name: "the tool whose name has every query word comes first",
		docs: []Doc{
			{Name: "filesystem__read_text_file", Description: "Read a file as text."},
			{Name: "filesystem__read_file", Description: "Read the complete contents of a file."},
			{Name: "filesystem__write_file", Description: "Create or overwrite a file."},
			{Name: "memory__read_graph", Description: "Read the whole knowledge graph."},
		},
		query: "filesystem read file", first: "filesystem__read_file",
	}, {
		name: "a name the query covers beats a longer name with the same words",
		docs: []Doc{
			{Name: "fs__read_multiple_files", Description: "Read several files at once: each file is read in turn."},
			{Name: "fs__read_file", Description: "Return the complete contents of one path as text, from the first line to the last."},
			{Name: "fs__write_file", Description: "Write text to a path."},
			{Name: "fs__list", Description: "List a directory."},
		},
		query: "fs read file", first: "fs__read_file",
	}, {
		name: "the server prefix counts",
		docs: []Doc{
			{Name: "memory__search_nodes", Description: "Search nodes by query."},
			{Name: "filesystem__search_files", Description: "Search for files by pattern."},
		},
		query: "search memory", first: "memory__search_nodes",
	}, {
		name: "parameter names count",
		docs: []Doc{
			{Name: "x__send", Description: "Sends a message.", Params: []string{"recipient", "body"}},
			{Name: "x__post", Description: "Posts a message.", Params: []string{"channelId", "text"}},
		},
		query: "message to a channel", first: "x__post",
	}, {
		name: "a synonym finds a tool the query does not name",
		docs: []Doc{
			{Name: "fs__delete_file", Description: "Deletes one file."},
			{Name: "fs__copy_file", Description: "Copies one file."},
		},
		query: "remove a file", first: "fs__delete_file",
	}, {
		name: "an exact word beats its synonym",
		docs: []Doc{
			{Name: "fs__remove_file", Description: "One file goes."},
			{Name: "fs__delete_file", Description: "One file goes."},
		},
		query: "delete file", first: "fs__delete_file",
	}, {
		name: "plural and verb forms meet",
		docs: []Doc{
			{Name: "kg__create_entities", Description: "Create entities in the graph."},
			{Name: "kg__open_nodes", Description: "Open nodes of the graph."},
		},
		query: "creating an entity", first: "kg__create_entities",
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hits := New(c.docs).Search(c.query, len(c.docs))
			if len(hits) == 0 || c.docs[hits[0].Doc].Name != c.first {
				t.Fatalf("Search(%q) = %q, want %s first", c.query, names(c.docs, hits), c.first)
			}
		})
	}
}

func TestSearchEdges(t *testing.T) {
	docs := []Doc{{Name: "a__echo", Description: "Echo a message."}, {Name: "a__sum", Description: "Add two numbers."}}
	ix := New(docs)
	for _, q := range []string{"", "   ", "the of and", "nothing-matches-zzz"} {
		if hits := ix.Search(q, 5); hits != nil {
			t.Errorf("Search(%q) = %v, want none", q, hits)
		}
	}
	for _, k := range []int{0, -1} {
		if hits := ix.Search("echo", k); hits != nil {
			t.Errorf("Search(echo, %d) = %v, want none", k, hits)
		}
	}
	if hits := ix.Search("echo sum", 1); len(hits) != 1 {
		t.Errorf("k=1 gave %d hits", len(hits))
	}
	if hits := New(nil).Search("echo", 3); hits != nil {
		t.Errorf("empty index gave %v", hits)
	}
	var nilIndex *Index
	if hits := nilIndex.Search("echo", 3); hits != nil {
		t.Errorf("nil index gave %v", hits)
	}
}

// TestSearchTiesByDocIndex: documents that score the same come in document order.
func TestSearchTiesByDocIndex(t *testing.T) {
	docs := make([]Doc, 20)
	for i := range docs {
		docs[i] = Doc{Name: fmt.Sprintf("s__same%02d", i), Description: "Reads the log."}
	}
	hits := New(docs).Search("log", 20)
	if len(hits) != 20 {
		t.Fatalf("%d hits, want 20", len(hits))
	}
	for i, h := range hits {
		if h.Doc != i || h.Score != hits[0].Score {
			t.Fatalf("hit %d is %+v, want doc %d with score %v", i, h, i, hits[0].Score)
		}
	}
	if top := New(docs).Search("log", 5); !reflect.DeepEqual(top, hits[:5]) {
		t.Fatalf("k=5 gave %v, want the first five of k=20: %v", top, hits[:5])
	}
}

// syntheticDocs is n tool-like documents from a fixed seed.
func syntheticDocs(n int) []Doc {
	rng := rand.New(rand.NewPCG(1, 2))
	verbs := []string{"get", "list", "create", "update", "delete", "find", "read", "write", "move", "search", "open", "run"}
	nouns := []string{"file", "user", "order", "customer", "product", "issue", "page", "branch", "commit", "entity",
		"relation", "image", "invoice", "ticket", "channel", "message", "repo", "table", "row", "schema", "node", "graph"}
	servers := []string{"github", "slack", "filesystem", "memory", "jira", "shop", "notion", "postgres"}
	docs := make([]Doc, n)
	for i := range docs {
		v, o := verbs[rng.IntN(len(verbs))], nouns[rng.IntN(len(nouns))]
		s := servers[rng.IntN(len(servers))]
		docs[i] = Doc{
			Name:        fmt.Sprintf("%s__%s_%s_%d", s, v, o, i),
			Description: fmt.Sprintf("%s one %s of %s by id, with its %s and %s.", v, o, s, nouns[rng.IntN(len(nouns))], nouns[rng.IntN(len(nouns))]),
			Params:      []string{o + "Id", "pageSize", nouns[rng.IntN(len(nouns))] + "Name"},
			ParamText:   fmt.Sprintf("The %s to act on. How many per page.", o),
		}
	}
	return docs
}

// TestSearchDeterministic: the same docs and query give the same hits, index after index.
func TestSearchDeterministic(t *testing.T) {
	docs := syntheticDocs(2000)
	queries := []string{"list github issues", "delete a slack message", "customer orders", "read file", "graph node relation"}
	first := New(docs)
	for i := 0; i < 3; i++ {
		ix := New(docs)
		for _, q := range queries {
			a, b := first.Search(q, 10), ix.Search(q, 10)
			if len(a) == 0 {
				t.Fatalf("Search(%q) found nothing", q)
			}
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("Search(%q) differs between two indexes of the same docs:\n%v\n%v", q, a, b)
			}
			if top := ix.Search(q, 3); !reflect.DeepEqual(top, a[:3]) {
				t.Fatalf("Search(%q, 3) = %v, not the first three of k=10: %v", q, top, a)
			}
		}
	}
}

// TestSearchConcurrent searches one index from many goroutines (run it with -race): each
// answer equals the one a single goroutine got.
func TestSearchConcurrent(t *testing.T) {
	docs := syntheticDocs(500)
	ix := New(docs)
	queries := []string{"list github issues", "delete a slack message", "customer orders", "read file"}
	want := make([][]Hit, len(queries))
	for i, q := range queries {
		want[i] = ix.Search(q, 5)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for g := range 16 {
		wg.Go(func() {
			for i := range 50 {
				qi := (g + i) % len(queries)
				if got := ix.Search(queries[qi], 5); !reflect.DeepEqual(got, want[qi]) {
					errs <- fmt.Sprintf("goroutine %d: Search(%q) = %v, want %v", g, queries[qi], got, want[qi])
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// BenchmarkSearch is one query against an index of 10,000 tools.
func BenchmarkSearch(b *testing.B) {
	docs := syntheticDocs(10000)
	ix := New(docs)
	queries := []string{"list github issues", "delete a slack message", "customer orders by id", "read file", "find graph node relation"}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		ix.Search(queries[i%len(queries)], 10)
		i++
	}
}

// BenchmarkNew builds the index of 10,000 tools.
func BenchmarkNew(b *testing.B) {
	docs := syntheticDocs(10000)
	b.ReportAllocs()
	for b.Loop() {
		New(docs)
	}
}
