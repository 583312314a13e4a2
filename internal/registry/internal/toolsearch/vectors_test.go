package toolsearch

import (
	"encoding/binary"
	"testing"
)

// tinyTable is gen_use.go's format with the given words and rows.
func tinyTable(dims int, words []string, rows [][]int8) []byte {
	b := []byte("USE1\x00\x00\x00\x00\x00")
	binary.LittleEndian.PutUint32(b[4:8], uint32(len(words)))
	b[8] = byte(dims)
	for _, w := range words {
		b = append(b, w...)
		b = append(b, '\n')
	}
	for _, r := range rows {
		for _, x := range r {
			b = append(b, byte(x))
		}
	}
	return b
}

// A table decodes its words, their stems (a stem's row is its most frequent word's) and
// unit vectors; data that is not gen_use.go's format (truncated, a wrong magic, a count
// larger than the data, a missing word end, zero dimensions) gives an empty table, never a
// panic: the search is then lexical only.
func TestParseVectors(t *testing.T) {
	good := tinyTable(2, []string{"vehicle", "vehicles", "lorry"}, [][]int8{{3, 4}, {4, 3}, {0, 0}})
	vt := parseVectors(good)
	if vt.dims != 2 || len(vt.words) != 3 || vt.stems[Stem("vehicles")] != 0 {
		t.Fatalf("parse: %d dims, %d words, stem row %d", vt.dims, len(vt.words), vt.stems[Stem("vehicles")])
	}
	v := make([]float32, 2)
	if !vt.vector(0, v) || v[0] != 0.6 || v[1] != 0.8 {
		t.Errorf("vector(vehicle) = %v, want [0.6 0.8]", v)
	}
	if vt.vector(2, v) {
		t.Error("a zero row gave a vector")
	}
	if r, ok := vt.row("trucks", Stem("vehicles")); !ok || r != 0 {
		t.Errorf("row falls back to the stem: %d, %v", r, ok)
	}
	huge := []byte("USE1\x00\x00\x00\x00\x64")
	binary.LittleEndian.PutUint32(huge[4:8], 1<<31)
	for name, data := range map[string][]byte{
		"empty": nil, "magic": []byte("GLV1\x01\x00\x00\x00\x02ab\n\x01\x02"),
		"huge": huge, "no word end": []byte("USE1\x01\x00\x00\x00\x02ab"),
		"short vectors": []byte("USE1\x01\x00\x00\x00\x02ab\n\x01"), "truncated": good[:len(good)-1],
		"zero dims": []byte("USE1\x01\x00\x00\x00\x00ab\n"), "long": append(good, 0),
	} {
		if vt := parseVectors(data); len(vt.words) != 0 || vt.dims != 0 {
			t.Errorf("%s: got %d words, %d dims, want an empty table", name, len(vt.words), vt.dims)
		}
	}
}
