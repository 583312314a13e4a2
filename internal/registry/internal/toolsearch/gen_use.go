//go:build ignore

// gen_use writes vectors/use.bin, the word vectors toolsearch's semantic signal reads, from
// the outputs of Google's Universal Sentence Encoder lite on single words (encode_words.js,
// run by `make use-vectors`): the Model2Vec recipe, a static table distilled from a sentence
// encoder. It centres the 512-dimensional outputs on their mean, projects them on their
// -dims leading principal components (the covariance's eigenvectors by cyclic Jacobi, in
// float64, each signed so its largest component is positive), and scales each row so its
// largest magnitude is 127, rounded to int8 (a cosine needs no other scale). The output,
// the same bytes for the same input and flags:
//
//	"USE1"                 magic
//	uint32 n, uint8 dims   little-endian
//	n words                each ended by '\n', most frequent first
//	n × dims int8          the vectors, in the words' order
package main

import (
	"bufio"
	"encoding/binary"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"sort"
	"strings"
)

const inDims = 512

func main() {
	in := flag.String("in", "", "the prefix encode_words.js wrote (.words, .f32)")
	out := flag.String("out", "vectors/use.bin", "the file to write")
	dims := flag.Int("dims", 128, "principal components to keep")
	flag.Parse()
	raw, err := os.ReadFile(*in + ".words")
	if err != nil {
		log.Fatal(err)
	}
	words := strings.Fields(string(raw))
	f32, err := os.ReadFile(*in + ".f32")
	if err != nil {
		log.Fatal(err)
	}
	if len(f32) != len(words)*inDims*4 {
		log.Fatalf("%d words but %d bytes of vectors", len(words), len(f32))
	}
	x := make([][]float64, len(words))
	for i := range x {
		x[i] = make([]float64, inDims)
		for j := range x[i] {
			x[i][j] = float64(math.Float32frombits(binary.LittleEndian.Uint32(f32[(i*inDims+j)*4:])))
		}
	}
	centre(x)
	basis := principal(covariance(x), *dims)
	if err := write(*out, words, x, basis); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %d words, %d dimensions\n", *out, len(words), *dims)
}

// centre subtracts the column means from x.
func centre(x [][]float64) {
	mean := make([]float64, inDims)
	for _, r := range x {
		for j, v := range r {
			mean[j] += v
		}
	}
	for j := range mean {
		mean[j] /= float64(len(x))
	}
	for _, r := range x {
		for j := range r {
			r[j] -= mean[j]
		}
	}
}

func covariance(x [][]float64) [][]float64 {
	c := make([][]float64, inDims)
	for i := range c {
		c[i] = make([]float64, inDims)
	}
	for _, r := range x {
		for i := 0; i < inDims; i++ {
			ri := r[i]
			ci := c[i]
			for j := i; j < inDims; j++ {
				ci[j] += ri * r[j]
			}
		}
	}
	for i := range c {
		for j := 0; j < i; j++ {
			c[i][j] = c[j][i]
		}
	}
	return c
}

// principal returns the k eigenvectors of the symmetric matrix a with the largest
// eigenvalues (cyclic Jacobi rotations until the off-diagonal mass is negligible).
func principal(a [][]float64, k int) [][]float64 {
	n := len(a)
	v := make([][]float64, n)
	for i := range v {
		v[i] = make([]float64, n)
		v[i][i] = 1
	}
	for sweep := 0; sweep < 50; sweep++ {
		off := 0.0
		for p := 0; p < n; p++ {
			for q := p + 1; q < n; q++ {
				off += a[p][q] * a[p][q]
			}
		}
		if off < 1e-22 {
			break
		}
		for p := 0; p < n; p++ {
			for q := p + 1; q < n; q++ {
				rotate(a, v, p, q)
			}
		}
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return a[order[i]][order[i]] > a[order[j]][order[j]] })
	basis := make([][]float64, k)
	for c := 0; c < k; c++ {
		col := make([]float64, n)
		top := 0.0
		for i := range col {
			col[i] = v[i][order[c]]
			if math.Abs(col[i]) > math.Abs(top) {
				top = col[i]
			}
		}
		if top < 0 {
			for i := range col {
				col[i] = -col[i]
			}
		}
		basis[c] = col
	}
	return basis
}

// rotate zeroes a[p][q] with one Jacobi rotation, accumulating it into v's columns.
func rotate(a, v [][]float64, p, q int) {
	if math.Abs(a[p][q]) < 1e-300 {
		return
	}
	theta := (a[q][q] - a[p][p]) / (2 * a[p][q])
	t := 1 / (math.Abs(theta) + math.Sqrt(theta*theta+1))
	if theta < 0 {
		t = -t
	}
	c := 1 / math.Sqrt(t*t+1)
	s := t * c
	n := len(a)
	for k := 0; k < n; k++ {
		akp, akq := a[k][p], a[k][q]
		a[k][p] = c*akp - s*akq
		a[k][q] = s*akp + c*akq
	}
	for k := 0; k < n; k++ {
		apk, aqk := a[p][k], a[q][k]
		a[p][k] = c*apk - s*aqk
		a[q][k] = s*apk + c*aqk
	}
	for k := 0; k < n; k++ {
		vkp, vkq := v[k][p], v[k][q]
		v[k][p] = c*vkp - s*vkq
		v[k][q] = s*vkp + c*vkq
	}
}

func write(path string, words []string, x, basis [][]float64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	w.WriteString("USE1")
	binary.Write(w, binary.LittleEndian, uint32(len(words)))
	w.WriteByte(byte(len(basis)))
	for _, word := range words {
		w.WriteString(word)
		w.WriteByte('\n')
	}
	y := make([]float64, len(basis))
	for _, r := range x {
		top := 0.0
		for c, b := range basis {
			s := 0.0
			for j, v := range r {
				s += v * b[j]
			}
			y[c] = s
			top = math.Max(top, math.Abs(s))
		}
		for _, s := range y {
			q := 0.0
			if top > 0 {
				q = math.Round(s / top * 127)
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
