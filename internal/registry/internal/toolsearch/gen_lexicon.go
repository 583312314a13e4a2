//go:build ignore

// gen_lexicon writes lexicon/wordnet.gz, the word senses toolsearch's semantic signal reads,
// from WordNet 3.0's database files (Debian's wordnet-base installs them under
// /usr/share/wordnet; `make lexicon` runs this). What it keeps, as gzip'd text:
//
//	S <n>                      then n lines, one per synset (numbered 0..n-1 in the order
//	h1 h2 … | d1 d2 …          written): its hypernyms, then its derivationally related
//	                           synsets of the other part of speech (nouns and verbs only)
//	V                          then the single-word lemmas used mostly as verbs (their
//	word …                     verb senses tagged in WordNet's corpus outnumber their noun
//	                           and adjective ones): a query that starts with one asks for
//	                           something to be done
//	W                          then one line per single-word lemma (and irregular form):
//	word s1 s2 … , t1 t2 …     its synsets, most frequent sense first, at most maxSenses
//	                           per part of speech, the parts of speech apart (by ",")
//
// Multi-word lemmas are left out (a query is cut into words), and so are adverbs. An
// adjective has no hypernyms: it is kept for what it derives from or pertains to
// (allergic → allergy).
package main

import (
	"bufio"
	"compress/gzip"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

const maxSenses = 3

type synset struct {
	hyper, deriv []string // keys "n12345678"
}

func main() {
	dict := flag.String("dict", "/usr/share/wordnet", "WordNet database directory")
	out := flag.String("out", "lexicon/wordnet.gz", "output file")
	flag.Parse()
	syn := map[string]*synset{}
	var order []string
	for _, pos := range []string{"noun", "verb", "adj"} {
		readData(filepath.Join(*dict, "data."+pos), syn, &order)
	}
	id := make(map[string]int, len(order))
	for i, k := range order {
		id[k] = i
	}
	words := map[string][][]int{}
	tagged := map[string]map[string]int{}
	for _, pos := range []string{"noun", "verb", "adj"} {
		readIndex(filepath.Join(*dict, "index."+pos), pos[:1], id, words, tagged)
	}
	for _, pos := range []string{"noun", "verb", "adj"} {
		readExceptions(filepath.Join(*dict, pos+".exc"), words)
	}
	f, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
	w := bufio.NewWriter(zw)
	fmt.Fprintf(w, "S %d\n", len(order))
	ids := func(keys []string) string {
		var s []string
		for _, k := range keys {
			if i, ok := id[k]; ok {
				s = append(s, strconv.Itoa(i))
			}
		}
		return strings.Join(s, " ")
	}
	for _, k := range order {
		fmt.Fprintf(w, "%s|%s\n", ids(syn[k].hyper), ids(syn[k].deriv))
	}
	w.WriteString("V\n")
	var verbs []string
	for lemma, c := range tagged {
		if c["v"] > 0 && c["v"] > c["n"] && c["v"] > c["a"] {
			verbs = append(verbs, lemma)
		}
	}
	sort.Strings(verbs)
	for _, v := range verbs {
		fmt.Fprintln(w, v)
	}
	w.WriteString("W\n")
	keys := make([]string, 0, len(words))
	for k := range words {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var parts []string
		for _, p := range words[k] {
			var s []string
			for _, i := range p {
				s = append(s, strconv.Itoa(i))
			}
			parts = append(parts, strings.Join(s, " "))
		}
		fmt.Fprintf(w, "%s %s\n", k, strings.Join(parts, " , "))
	}
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}

func lines(path string, each func(fields []string)) {
	f, err := os.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "  ") {
			continue // the licence header
		}
		if i := strings.Index(l, " | "); i >= 0 {
			l = l[:i] // the gloss
		}
		each(strings.Fields(l))
	}
	if err := sc.Err(); err != nil {
		log.Fatal(err)
	}
}

// readData reads a data.* file's synsets: their hypernyms and derivations.
func readData(path string, syn map[string]*synset, order *[]string) {
	lines(path, func(f []string) {
		pos := f[2]
		if pos == "s" {
			pos = "a"
		}
		key := pos + f[0]
		nw, _ := strconv.ParseInt(f[3], 16, 32)
		i := 4 + 2*int(nw)
		np, _ := strconv.Atoi(f[i])
		s := &synset{}
		for p := 0; p < np; p++ {
			sym, off, tpos := f[i+1+4*p], f[i+2+4*p], f[i+3+4*p]
			switch {
			case sym == "@" || sym == "@i":
				s.hyper = append(s.hyper, tpos+off)
			case (sym == "+" || sym == "\\") && (tpos == "n" || tpos == "v") && tpos != pos:
				s.deriv = append(s.deriv, tpos+off)
			}
		}
		syn[key] = s
		*order = append(*order, key)
	})
}

// readIndex reads an index.* file: each single-word lemma's synsets, most frequent first.
func readIndex(path, pos string, id map[string]int, words map[string][][]int, tagged map[string]map[string]int) {
	lines(path, func(f []string) {
		lemma := f[0]
		if strings.ContainsAny(lemma, "_-.'0123456789") {
			return
		}
		nsyn, _ := strconv.Atoi(f[2])
		np, _ := strconv.Atoi(f[3])
		if tagged[lemma] == nil {
			tagged[lemma] = map[string]int{}
		}
		tagged[lemma][pos], _ = strconv.Atoi(f[4+np+1])
		offs := f[4+np+2:]
		if len(offs) > nsyn {
			offs = offs[:nsyn]
		}
		if len(offs) > maxSenses {
			offs = offs[:maxSenses]
		}
		var part []int
		for _, o := range offs {
			if i, ok := id[pos+o]; ok {
				part = append(part, i)
			}
		}
		if len(part) > 0 {
			words[lemma] = append(words[lemma], part)
		}
	})
}

// readExceptions gives an irregular form (children, lent) its base form's synsets.
func readExceptions(path string, words map[string][][]int) {
	lines(path, func(f []string) {
		if len(f) < 2 || strings.ContainsAny(f[0], "_-.'") {
			return
		}
		if _, ok := words[f[0]]; !ok {
			words[f[0]] = words[f[1]]
		}
	})
}
