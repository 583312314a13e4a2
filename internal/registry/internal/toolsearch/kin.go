package toolsearch

import "slices"

// Word kin: a query term that no document has may be a derived form of one a document
// has, which the stemmer leaves apart (prescribed / prescription, inspected / inspection,
// absent / absence). Such a term also matches the terms that share its first kinLen
// letters or more and differ from it only in their last few letters, at SynonymWeight,
// as a synonym does.

// kinLen is how many first letters a term and its kin must share.
const kinLen = 5

// kinTail is how many letters the shorter of two kin may have beyond the letters they
// share.
const kinTail = 2

// prefixTable maps the first kinLen letters of each term of postings to the terms that
// start with them, sorted.
func prefixTable(postings map[string][]posting) map[string][]string {
	table := map[string][]string{}
	for t := range postings {
		if len(t) >= kinLen {
			table[t[:kinLen]] = append(table[t[:kinLen]], t)
		}
	}
	for _, ts := range table {
		slices.Sort(ts)
	}
	return table
}

// kin are the index's terms that are kin of t: those sharing t's first kinLen letters and
// more, all but at most kinTail letters of the shorter of the two.
func (ix *Index) kin(t string) []string {
	if len(t) < kinLen {
		return nil
	}
	var out []string
	for _, u := range ix.byPrefix[t[:kinLen]] {
		shared := len(commonPrefix(t, u))
		if u != t && min(len(t), len(u))-shared <= kinTail {
			out = append(out, u)
		}
	}
	return out
}

// commonPrefix is the longest prefix a and b share.
func commonPrefix(a, b string) string {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return a[:i]
		}
	}
	return a[:n]
}
