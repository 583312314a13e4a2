//go:build !usevectors

package toolsearch

// theVectors is the empty table: built without the usevectors tag, the search embeds no
// word vectors and is lexical only (see vectors_embed.go).
func theVectors() *vectorTable { return &vectorTable{} }
