package toolsearch

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed" // the WordNet senses
	"strconv"
	"strings"
	"sync"
)

// wordnetGz is WordNet 3.0's nouns and verbs as gen_lexicon.go keeps them: each synset's
// hypernyms and derivations, each single word's most frequent senses. WordNet 3.0
// Copyright 2006 by Princeton University; its licence is lexicon/LICENSE.
//
//go:embed lexicon/wordnet.gz
var wordnetGz []byte

// Semantic-signal constants (see the package comment).
const (
	// senseDecay weighs a word's n-th sense (0: the most frequent) at senseDecay^n.
	senseDecay = 0.7
	// hyperDecay weighs a concept reached through one more hypernym at hyperDecay of the
	// concept below it; derivDecay one reached through a derivation (lend → loan).
	hyperDecay = 0.7
	derivDecay = 0.8
	// maxDepth bounds the hypernyms climbed from a sense.
	maxDepth = 4
	// minConcept is the smallest weight a concept is kept at.
	minConcept = 0.2
)

// lexicon is the parsed WordNet data: read once per process, never written after.
type lexicon struct {
	words map[string][]concept // stemmed word → its senses, weighted by their rank
	verbs map[string]bool      // words used mostly as verbs
	hyper [][]int32            // synset → its hypernyms
	deriv [][]int32            // synset → its derivationally related synsets
}

// theLexicon is the lexicon, parsed on first use (some 30 ms, 15 MB) and shared by every
// index of the process: it is embedded data, never written after.
var theLexicon = sync.OnceValue(func() *lexicon { return parseLexicon(wordnetGz) })

// parseLexicon reads gen_lexicon.go's format; data that does not parse gives an empty
// lexicon (the search is then lexical only), never a panic.
func parseLexicon(data []byte) *lexicon {
	lx := &lexicon{words: map[string][]concept{}, verbs: map[string]bool{}}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return lx
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	n, verbs := -1, false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case n < 0:
			if c, ok := strings.CutPrefix(line, "S "); ok {
				if v, err := strconv.Atoi(c); err == nil && v >= 0 && v < 1<<22 {
					n = v
				}
			}
			if n < 0 {
				return &lexicon{words: map[string][]concept{}, verbs: map[string]bool{}}
			}
		case len(lx.hyper) < n:
			h, d, _ := strings.Cut(line, "|")
			lx.hyper = append(lx.hyper, ids(h, n))
			lx.deriv = append(lx.deriv, ids(d, n))
		case line == "V":
			verbs = true
		case line == "W":
			verbs = false
		case verbs:
			lx.verbs[line] = true
		default:
			word, rest, _ := strings.Cut(line, " ")
			k := Stem(word)
			for _, part := range strings.Split(rest, ",") {
				w := 1.0
				for _, s := range ids(part, n) {
					lx.words[k] = addConcept(lx.words[k], s, w)
					w *= senseDecay
				}
			}
		}
	}
	if len(lx.hyper) < n {
		return &lexicon{words: map[string][]concept{}, verbs: map[string]bool{}}
	}
	return lx
}

// addConcept adds id at weight w to cs, or raises its weight there to w; it reports the
// slice and whether w was new or higher.
func addConcept(cs []concept, id int32, w float64) []concept {
	for i := range cs {
		if cs[i].id == id {
			cs[i].w = max(cs[i].w, w)
			return cs
		}
	}
	return append(cs, concept{id, w})
}

// ids reads space-separated synset numbers below n.
func ids(s string, n int) []int32 {
	var out []int32
	for _, f := range strings.Fields(s) {
		if v, err := strconv.Atoi(f); err == nil && v >= 0 && v < n {
			out = append(out, int32(v))
		}
	}
	return out
}

// concept is a synset and how near it is to a word's meaning (1: one of its own senses).
type concept struct {
	id int32
	w  float64
}

// concepts are the synsets a stemmed word means or falls under: its senses, what they
// derive to, and their hypernyms up to maxDepth, each at its best weight.
func (lx *lexicon) concepts(stem string) []concept {
	senses := lx.words[stem]
	if len(senses) == 0 {
		return nil
	}
	var out []concept
	at := make(map[int32]int, 64) // concept → its place in out
	add := func(id int32, w float64) bool {
		if w < minConcept {
			return false
		}
		if i, ok := at[id]; ok {
			if out[i].w >= w {
				return false
			}
			out[i].w = w
			return true
		}
		at[id] = len(out)
		out = append(out, concept{id, w})
		return true
	}
	var climb func(id int32, w float64, depth int)
	climb = func(id int32, w float64, depth int) {
		if !add(id, w) || depth == maxDepth {
			return
		}
		for _, h := range lx.hyper[id] {
			climb(h, w*hyperDecay, depth+1)
		}
	}
	for _, s := range senses {
		climb(s.id, s.w, 0)
		for _, d := range lx.deriv[s.id] {
			climb(d, s.w*derivDecay, 1)
		}
	}
	return out
}
