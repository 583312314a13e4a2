// Package toolsearch ranks tool definitions against a free-text query: BM25F over a tool's
// name, server prefix, parameter names and descriptions, a fixed synonym table and lexical
// priors, with no model, no embedded data and no I/O.
//
// The ranking is BM25F (Robertson and Zaragoza's field-weighted BM25): a term's count in
// each field is length-normalised within that field and weighted, the weighted counts are
// summed into one pseudo-frequency, and that is saturated once:
//
//	tf(t,d)    = Σ_f W_f · count_f(t,d) / (1 − B_f + B_f · len_f(d)/avglen_f)
//	score(q,d) = Σ_{t∈q} idf(t) · tf(t,d) / (K1 + tf(t,d))
//	idf(t)     = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))
//
// with K1 = 1.2 and, per field, (W, B): the tool's own name 4.0, 0.3; its server prefix
// (what comes before the first "__" of server__tool) 1.0, 0; parameter names 1.5, 0.5;
// the description 1.0, 0.75; parameter descriptions 0.5, 0.75. One saturation over all
// fields (rather than per-field BM25 summed) keeps a word repeated in the name and the
// description from counting twice in full, and the name's weight makes a tool named for a
// word outrank one that only mentions it. df counts a document once whatever its fields.
//
// Last, a document's score is multiplied by 1 + NameBonus × the share of its own name's
// terms that the query has (exact terms, not synonyms): with every field saturated, "read
// file" would otherwise rank read_multiple_files and read_file by description length.
// Two priors follow, both lexical: a read-only document's score is multiplied by ReadBonus
// when no query term asks for a change (changeWords), since a table's create names every
// column in its parameters and would outrank its find for a query that only names the
// data; and a document whose own name says it counts, by CountPenalty when no query term
// asks for a number (countWords).
//
// A query term that the fixed synonym table (synonyms.go) links to other words also
// matches those, at SynonymWeight of an exact match's score; per document the better of
// the exact and synonym scores counts, never their sum. A query term no document has also
// matches its kin, terms that differ from it only in their last letters (kin.go: prescribed
// / prescription), at the same weight. The priors are in
// priors.go (a question or a request for a number reads; a verb-led request that names no
// operation favours the tool that creates); Rank (confidence.go) never answers empty and
// says how sure it is. Parameters over half the documents share are left out. Text is cut
// into terms by Tokens. A plugin table's tools (connection_domain_v1_table_operation) are
// ranked apart, by their table's score in an index of tables times the weight of their
// operation for the request's form (structured.go, intent.go), in the same ranking.
package toolsearch

import (
	"container/heap"
	"math"
	"slices"
	"strings"
)

// Ranking constants (see the package comment).
const (
	// K1 is BM25's term-frequency saturation. The unit fixture's top-3 hit rate (registry's
	// TestSearchHitRate, 45 queries) is the same, 43 of 45, for K1 from 1.2 to 3.0 and
	// NameBonus from 0.25 to 0.5: the usual 1.2 is kept.
	K1 = 1.2
	// SynonymWeight scales the score of a match through the synonym table.
	SynonymWeight = 0.5
	// NameBonus raises a document's score by this share of it times the part of its own
	// name's terms the query has: read_file before read_multiple_files for "read file".
	NameBonus = 0.25
	// ReadBonus multiplies the score of a read-only tool for a query with no word that asks
	// for a change (changeWords).
	ReadBonus = 2.0
	// CountPenalty multiplies the score of a tool whose own name says it counts, for a
	// query with no word that asks for a number (countWords).
	CountPenalty = 0.5
	// commonMin is the smallest catalogue whose common parameters are left out
	// (commonParams).
	commonMin = 8
)

// Doc is one tool as the index sees it.
type Doc struct {
	Name        string   // the exposed name: server__tool, or a plugin's plugin_group_v1_table_op
	Description string   // the tool's description
	Params      []string // the input schema's property names
	ParamText   string   // the properties' descriptions, joined
	ReadOnly    bool     // the tool says it changes nothing (annotations.readOnlyHint)
}

// Hit is one search result: the index of the Doc in the slice given to New, and its score.
type Hit struct {
	Doc   int
	Score float64
}

// Index is an inverted index of docs. It is never written after New, so any number of
// goroutines may Search it at once.
type Index struct {
	n        int
	nameLen  []int32              // the number of distinct terms of each document's own name
	postings map[string][]posting // term → its documents, in document order
	synonyms map[string][]string  // stemmed word → the other stems of its group
	readOnly []bool               // per document: it changes nothing
	counter  []bool               // per document: its own name says it counts
	creator  []bool               // per document: its own name says it creates
	changes  map[string]bool      // stems that ask for a change (changeWords)
	counting map[string]bool      // stems that ask for a number (countWords)
	creating map[string]bool      // stems of the create group
	explicit map[string]bool      // stems that name an operation other than create
	requests map[string]bool      // words that, leading a query, ask for something done (requestVerbs)
	res      *resources           // the plugin tools' resources and operations (structured.go), or nil
	byPrefix map[string][]string  // the first kinLen letters of a term → the terms that start so (kin.go)
}

// posting is one document a term occurs in, with the term's full BM25F score there
// (idf included): a query only adds these up. inName is set when the term is in the
// document's own name.
type posting struct {
	doc    int32
	inName bool
	score  float64
}

// The fields of a document.
const (
	fieldName = iota
	fieldServer
	fieldParams
	fieldDesc
	fieldParamText
	numFields
)

// fieldWeight is a field's W and B (see the package comment).
func fieldWeight(f int) (w, b float64) {
	switch f {
	case fieldName:
		return 4.0, 0.3
	case fieldServer:
		return 1.0, 0
	case fieldParams:
		return 1.5, 0.5
	case fieldDesc:
		return 1.0, 0.75
	default: // fieldParamText
		return 0.5, 0.75
	}
}

// docTerms is one document's term counts and field lengths, while an index is built.
type docTerms struct {
	counts map[string]*[numFields]float64
	order  []string // terms in first-seen order, so postings are built deterministically
	lens   [numFields]int
}

func (dt *docTerms) add(f int, terms []string) {
	for _, t := range terms {
		c := dt.counts[t]
		if c == nil {
			c = new([numFields]float64)
			dt.counts[t] = c
			dt.order = append(dt.order, t)
		}
		c[f]++
	}
	dt.lens[f] += len(terms)
}

// splitName cuts an exposed name into its server prefix and the tool's own part, at the
// first "__"; a name without one is all tool.
func splitName(name string) (server, tool string) {
	if s, t, ok := strings.Cut(name, "__"); ok && s != "" && t != "" {
		return s, t
	}
	return "", name
}

// New builds the index of docs. Hits name docs by their position in the slice.
func New(docs []Doc) *Index {
	ix := &Index{n: len(docs), nameLen: make([]int32, len(docs)), postings: map[string][]posting{}, synonyms: synonymTable(),
		readOnly: make([]bool, len(docs)), counter: make([]bool, len(docs)), creator: make([]bool, len(docs)),
		changes: changeStems(), counting: stemSet(countWords()), creating: stemSet(groupOf("create")), explicit: explicitStems(),
		requests: stemSet(requestVerbs())}
	all := make([]docTerms, len(docs))
	common := commonParams(docs)
	var total [numFields]int
	df := map[string]int{}
	for i, d := range docs {
		dt := &all[i]
		dt.counts = map[string]*[numFields]float64{}
		ix.readOnly[i] = d.ReadOnly
		server, tool := splitName(d.Name)
		own := Tokens(tool)
		ix.counter[i] = slices.ContainsFunc(own, func(t string) bool { return t == Stem("count") })
		ix.creator[i] = slices.ContainsFunc(own, func(t string) bool { return ix.creating[t] })
		dt.add(fieldName, own)
		dt.add(fieldServer, Tokens(server))
		for _, p := range d.Params {
			if !common[p] {
				dt.add(fieldParams, Tokens(p))
			}
		}
		dt.add(fieldDesc, Tokens(d.Description))
		for _, l := range strings.Split(d.ParamText, "\n") {
			if !common[l] {
				dt.add(fieldParamText, Tokens(l))
			}
		}
		for f := range numFields {
			total[f] += dt.lens[f]
		}
		for _, t := range dt.order {
			df[t]++
		}
	}
	var avg [numFields]float64
	for f := range numFields {
		avg[f] = 1
		if len(docs) > 0 && total[f] > 0 {
			avg[f] = float64(total[f]) / float64(len(docs))
		}
	}
	for i := range all {
		dt := &all[i]
		for _, t := range dt.order {
			counts := dt.counts[t]
			tf := pseudoFrequency(counts, &dt.lens, &avg)
			idf := math.Log(1 + (float64(ix.n)-float64(df[t])+0.5)/(float64(df[t])+0.5))
			inName := counts[fieldName] > 0
			if inName {
				ix.nameLen[i]++
			}
			ix.postings[t] = append(ix.postings[t], posting{doc: int32(i), inName: inName, score: idf * tf / (K1 + tf)})
		}
	}
	ix.byPrefix = prefixTable(ix.postings)
	ix.res = newResources(docs)
	return ix
}

// commonParams are the parameter names and parameter description lines that over half the
// documents have (a plugin's connectionId and "The connection to use."), for catalogues of
// commonMin documents or more: they tell no tool apart, yet as terms they would make every
// tool of a plugin match "connections" as well as the utility tool named for them.
func commonParams(docs []Doc) map[string]bool {
	common := map[string]bool{}
	if len(docs) < commonMin {
		return common
	}
	n := map[string]int{}
	for _, d := range docs {
		seen := map[string]bool{}
		for _, p := range d.Params {
			seen[p] = true
		}
		for _, l := range strings.Split(d.ParamText, "\n") {
			seen[l] = l != ""
		}
		for k, ok := range seen {
			if ok {
				n[k]++
			}
		}
	}
	for k, c := range n {
		if 2*c > len(docs) {
			common[k] = true
		}
	}
	return common
}

// pseudoFrequency is BM25F's weighted, length-normalised count of one term in a document.
func pseudoFrequency(counts *[numFields]float64, lens *[numFields]int, avg *[numFields]float64) float64 {
	tf := 0.0
	for f := range numFields {
		if counts[f] == 0 {
			continue
		}
		w, b := fieldWeight(f)
		tf += w * counts[f] / (1 - b + b*float64(lens[f])/avg[f])
	}
	return tf
}

// Search returns the k documents that best match query, best first, ties broken by the
// lower document index. A document that matches no query term is never returned. k <= 0,
// or a query with no terms once stop words are dropped, returns none.
func (ix *Index) Search(query string, k int) []Hit {
	hits, _ := ix.rank(query, k)
	return hits
}

// rank is Search, and the share of the query's terms the best hit matched (exactly or
// through the synonym table).
func (ix *Index) rank(query string, k int) ([]Hit, float64) {
	if ix == nil || k <= 0 || ix.n == 0 {
		return nil, 0
	}
	terms := Tokens(query)
	slices.Sort(terms)
	terms = slices.Compact(terms)
	if len(terms) == 0 {
		return nil, 0
	}
	scores := make([]float64, 2*ix.n)
	scores, best := scores[:ix.n], scores[ix.n:] // best: one query term's score per document
	counts := make([]int32, 2*ix.n)
	named, lexical := counts[:ix.n], counts[ix.n:] // per document, query terms in its own name; matched by word
	var touched, matched []int32
	for _, t := range terms {
		touched = touched[:0]
		touched = ix.scoreTerm(t, 1, best, touched)
		for _, p := range ix.postings[t] {
			if p.inName {
				named[p.doc]++
			}
		}
		for _, s := range ix.synonyms[t] {
			touched = ix.scoreTerm(s, SynonymWeight, best, touched)
		}
		if len(ix.postings[t]) == 0 {
			for _, s := range ix.kin(t) {
				touched = ix.scoreTerm(s, SynonymWeight, best, touched)
			}
		}
		for _, d := range touched {
			lexical[d]++
		}
		for _, d := range touched {
			if scores[d] == 0 {
				matched = append(matched, d)
			}
			scores[d] += best[d]
			best[d] = 0
		}
	}
	if len(matched) == 0 {
		return nil, 0
	}
	ix.priors(query, terms, matched, scores)
	resCoverage := 0.0
	if ix.res != nil {
		if matched, resCoverage = ix.structure(query, matched, scores, ix.res.lexicalBest(matched, scores)); len(matched) == 0 {
			return nil, 0
		}
	}
	hits := ix.best(matched, scores, named, k)
	if ix.res != nil && ix.res.of[hits[0].Doc] >= 0 {
		return hits, resCoverage
	}
	return hits, float64(lexical[hits[0].Doc]) / float64(len(terms))
}

// best ranks the matched documents: their summed scores with the name bonus (named counts
// the query terms in each one's own name), the k best kept, best first.
func (ix *Index) best(matched []int32, scores []float64, named []int32, k int) []Hit {
	top := make(worstFirst, 0, min(k, len(matched)))
	for _, d := range matched {
		coverage := 0.0
		if ix.nameLen[d] > 0 {
			coverage = float64(named[d]) / float64(ix.nameLen[d])
		}
		h := Hit{Doc: int(d), Score: scores[d] * (1 + NameBonus*coverage)}
		switch {
		case len(top) < k:
			heap.Push(&top, h)
		case better(h, top[0]):
			top[0] = h
			heap.Fix(&top, 0)
		}
	}
	hits := []Hit(top)
	slices.SortFunc(hits, func(a, b Hit) int {
		if better(a, b) {
			return -1
		}
		return 1 // no two hits are equal: their Doc differs
	})
	return hits
}

// better tells whether a ranks before b: a higher score, or the same and a lower Doc.
func better(a, b Hit) bool {
	return a.Score > b.Score || (a.Score == b.Score && a.Doc < b.Doc)
}

// worstFirst is a heap of the best hits so far with the worst of them on top, so a
// search keeps k hits, not every match, and sorts only those.
type worstFirst []Hit

func (h worstFirst) Len() int           { return len(h) }
func (h worstFirst) Less(i, j int) bool { return better(h[j], h[i]) }
func (h worstFirst) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }

// Push adds a hit (container/heap).
func (h *worstFirst) Push(x any) { *h = append(*h, x.(Hit)) }

// Pop removes the last hit (container/heap).
func (h *worstFirst) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// scoreTerm raises best[d] to factor × the term's score in each document d it occurs in,
// and returns touched with the documents whose best was zero before.
func (ix *Index) scoreTerm(term string, factor float64, best []float64, touched []int32) []int32 {
	return scorePostings(ix.postings[term], factor, best, touched)
}

// scorePostings is scoreTerm over one posting list.
func scorePostings(ps []posting, factor float64, best []float64, touched []int32) []int32 {
	for _, p := range ps {
		v := factor * p.score
		if v <= best[p.doc] {
			continue
		}
		if best[p.doc] == 0 {
			touched = append(touched, p.doc)
		}
		best[p.doc] = v
	}
	return touched
}
