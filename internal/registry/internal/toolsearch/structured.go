package toolsearch

import (
	"strings"
)

// Structured ranking of plugin tools. A sql plugin's tools are named
// <connection>_<domain>_v<N>_<resource>_<operation>, one per operation of a fixed set, so
// a request to such a tool is two questions asked at once: which resource (table) and which
// operation. The index answers them apart: the resource from a second, small BM25F index
// with one document per resource (its name's words as the name, the domain as the server
// prefix, the columns as parameters), the operation from the request's form (intentOf).
// A plugin tool's score is then StructWeight × its resource's score × its operation's
// weight, in one ranking with the other tools' lexical scores.

// StructWeight scales a plugin tool's structured score against the lexical scores of the
// other tools in the same ranking.
const StructWeight = 1.5

// The operations of a plugin resource, in the order intentOf weighs them.
const (
	opFind = iota
	opList
	opGet
	opCount
	opCreate
	opUpdate
	opDelete
	opTruncate
	numOps
)

// opOf is the operation a tool name's last word names, or -1.
func opOf(word string) int {
	switch word {
	case "find":
		return opFind
	case "list":
		return opList
	case "get":
		return opGet
	case "count":
		return opCount
	case "create":
		return opCreate
	case "update":
		return opUpdate
	case "delete":
		return opDelete
	case "truncate":
		return opTruncate
	}
	return -1
}

// pluginName cuts a plugin tool's name into its resource key (all before the operation),
// its domain, its resource and its operation; ok is false for any other name.
func pluginName(name string) (key, domain, resource string, op int, ok bool) {
	cut := strings.LastIndexByte(name, '_')
	if cut <= 0 {
		return "", "", "", -1, false
	}
	op = opOf(name[cut+1:])
	if op < 0 {
		return "", "", "", -1, false
	}
	key = name[:cut]
	// The version: "_v" then digits then "_", the last such in the key.
	for i := len(key) - 3; i > 0; i-- {
		if key[i] != '_' || key[i+1] != 'v' {
			continue
		}
		j := i + 2
		for j < len(key) && key[j] >= '0' && key[j] <= '9' {
			j++
		}
		if j == i+2 || j >= len(key)-1 || key[j] != '_' {
			continue
		}
		head := key[:i]
		if u := strings.IndexByte(head, '_'); u > 0 {
			head = head[u+1:] // the connection comes first, the domain after it
		}
		return key, head, key[j+1:], op, true
	}
	return "", "", "", -1, false
}

// resources is the structure of a catalogue's plugin tools.
type resources struct {
	index *Index          // one document per resource
	ops   [][numOps]int32 // per resource, the document of each operation (-1 when none)
	of    []int32         // per document of the catalogue, its resource, or -1
	op    []int8          // per document of the catalogue, its operation
}

// newResources finds the plugin resources among docs; nil when there are fewer than two.
func newResources(docs []Doc) *resources {
	rs := &resources{of: make([]int32, len(docs)), op: make([]int8, len(docs))}
	byKey := map[string]int32{}
	var rdocs []Doc
	for i, d := range docs {
		rs.of[i] = -1
		key, domain, resource, op, ok := pluginName(d.Name)
		if !ok {
			continue
		}
		r, seen := byKey[key]
		if !seen {
			r = int32(len(rdocs))
			byKey[key] = r
			rdocs = append(rdocs, Doc{Name: domain + "__" + resource})
			var none [numOps]int32
			for o := range none {
				none[o] = -1
			}
			rs.ops = append(rs.ops, none)
		}
		rs.of[i], rs.op[i] = r, int8(op)
		rs.ops[r][op] = int32(i)
		rd := &rdocs[r]
		if op == opCreate || op == opUpdate {
			if len(d.Params) > len(rd.Params) {
				rd.Params = d.Params // the columns
			}
		}
		if op == opGet {
			rd.Description = d.Description
		}
	}
	if len(rdocs) < 2 {
		return nil
	}
	rs.index = New(rdocs)
	return rs
}

// structure replaces the scores of the plugin tools by their structured scores, adds the
// plugin tools of matching resources to matched and drops those of resources that do not
// match. It returns matched and the share of the query's terms the best resource matched.
func (ix *Index) structure(query string, matched []int32, scores []float64, lexicalBest float64) ([]int32, float64) {
	rs := ix.res
	hits, coverage := rs.index.rank(query, rs.index.n)
	scale := 0.0
	if len(hits) > 0 {
		scale = StructWeight * lexicalBest / hits[0].Score
	}
	keep := matched[:0]
	for _, d := range matched {
		if rs.of[d] < 0 {
			keep = append(keep, d)
		} else {
			scores[d] = 0
		}
	}
	w := intentOf(query)
	for _, h := range hits {
		for op, d := range rs.ops[h.Doc] {
			if d < 0 || w[op] == 0 {
				continue
			}
			scores[d] = scale * h.Score * w[op]
			keep = append(keep, d)
		}
	}
	return keep, coverage
}

// lexicalBest is the best lexical score of a plugin tool among matched, before the priors:
// the structured scores are scaled so that the best resource's best operation has it, which
// keeps them on the lexical scores' scale whatever the catalogue's size.
func (rs *resources) lexicalBest(matched []int32, scores []float64) float64 {
	best := 0.0
	for _, d := range matched {
		if rs.of[d] >= 0 && scores[d] > best {
			best = scores[d]
		}
	}
	return best
}
