package toolsearch

import (
	"slices"
	"strings"
	"unicode"
)

// Semantic-signal constants (see the package comment). Chosen on T1's query sets
// (TestHitRateCatalogues): the top-3 hits hold within one for semanticNear 8 to 16,
// semanticMin 0.4 to 0.5 and SemanticWeight 0.3 to 0.6.
const (
	// SemanticWeight scales the score of a match through the word vectors at cosine 1; a
	// match at cosine c counts SemanticWeight × (c − semanticMin) / (1 − semanticMin).
	SemanticWeight = 0.5
	// semanticMin is the smallest cosine at which a query word stands in for a name term.
	semanticMin = 0.45
	// semanticNear bounds the name terms one query word meets through the vectors.
	semanticNear = 16
)

// semanticIndex is the terms of the tools' own names that the vector table knows, with
// their unit vectors, for a query word to be compared with.
type semanticIndex struct {
	dims  int
	terms []string  // sorted
	vecs  []float32 // len(terms) × dims
}

// newSemanticIndex gathers the vectors of the index's name terms, less the words of
// operations (the synonym table's, the change and count words): the priors and the
// synonym table read those, and a query word near one (number: create, find) would only
// pull every tool of that operation.
func newSemanticIndex(ix *Index) *semanticIndex {
	vt := theVectors()
	si := &semanticIndex{dims: vt.dims}
	if vt.dims == 0 {
		return si
	}
	for t, ps := range ix.postings {
		if ix.synonyms[t] != nil || ix.changes[t] || ix.counting[t] {
			continue
		}
		if _, ok := vt.stems[t]; ok && slices.ContainsFunc(ps, func(p posting) bool { return p.inName }) {
			si.terms = append(si.terms, t)
		}
	}
	slices.Sort(si.terms)
	si.vecs = make([]float32, len(si.terms)*vt.dims)
	for i, t := range si.terms {
		vt.vector(vt.stems[t], si.vecs[i*vt.dims:(i+1)*vt.dims])
	}
	return si
}

// near is a name term that meets a query word through the vectors, and how closely.
type near struct {
	term int32
	cos  float32
}

// queryWords maps each term of query to the first word it came from (lower-case), whose
// own vector is nearer its meaning than its stem's (outings, not out).
func queryWords(query string) map[string]string {
	m := map[string]string{}
	for _, w := range words(query) {
		w = strings.ToLower(w)
		if isStopWord(w) || (len(w) == 1 && !unicode.IsDigit(rune(w[0]))) {
			continue
		}
		if s := Stem(w); m[s] == "" {
			m[s] = w
		}
	}
	return m
}

// neighbours returns the name terms, other than t itself, whose cosine with the query
// word w (or, unknown, its stem t) is semanticMin or more, the semanticNear closest,
// closest first; q is scratch of len dims.
func (si *semanticIndex) neighbours(w, t string, q []float32, out []near) []near {
	if si.dims == 0 || len(si.terms) == 0 {
		return out
	}
	vt := theVectors()
	r, ok := vt.words[w]
	if !ok {
		r, ok = vt.stems[t]
	}
	if !ok || !vt.vector(r, q) {
		return out
	}
	for i := range si.terms {
		row := si.vecs[i*si.dims : (i+1)*si.dims]
		var c float32
		for j, x := range row {
			c += x * q[j]
		}
		if c >= semanticMin && si.terms[i] != t {
			out = append(out, near{term: int32(i), cos: c})
		}
	}
	slices.SortFunc(out, func(a, b near) int {
		switch {
		case a.cos > b.cos:
			return -1
		case a.cos < b.cos:
			return 1
		}
		return int(a.term - b.term)
	})
	return out[:min(len(out), semanticNear)]
}

// scoreSemantic, for a query term t (from word w) that no document has, raises best[d]
// to each neighbour's weighted score in the documents it occurs in (see SemanticWeight),
// and returns touched with the documents newly met. A term some document has is matched
// by its word alone: its neighbours would only add noise to a match already made.
func (ix *Index) scoreSemantic(w, t string, q []float32, ns []near, best []float64, touched []int32) []int32 {
	if len(ix.postings[t]) > 0 {
		return touched
	}
	for _, n := range ix.sem.neighbours(w, t, q, ns[:0]) {
		f := SemanticWeight * float64(n.cos-semanticMin) / (1 - semanticMin)
		touched = scorePostings(ix.postings[ix.sem.terms[n.term]], f, best, touched)
	}
	return touched
}
