package toolsearch

import (
	"strings"
	"unicode"
)

// Tokens splits text into the terms the index and queries are made of: words are cut at
// anything that is not a letter or digit (so at _, -, ., / and spaces) and at camelCase
// boundaries (getUserById → get, user, by, id; HTTPServer → http, server), lower-cased,
// stop words and one-letter words dropped, and each word stemmed (Stem). Digits stay
// with the letters next to them (v1, base64).
func Tokens(text string) []string {
	var out []string
	for _, w := range words(text) {
		w = strings.ToLower(w)
		if isStopWord(w) || (len(w) == 1 && !unicode.IsDigit(rune(w[0]))) {
			continue
		}
		out = append(out, Stem(w))
	}
	return out
}

// words cuts text into its words, keeping their case (see Tokens).
func words(text string) []string {
	var out []string
	rs := []rune(text)
	start := -1
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			if start >= 0 {
				out = append(out, string(rs[start:i]))
				start = -1
			}
			continue
		}
		if start >= 0 && camelBoundary(rs, i) {
			out = append(out, string(rs[start:i]))
			start = i
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		out = append(out, string(rs[start:]))
	}
	return out
}

// camelBoundary tells whether a new word starts at rs[i], inside a run of letters: a
// lower-case letter or digit followed by an upper-case one (userId), or the last capital
// of an acronym before a lower-case letter (HTTPServer).
func camelBoundary(rs []rune, i int) bool {
	r, prev := rs[i], rs[i-1]
	if !unicode.IsUpper(r) {
		return false
	}
	if unicode.IsLower(prev) || unicode.IsDigit(prev) {
		return true
	}
	return unicode.IsUpper(prev) && i+1 < len(rs) && unicode.IsLower(rs[i+1])
}

// isStopWord tells whether w (lower-case) is one of the English words too common in tool
// descriptions and queries to tell tools apart.
func isStopWord(w string) bool {
	switch w {
	case "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at",
		"be", "been", "being", "but", "by", "can", "could", "do", "does", "each", "either",
		"for", "from", "had", "has", "have", "how", "i", "if", "in", "into", "is", "it",
		"its", "just", "let", "me", "might", "more", "most", "must", "my", "no", "not",
		"of", "on", "only", "or", "other", "our", "own", "please", "should", "so", "some",
		"such", "than", "that", "the", "their", "them", "then", "there", "these", "they",
		"this", "those", "to", "too", "up", "us", "use", "used", "uses", "using", "very",
		"via", "want", "was", "we", "were", "what", "when", "where", "which", "while",
		"who", "will", "with", "would", "you", "your":
		return true
	}
	return false
}

// Stem is a light suffix stripper for English words (lower-case), small enough to read
// and deterministic, so that a plural, a past tense or an -ing form meets its base form:
//
//   - plurals: -ies → -y (entries → entry), -es after s, x, z, ch or sh is dropped
//     (processes → process, matches → match), otherwise a final -s is dropped unless the
//     word ends in -ss, -us or -is (files → file; status, analysis stay);
//   - -ied → -y (modified → modify); -ed and -ing are dropped when a vowel is left in
//     what remains (created → creat, listing → list; red, string stay), but not from -eed
//     (need, seed), and a doubled final consonant left behind is undoubled when three
//     letters remain (running → run, mapped → map; added → add);
//   - a final -e is dropped (create → creat, file → fil), unless -ee, so that create,
//     creates, created and creating all meet at creat.
//
// Words of two letters or fewer are left alone. It is not Porter's stemmer: it never
// looks at syllables, and a few words meet the wrong partner (alias → alia).
func Stem(w string) string {
	if len(w) <= 2 {
		return w
	}
	w = stemPlural(w)
	w = stemVerb(w)
	if len(w) > 2 && strings.HasSuffix(w, "e") && !strings.HasSuffix(w, "ee") {
		w = w[:len(w)-1]
	}
	return w
}

// stemPlural drops a plural ending (see Stem).
func stemPlural(w string) string {
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "es") && len(w) > 4 && endsInSibilant(w[:len(w)-2]):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") &&
		!strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:len(w)-1]
	}
	return w
}

// endsInSibilant tells whether w ends in s, x, z, ch or sh, after which a plural adds -es.
func endsInSibilant(w string) bool {
	for _, s := range []string{"s", "x", "z", "ch", "sh"} {
		if strings.HasSuffix(w, s) {
			return true
		}
	}
	return false
}

// stemVerb drops -ied, -ed or -ing (see Stem).
func stemVerb(w string) string {
	if strings.HasSuffix(w, "ied") && len(w) > 4 {
		return w[:len(w)-3] + "y"
	}
	var rest string
	switch {
	case strings.HasSuffix(w, "eed"):
		return w
	case strings.HasSuffix(w, "ed"):
		rest = w[:len(w)-2]
	case strings.HasSuffix(w, "ing"):
		rest = w[:len(w)-3]
	default:
		return w
	}
	if len(rest) < 2 || !strings.ContainsAny(rest, "aeiouy") {
		return w
	}
	if n := len(rest); n > 3 && rest[n-1] == rest[n-2] && !strings.ContainsRune("aeiouylsz", rune(rest[n-1])) {
		rest = rest[:n-1]
	}
	return rest
}
