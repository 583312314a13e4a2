package toolsearch

import (
	"slices"
	"strings"
)

// Confidence says how sure a ranking is, for the model that reads it.
type Confidence string

// The confidences, surest first.
const (
	// High: the best tool matched at least half the query's words (or their synonyms)
	// and scored ClearLead times the next, or had no rival.
	High Confidence = "high"
	// Medium: the best tool matched some of the query's words.
	Medium Confidence = "medium"
	// None: nothing matched; the tools returned share a word's first letters with the
	// query, or, when no tool does, the catalogue's first tool comes alone.
	None Confidence = "none"
)

// KeepShare drops from a ranking the hits scoring under this share of the best one's:
// they would only cost the model tokens (each is a whole definition it reads and keeps in
// its conversation).
const KeepShare = 0.25

// cut is hits less those under KeepShare of the best.
func cut(hits []Hit) []Hit {
	for i, h := range hits {
		if h.Score < KeepShare*hits[0].Score {
			return hits[:i]
		}
	}
	return hits
}

// ClearLead is how many times the next tool's score the best one's must be for High.
const ClearLead = 1.25

// prefixLen is how many first letters a query word and a tool's word must share to stand
// in for each other when nothing matches (maintenance / maint_window).
const prefixLen = 4

// UsualMax is how many of the usual documents RankOr returns when no word matches.
const UsualMax = 3

// Rank is Search that never comes back empty while the index has documents and k > 0:
// when no document matches, it returns those sharing a word's first prefixLen letters
// with the query (less those under KeepShare of the best), or else the first document
// alone, at confidence None. It also says how sure the ranking is.
func (ix *Index) Rank(query string, k int) ([]Hit, Confidence) { return ix.RankOr(query, k, nil) }

// RankOr is Rank that, when not even a word's first letters match, returns the first
// UsualMax (at most k) of the documents usual gives, best first (the agent's most-used
// tools, which are likelier than the catalogue's first one), before falling back to the
// first document. usual is called only then; nil or an empty answer leaves Rank's.
func (ix *Index) RankOr(query string, k int, usual func() []int) ([]Hit, Confidence) {
	if ix == nil || k <= 0 || ix.n == 0 {
		return nil, None
	}
	hits, coverage := ix.rank(query, k)
	hits = cut(hits)
	switch {
	case len(hits) == 0:
		return ix.fallback(query, k, usual), None
	case coverage >= 0.5 && (len(hits) == 1 || hits[0].Score >= ClearLead*hits[1].Score):
		return hits, High
	}
	return hits, Medium
}

// fallback ranks by shared first letters, else returns the usual documents, else the
// first document (score 0): with no clue which tool is meant, one definition costs the
// model less than k, and the answer's text asks it for other words.
func (ix *Index) fallback(query string, k int, usual func() []int) []Hit {
	var stems []string
	for _, t := range Tokens(query) {
		if len(t) >= prefixLen {
			stems = append(stems, t[:prefixLen])
		}
	}
	var terms []string
	if len(stems) > 0 {
		for t := range ix.postings {
			if slices.ContainsFunc(stems, func(p string) bool { return strings.HasPrefix(t, p) }) {
				terms = append(terms, t)
			}
		}
	}
	slices.Sort(terms) // the sums below in one order: the same answer every time
	scores := make([]float64, ix.n)
	var matched []int32
	for _, t := range terms {
		for _, p := range ix.postings[t] {
			if scores[p.doc] == 0 {
				matched = append(matched, p.doc)
			}
			scores[p.doc] += p.score
		}
	}
	if len(matched) > 0 {
		return cut(ix.best(matched, scores, make([]int32, ix.n), k))
	}
	if usual != nil {
		var hits []Hit
		for _, d := range usual() {
			if len(hits) == min(k, UsualMax) {
				break
			}
			if d >= 0 && d < ix.n && !slices.ContainsFunc(hits, func(h Hit) bool { return h.Doc == d }) {
				hits = append(hits, Hit{Doc: d})
			}
		}
		if len(hits) > 0 {
			return hits
		}
	}
	return []Hit{{Doc: 0}}
}
