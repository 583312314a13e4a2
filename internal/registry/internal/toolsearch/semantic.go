package toolsearch

import (
	"math"
	"slices"
	"strings"
	"unicode"
)

// The semantic signal: word vectors distilled from a sentence encoder (vectors.go; the
// Model2Vec recipe: the encoder run once per word, offline) give matches that share no
// letters. It is built only with the usevectors build tag (vectors_embed.go); without it
// the table is empty and every function here returns at once. Two uses were measured on
// T1's tuned query sets (docs/performance.md, "Word vectors from a sentence encoder"):
//
// Word bridging: a query word that no document has is compared with the terms of the
// tools' own names, less operation words; a name term at cosine semanticMin or more
// (semanticNear at most) matches at SemanticWeight × its cosine's share above the minimum,
// the better of the word's matches per document, as a synonym does. It gained no hit and
// lost one or two at every setting tried (weight 0.3 to 0.5, cosine 0.45 to 0.7), so its
// weight is 0.
//
// Sentence: the query's mean vector (its words', stop and operation words left out, each
// weighted by ln(rank + 10), rank being the word's frequency rank) is compared with each
// document's (the unit mean of its own name's words plus DescShare × that of its
// description's); a document at cosine sentenceMin or more gains SentenceWeight × the top
// lexical score × its cosine's share above the minimum. Only the index of plugin tables
// (structured.go) uses it: on the tools' own index it lost hits among tools already
// matched by word.
const (
	// SemanticWeight scales the score of a word-bridging match at cosine 1 (0: off).
	SemanticWeight = 0
	// semanticMin is the smallest cosine at which a query word stands in for a name term.
	semanticMin = 0.45
	// semanticNear bounds the name terms one query word meets through the vectors.
	semanticNear = 16
	// SentenceWeight scales the sentence match against the best lexical score.
	SentenceWeight = 0.3
	// sentenceMin is the smallest cosine of a query and a document that counts.
	sentenceMin = 0.3
	// DescShare is the weight of a document's description in its mean vector, against its
	// own name's 1.
	DescShare = 1
	// sentenceTablesOnly keeps the sentence match to the index of plugin tables.
	sentenceTablesOnly = true
)

// semanticIndex is an index's view of the word vectors: its name terms that the table knows,
// with their unit vectors, and each document's mean vector.
type semanticIndex struct {
	vt      *vectorTable
	dims    int
	terms   []string  // sorted
	vecs    []float32 // len(terms) × dims
	docs    []float32 // n × dims, unit (zero when none of a document's words is known)
	skipped map[string]bool
}

// newSemanticIndex gathers the vectors of the index's name terms and documents, less the
// words of operations (the synonym table's, the change and count words): the priors and
// the synonym table read those, and a query word near one (number: create, find) would only
// pull every tool of that operation.
func newSemanticIndex(ix *Index, docs []Doc) *semanticIndex {
	vt := theVectors()
	si := &semanticIndex{vt: vt, dims: vt.dims}
	if vt.dims == 0 {
		return si
	}
	si.skipped = map[string]bool{}
	for s := range ix.synonyms {
		si.skipped[s] = true
	}
	for s := range ix.changes {
		si.skipped[s] = true
	}
	for s := range ix.counting {
		si.skipped[s] = true
	}
	for t, ps := range ix.postings {
		if si.skipped[t] {
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
	si.docs = make([]float32, len(docs)*vt.dims)
	name, desc, scratch := make([]float32, vt.dims), make([]float32, vt.dims), make([]float32, vt.dims)
	for i, d := range docs {
		_, tool := splitName(d.Name)
		clear(name)
		clear(desc)
		si.mean(tool, name, scratch)
		si.mean(d.Description, desc, scratch)
		dst := si.docs[i*vt.dims : (i+1)*vt.dims]
		for j := range dst {
			dst[j] = name[j] + DescShare*desc[j]
		}
		unit(dst)
	}
	return si
}

// mean writes into dst the unit mean of the vectors of text's words that the table knows,
// less stop and operation words, each weighted by its rarity; dst stays zero when none is.
func (si *semanticIndex) mean(text string, dst, scratch []float32) {
	for _, w := range words(text) {
		w = strings.ToLower(w)
		if isStopWord(w) || len(w) < 2 {
			continue
		}
		s := Stem(w)
		if si.skipped[s] {
			continue
		}
		r, ok := si.vt.row(w, s)
		if !ok || !si.vt.vector(r, scratch) {
			continue
		}
		wt := float32(math.Log(float64(r) + 10))
		for j, x := range scratch {
			dst[j] += wt * x
		}
	}
	unit(dst)
}

// unit scales v to length 1 (a zero vector stays zero).
func unit(v []float32) {
	var n float32
	for _, x := range v {
		n += x * x
	}
	if n == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(float64(n)))
	for i := range v {
		v[i] *= inv
	}
}

// bridging tells whether word bridging is on and has terms to bridge to.
func (si *semanticIndex) bridging() bool {
	return SemanticWeight > 0 && si.dims > 0 && len(si.terms) > 0
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
	r, ok := si.vt.row(w, t)
	if !ok || !si.vt.vector(r, q) {
		return out
	}
	for i := range si.terms {
		if c := dot(si.vecs[i*si.dims:(i+1)*si.dims], q); c >= semanticMin && si.terms[i] != t {
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

func dot(a, b []float32) float32 {
	var c float32
	for j, x := range a {
		c += x * b[j]
	}
	return c
}

// scoreSemantic, for a query term t (from word w) that no document has, raises best[d]
// to each neighbour's weighted score in the documents it occurs in (see SemanticWeight),
// and returns touched with the documents newly met.
func (ix *Index) scoreSemantic(w, t string, best []float64, touched []int32) []int32 {
	si := ix.sem
	if !si.bridging() || len(ix.postings[t]) > 0 {
		return touched
	}
	q := make([]float32, si.dims)
	for _, n := range si.neighbours(w, t, q, make([]near, 0, 16)) {
		f := SemanticWeight * float64(n.cos-semanticMin) / (1 - semanticMin)
		touched = scorePostings(ix.postings[si.terms[n.term]], f, best, touched)
	}
	return touched
}

// sentence adds the sentence match to scores (see SentenceWeight) and returns matched
// with the documents it newly met.
func (ix *Index) sentence(query string, matched []int32, scores []float64) []int32 {
	si := ix.sem
	if si.dims == 0 || SentenceWeight == 0 || (sentenceTablesOnly && !ix.tables) {
		return matched
	}
	q, scratch := make([]float32, si.dims), make([]float32, si.dims)
	si.mean(query, q, scratch)
	top := 0.0
	for _, d := range matched {
		top = max(top, scores[d])
	}
	if top == 0 {
		top = 1
	}
	for d := range ix.n {
		c := dot(si.docs[d*si.dims:(d+1)*si.dims], q)
		if c < sentenceMin {
			continue
		}
		if scores[d] == 0 {
			matched = append(matched, int32(d))
		}
		scores[d] += SentenceWeight * top * float64(c-sentenceMin) / (1 - sentenceMin)
	}
	return matched
}
