package toolsearch

import (
	"math"
	"slices"
	"strings"
)

// senseField indexes each document's meanings: the WordNet concepts (lexicon.go) of the
// words of its own name (at 1) and of its description's first sentence (at descSense: the
// rest is often a list of fields, which the lexical fields have), each concept
// counted at its weight, scored as one BM25 field of its own. A query word then meets a
// tool through a concept both fall under (kids → child ← pupils, lorries → truck → motor
// vehicle ← vehicles), at SemanticWeight of an exact match.
func (ix *Index) senseField(docs []Doc) map[int32][]posting {
	memo := map[string][]concept{}
	of := func(t string) []concept {
		c, ok := memo[t]
		if !ok {
			c = ix.lx.concepts(t)
			memo[t] = c
		}
		return c
	}
	counts := make([]map[int32]float64, len(docs))
	lens := make([]float64, len(docs))
	df := map[int32]int{}
	total := 0.0
	for i, d := range docs {
		m := map[int32]float64{}
		add := func(terms []string, w float64) {
			slices.Sort(terms)
			for j, t := range terms {
				if j > 0 && terms[j-1] == t {
					continue
				}
				n := 1.0
				for k := j + 1; k < len(terms) && terms[k] == t; k++ {
					n++
				}
				for _, c := range of(t) {
					m[c.id] += n * w * c.w
					lens[i] += n * w * c.w
				}
			}
		}
		_, tool := splitName(d.Name)
		add(Tokens(tool), 1)
		add(Tokens(firstSentence(d.Description)), descSense)
		for c := range m {
			df[c]++
		}
		counts[i], total = m, total+lens[i]
	}
	avg := 1.0
	if len(docs) > 0 && total > 0 {
		avg = total / float64(len(docs))
	}
	out := map[int32][]posting{}
	for i, m := range counts {
		for c, n := range m {
			if float64(df[c]) > maxConceptShare*float64(len(docs)) {
				continue
			}
			tf := senseW * n / (1 - senseB + senseB*lens[i]/avg)
			idf := math.Log(1 + (float64(len(docs))-float64(df[c])+0.5)/(float64(df[c])+0.5))
			out[c] = append(out[c], posting{doc: int32(i), score: idf * tf / (K1 + tf)})
		}
	}
	return out
}

// firstSentence is text up to its first ". " or newline (all of it when there is none).
func firstSentence(text string) string {
	if i := strings.Index(text, ". "); i >= 0 {
		text = text[:i]
	}
	if i := strings.IndexByte(text, '\n'); i >= 0 {
		text = text[:i]
	}
	return text
}
