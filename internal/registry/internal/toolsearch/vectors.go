package toolsearch

import (
	"encoding/binary"
	"math"
)

// vectorTable maps a word, and a stem, to its vector: a stem's is that of the most
// frequent word that has it (vehicles, vehicle → vehicl gets vehicle's). The vectors stay
// in the embedded bytes; only the maps are built. A table with dims 0 is empty: the search
// is then lexical only.
type vectorTable struct {
	dims  int
	words map[string]int32 // word → its row (its frequency rank)
	stems map[string]int32 // stem → the row of its most frequent word
	data  []byte           // rows × dims int8
}

// vector is the unit vector of row r written into dst (len dims).
func (vt *vectorTable) vector(r int32, dst []float32) bool {
	row := vt.data[int(r)*vt.dims : int(r+1)*vt.dims]
	var n float32
	for i, x := range row {
		dst[i] = float32(int8(x))
		n += dst[i] * dst[i]
	}
	if n == 0 {
		return false
	}
	inv := float32(1 / math.Sqrt(float64(n)))
	for i := range dst {
		dst[i] *= inv
	}
	return true
}

// row is the row of word w, or of its stem s when the table lacks w.
func (vt *vectorTable) row(w, s string) (int32, bool) {
	if r, ok := vt.words[w]; ok {
		return r, true
	}
	r, ok := vt.stems[s]
	return r, ok
}

// parseVectors reads gen_use.go's format (magic "USE1", uint32 n, uint8 dims, n words each
// ended by '\n', n × dims int8). Data that does not parse gives an empty table, never a
// panic.
func parseVectors(data []byte) *vectorTable {
	empty := &vectorTable{words: map[string]int32{}, stems: map[string]int32{}}
	if len(data) < 9 || string(data[:4]) != "USE1" {
		return empty
	}
	n, dims := int(binary.LittleEndian.Uint32(data[4:8])), int(data[8])
	if dims == 0 || n <= 0 || n > len(data) {
		return empty
	}
	vt := &vectorTable{dims: dims, words: make(map[string]int32, n), stems: make(map[string]int32, n)}
	rest := data[9:]
	for r := int32(0); int(r) < n; r++ {
		i := 0
		for i < len(rest) && rest[i] != '\n' {
			i++
		}
		if i == len(rest) {
			return empty
		}
		w := string(rest[:i])
		rest = rest[i+1:]
		vt.words[w] = r
		if s := Stem(w); !isStopWord(w) {
			if _, ok := vt.stems[s]; !ok {
				vt.stems[s] = r
			}
		}
	}
	if len(rest) != n*dims {
		return empty
	}
	vt.data = rest
	return vt
}
