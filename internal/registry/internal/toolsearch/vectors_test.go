package toolsearch

import (
	"encoding/binary"
	"slices"
	"testing"
)

// The embedded vectors decode, and data that is not gen_vectors.go's format (truncated,
// a wrong magic, a count larger than the data, a missing word end) gives an empty table,
// never a panic: the search is then lexical only.
func TestParseVectors(t *testing.T) {
	vt := theVectors()
	if vt.dims != 100 || len(vt.words) < 20000 || len(vt.stems) == 0 {
		t.Fatalf("embedded vectors: %d dims, %d words, %d stems", vt.dims, len(vt.words), len(vt.stems))
	}
	if r := vt.stems[Stem("vehicles")]; r != vt.words["vehicle"] && r != vt.words["vehicles"] {
		t.Error("a stem's vector is not its most frequent word's")
	}
	huge := []byte("GLV1\x00\x00\x00\x00\x64")
	binary.LittleEndian.PutUint32(huge[4:8], 1<<31)
	for name, data := range map[string][]byte{
		"empty": nil, "magic": []byte("GLV2\x01\x00\x00\x00\x02ab\n\x01\x02"),
		"huge": huge, "no word end": []byte("GLV1\x01\x00\x00\x00\x02ab"),
		"short vectors": []byte("GLV1\x01\x00\x00\x00\x02ab\n\x01"), "truncated": gloveBin[:len(gloveBin)/2],
		"zero dims": []byte("GLV1\x01\x00\x00\x00\x00ab\n"),
	} {
		if vt := parseVectors(data); len(vt.words) != 0 || vt.dims != 0 {
			t.Errorf("%s: got %d words, %d dims, want an empty table", name, len(vt.words), vt.dims)
		}
	}
}

// A query word no tool has meets a tool's own name through the vectors (allergic /
// allergies), at confidence Medium (a match by meaning is no match by word); operation
// words (find, create) are not compared, so "number" does not pull every finder; a word
// the vectors do not know falls back to the first letters.
func TestSemanticMatch(t *testing.T) {
	docs := []Doc{
		{Name: "clinic_patients_find", Description: "Find patients.", ReadOnly: true},
		{Name: "clinic_allergies_find", Description: "Find allergies.", ReadOnly: true},
		{Name: "clinic_invoices_create", Description: "Create invoices."},
	}
	ix := New(docs)
	hits, conf := ix.Rank("is she allergic to anything", 3)
	if len(hits) == 0 || docs[hits[0].Doc].Name != "clinic_allergies_find" || conf != Medium {
		t.Errorf("Rank(allergic) = %v, %s; want clinic_allergies_find first at medium", hits, conf)
	}
	for _, op := range []string{"find", "creat"} {
		if slices.Contains(ix.sem.terms, op) {
			t.Errorf("the semantic index holds the operation %q", op)
		}
	}
	if hits, conf := ix.Rank("allergiezzq", 3); len(hits) == 0 || docs[hits[0].Doc].Name != "clinic_allergies_find" || conf != None {
		t.Errorf("Rank(allergiezzq) = %v, %s; want the prefix fallback", hits, conf)
	}
}
