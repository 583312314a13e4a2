package toolsearch

import "testing"

// BenchmarkSearch500 is one query (Rank, limit 5) on T1's large catalogue (502 tools), the
// queries of every set taken in turn: the search form's cost per query, which
// docs/performance.md budgets at 2 ms on one core. mcpbench's T1 runs it with -cpu 1 and
// prints the ratio to the budget.
func BenchmarkSearch500(b *testing.B) {
	docs := loadEvalCatalogue(b, "large")
	ix := New(docs)
	var qs []string
	for _, c := range evalCatalogues() {
		if c.Name == "small" || c.Name == "medium" {
			continue // their set is the large catalogue's
		}
		for _, q := range loadEvalQueries(b, c.Set) {
			qs = append(qs, q.Query)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if hits, _ := ix.Rank(qs[i%len(qs)], 5); len(hits) == 0 {
			b.Fatal("empty answer")
		}
	}
}

// BenchmarkIndex is building the index of T1's large catalogue (502 tools): once per
// catalogue change, never per session or query.
func BenchmarkIndex(b *testing.B) {
	docs := loadEvalCatalogue(b, "large")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		New(docs)
	}
}
