//go:build usevectors

package toolsearch

import "testing"

// The embedded table decodes: 40,000 words of 128 dimensions, a stem's row is its most
// frequent word's.
func TestEmbeddedVectors(t *testing.T) {
	vt := theVectors()
	if vt.dims != 128 || len(vt.words) != 40000 || len(vt.stems) == 0 {
		t.Fatalf("embedded vectors: %d dims, %d words, %d stems", vt.dims, len(vt.words), len(vt.stems))
	}
	if r := vt.stems[Stem("vehicles")]; r != vt.words["vehicle"] && r != vt.words["vehicles"] {
		t.Error("a stem's vector is not its most frequent word's")
	}
}

// The sentence match ranks plugin tables by meaning where no word is shared: "mechanics"
// finds the technicians table's count, which no lexical signal reaches, and the operation
// words stay out of the vectors.
func TestSentenceMatch(t *testing.T) {
	var docs []Doc
	for _, table := range []string{"customers", "invoices", "parts", "technicians"} {
		for _, op := range []string{"find", "count", "create"} {
			docs = append(docs, Doc{Name: "garage_garage_v1_" + table + "_" + op, Description: "The " + table + " table.", ReadOnly: op != "create"})
		}
	}
	ix := New(docs)
	hits, _ := ix.Rank("how many mechanics do we employ", 3)
	if len(hits) == 0 || docs[hits[0].Doc].Name != "garage_garage_v1_technicians_count" {
		t.Errorf("Rank(mechanics) = %v; want garage_garage_v1_technicians_count first", hits)
	}
	if ix.res == nil || ix.res.index.sem.dims == 0 {
		t.Fatal("the tables' index has no vectors")
	}
}

// BenchmarkVectors is decoding the embedded word vectors (once per process, on the first
// index built): its time, and its heap in B/op.
func BenchmarkVectors(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if vt := parseVectors(useBin); len(vt.words) == 0 {
			b.Fatal("no vectors")
		}
	}
}
