package toolsearch

import (
	"testing"
	"time"
)

// FuzzRank feeds any query, as an agent may send one, to the ranker over a catalogue with
// plugin tables and other servers' tools: no panic, never an empty answer, at most k
// distinct tools that exist, and a bounded time (the query sizes search_tools admits are
// far smaller than what the fuzzer may try, up to a few KB).
func FuzzRank(f *testing.F) {
	docs := fuzzDocs()
	ix := New(docs)
	for _, q := range []string{
		"", " ", ",,,;;:", "the pump is broken, report it", "take Tom off the yoga class, then sign him up",
		"wipe every old check-in record", "prescribed", "presc", "vehiqq", "how many", "number of",
		"ÄÖÜ ß ﬁ İ", "\x00\xff\xfe", "a\u2014b\u2013c", "put\u00a0off", "appointments appointments appointments",
		"book a visit, cancel it, move it; delete all rows!", "12345 67890", "get 1, get 2, get 3",
	} {
		f.Add(q, uint8(3))
	}
	f.Fuzz(func(t *testing.T, q string, k uint8) {
		if len(q) > 4096 {
			return
		}
		start := time.Now()
		hits, conf := ix.Rank(q, int(k))
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("query of %d bytes took %v", len(q), took)
		}
		if k == 0 {
			if hits != nil {
				t.Errorf("k=0 gave %v", hits)
			}
			return
		}
		if len(hits) == 0 || len(hits) > int(k) {
			t.Fatalf("Rank(%q, %d) = %v (%s): want 1 to k hits", q, k, hits, conf)
		}
		seen := map[int]bool{}
		for _, h := range hits {
			if h.Doc < 0 || h.Doc >= len(docs) || seen[h.Doc] {
				t.Fatalf("Rank(%q, %d) = %v: a hit out of range or repeated", q, k, hits)
			}
			seen[h.Doc] = true
		}
	})
}

// fuzzDocs is a small catalogue: two plugin tables with every operation and a few tools
// of other servers.
func fuzzDocs() []Doc {
	docs := []Doc{
		{Name: "fs__read_file", Description: "Read a file.", Params: []string{"path"}, ReadOnly: true},
		{Name: "memory__create_entities", Description: "Create entities in the knowledge graph.", Params: []string{"entities"}},
		{Name: "everything__get-sum", Description: "Returns the sum of two numbers.", Params: []string{"a", "b"}, ReadOnly: true},
	}
	for _, table := range []string{"appointments", "check_ins"} {
		for _, op := range []string{"find", "list", "get", "count", "create", "update", "delete", "truncate"} {
			docs = append(docs, Doc{Name: "vet_vet_v1_" + table + "_" + op, Description: op + " rows of " + table,
				Params: []string{"connectionId", "starts_at"}, ReadOnly: op == "find" || op == "list" || op == "get" || op == "count"})
		}
	}
	return docs
}
