package integrity

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// The rule ids of Flag.Rule. They are stable: an admin's tooling and the docs name them.
const (
	// RuleInstruction: a phrase addressed to the model (instructionPhrases).
	RuleInstruction = "instruction"
	// RuleInvisible: a zero-width or invisible format character.
	RuleInvisible = "invisible"
	// RuleBidi: a bidirectional control, which can make text read other than it is stored.
	RuleBidi = "bidi"
	// RuleLong: a top-level description far longer than the server's others.
	RuleLong = "long"
	// RuleUnscanned: the definition is too deep or has too many strings to scan whole, so
	// the rest was not looked at; without it, the bounds would be a place to hide.
	RuleUnscanned = "unscanned"
)

// The bounds of one Suspicious. An honest definition is far inside them.
const (
	// maxScanDepth is how many levels of objects and arrays the walk enters.
	maxScanDepth = 64
	// maxScanStrings is how many strings (keys and values) the walk scans.
	maxScanStrings = 10000
	// maxFlags is how many flags Suspicious returns at most.
	maxFlags = 50
	// quoteRunes is how many runes of the text a Detail quotes at most.
	quoteRunes = 60
	// quoteLead is how many runes before the character found an invisible or bidi
	// Detail's quote starts, so that the admin sees where it sits.
	quoteLead = 20
)

// The "long" rule: a description over max(longFactor*norm, longFloor) runes when the norm
// is known, over longNoNorm runes when it is not. The floor keeps a server of terse tools
// from flagging an ordinary paragraph; the factor lets a server of long descriptions be.
const (
	longFactor = 4
	longFloor  = 2000
	longNoNorm = 4000
)

// Flag is one reason a definition looks as if it carries instructions for the model.
// The rules are heuristics: they flag, they do not prove.
type Flag struct {
	Rule   string `json:"rule"`   // a stable id: one of the Rule constants
	Field  string `json:"field"`  // JSON Pointer of the text that tripped it: "/description", "/inputSchema/properties/q/description"
	Detail string `json:"detail"` // what was found, short, safe to show (quote at most ~60 chars of the text, with invisible characters written as U+XXXX)
}

// Suspicious returns the flags of one definition (JSON). norm is the typical description
// length of its server's other definitions (the median, in runes; 0 when unknown): a
// description far longer than that is flagged.
//
// Every string is scanned, keys as well as values, at any depth (descriptions, titles,
// enum values, property names); a key's Field is the pointer of its member. Each rule is
// reported once per field. The walk is bounded: 64 levels, 10,000 strings, 50 flags; a
// definition past the first two is flagged "unscanned". Invalid JSON gives nil.
func Suspicious(def json.RawMessage, norm int) []Flag {
	v, err := decode(def)
	if err != nil {
		return nil
	}
	s := scanner{seen: map[[2]string]bool{}}
	if obj, ok := v.(map[string]any); ok {
		if desc, ok := obj["description"].(string); ok {
			s.long(desc, norm)
		}
	}
	s.walk("", v, 0)
	s.unscanned()
	return s.flags
}

// DescriptionLength is the length in runes of def's top-level "description" (0 if none),
// what a caller uses to compute a server's norm.
func DescriptionLength(def json.RawMessage) int {
	var obj map[string]json.RawMessage
	if json.Unmarshal(def, &obj) != nil {
		return 0
	}
	var desc string
	if json.Unmarshal(obj["description"], &desc) != nil {
		return 0
	}
	return utf8.RuneCountInString(desc)
}

// scanner walks one definition and collects its flags.
type scanner struct {
	flags   []Flag
	seen    map[[2]string]bool // (rule, field) already flagged
	strings int                // strings scanned
	tooDeep bool               // a container past maxScanDepth was skipped
	tooMany bool               // strings past maxScanStrings were skipped
}

// flag adds one flag unless (rule, field) has one already or the list is full.
func (s *scanner) flag(rule, field, detail string) {
	key := [2]string{rule, field}
	if len(s.flags) >= maxFlags || s.seen[key] {
		return
	}
	s.seen[key] = true
	s.flags = append(s.flags, Flag{Rule: rule, Field: field, Detail: detail})
}

// done reports whether the walk should stop: no more flags or strings to take.
func (s *scanner) done() bool { return len(s.flags) >= maxFlags || s.tooMany }

// walk scans v, at pointer path, depth levels down: its strings, its keys, its members.
func (s *scanner) walk(path string, v any, depth int) {
	switch v := v.(type) {
	case string:
		s.text(path, v)
	case map[string]any:
		if len(v) > 0 && depth >= maxScanDepth {
			s.tooDeep = true
			return
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if s.done() {
				return
			}
			p := path + "/" + escapePointer(k)
			s.text(p, k)
			s.walk(p, v[k], depth+1)
		}
	case []any:
		if len(v) > 0 && depth >= maxScanDepth {
			s.tooDeep = true
			return
		}
		for i, e := range v {
			if s.done() {
				return
			}
			s.walk(path+"/"+indexPointer(i), e, depth+1)
		}
	}
}

// text runs the per-string rules over str, found at field.
func (s *scanner) text(field, str string) {
	if s.strings >= maxScanStrings {
		s.tooMany = true
		return
	}
	s.strings++
	if d, ok := instructionDetail(str); ok {
		s.flag(RuleInstruction, field, d)
	}
	if isASCII(str) {
		return // neither invisible nor bidi characters
	}
	if d, ok := invisibleDetail(str); ok {
		s.flag(RuleInvisible, field, d)
	}
	if d, ok := bidiDetail(str); ok {
		s.flag(RuleBidi, field, d)
	}
}

// long flags a top-level description far over the server's norm.
func (s *scanner) long(desc string, norm int) {
	n := utf8.RuneCountInString(desc)
	limit, why := longNoNorm, "no norm for the server"
	if norm > 0 {
		limit = max(longFactor*norm, longFloor)
		why = fmt.Sprintf("its other descriptions' median is %d", norm)
	}
	if n > limit {
		s.flag(RuleLong, "/description", fmt.Sprintf("description is %d runes, over %d (%s)", n, limit, why))
	}
}

// unscanned flags a walk that stopped at a bound before the end of the definition.
func (s *scanner) unscanned() {
	switch {
	case s.tooMany:
		s.flag(RuleUnscanned, "", fmt.Sprintf("more than %d strings: the rest was not scanned", maxScanStrings))
	case s.tooDeep:
		s.flag(RuleUnscanned, "", fmt.Sprintf("nested more than %d levels: the deeper part was not scanned", maxScanDepth))
	}
}

// phrase is one pattern of the "instruction" rule and the label a Detail gives it.
type phrase struct {
	label string
	re    *regexp.Regexp
}

// instructionPhrases are the patterns of the "instruction" rule, compiled on first use.
// Each is text addressed to the model rather than to a reader of the docs, or a file an
// injected instruction sends the model to read; docs/integrity.md lists them. Words are
// separated by any run of white space, so a line break does not hide a phrase.
var instructionPhrases = sync.OnceValue(func() []phrase {
	// pathBefore and pathAfter make ".env" and ".ssh" path tokens: a file name, not the
	// "env" of "environment" or "process.env".
	const pathBefore = "(?:^|[\\s\"'`(/~=:,])"
	const pathAfter = "(?:$|[\\s\"'`),;:!?/]|\\.(?:\\s|$))"
	src := []struct{ label, re string }{
		{"ignore previous instructions", `ignore\s+(?:all\s+|any\s+)?(?:the\s+)?(?:previous|prior|above|earlier|preceding)\s+instructions`},
		{"disregard previous", `disregard\s+(?:all\s+|any\s+)?(?:the\s+)?(?:previous|prior|above|system)`},
		{"you must", `you\s+must\s+(?:always|never|not\s+tell|first)`},
		{"hide from the user", `(?:do\s+not|don['’]t|never)\s+(?:tell|mention|reveal|inform|notify)\s+the\s+user`},
		{"before using this tool", `before\s+(?:using|calling|invoking)\s+this\s+tool`},
		{"system prompt", `system\s+prompt`},
		{"tag-like block", `<\s*/?\s*(?:important|system|instructions?)\b[^<>]{0,40}>`},
		{"secret file", pathBefore + `\.(?:ssh|env(?:\.[a-z0-9_-]+)?)` + pathAfter +
			`|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\bmcp\.json\b`},
	}
	out := make([]phrase, len(src))
	for i, p := range src {
		out[i] = phrase{label: p.label, re: regexp.MustCompile(`(?i)` + p.re)}
	}
	return out
})

// instructionDetail is the Detail of the "instruction" rule for str, ok when a phrase
// matched. Invisible and bidi characters are taken out first (a zero-width space inside
// "ignore" hides nothing), and the text that Unicode tag characters spell is scanned as
// well (it is meant for the model alone).
func instructionDetail(str string) (string, bool) {
	visible, hidden := split(str)
	if labels, at := matchPhrases(visible); at >= 0 {
		return strings.Join(labels, ", ") + ": " + quote([]rune(visible[at:]), 0), true
	}
	if labels, at := matchPhrases(hidden); at >= 0 {
		return strings.Join(labels, ", ") + ", in tag characters: " + quote([]rune(hidden[at:]), 0), true
	}
	return "", false
}

// matchPhrases lists the labels of the phrases text matches, in list order, and the byte
// offset of the earliest match (-1 when none does).
func matchPhrases(text string) ([]string, int) {
	if text == "" {
		return nil, -1
	}
	var labels []string
	at := -1
	for _, p := range instructionPhrases() {
		loc := p.re.FindStringIndex(text)
		if loc == nil {
			continue
		}
		labels = append(labels, p.label)
		if at < 0 || loc[0] < at {
			at = loc[0]
		}
	}
	return labels, at
}

// split is str without its invisible and bidi characters, and the ASCII text its Unicode
// tag characters (U+E0020..U+E007E) spell.
func split(str string) (visible, hidden string) {
	if isASCII(str) {
		return str, ""
	}
	var v, h strings.Builder
	for _, r := range str {
		switch {
		case r >= 0xE0020 && r <= 0xE007E:
			h.WriteRune(r - 0xE0000)
		case isInvisible(r) || isBidi(r):
		default:
			v.WriteRune(r)
		}
	}
	return v.String(), h.String()
}

// invisibleDetail is the Detail of the "invisible" rule for str, ok when it has any
// invisible character. A zero-width joiner between two emoji parts (a family, a flag) is
// how emoji are written, not a hiding place, so it is not counted.
func invisibleDetail(str string) (string, bool) {
	rs := []rune(str)
	count, tags, first := 0, 0, -1
	for i, r := range rs {
		if !isInvisible(r) || (r == 0x200D && emojiJoin(rs, i)) {
			continue
		}
		count++
		if r >= 0xE0000 {
			tags++
		}
		if first < 0 {
			first = i
		}
	}
	if count == 0 {
		return "", false
	}
	if _, hidden := split(str); hidden != "" {
		return fmt.Sprintf("%s, %d of them tag characters spelling %s", characters(count, "invisible character"), tags, quote([]rune(hidden), 0)), true
	}
	return fmt.Sprintf("%s, first U+%04X: %s", characters(count, "invisible character"), rs[first], quote(rs, first)), true
}

// bidiDetail is the Detail of the "bidi" rule for str, ok when it has any bidirectional
// control.
func bidiDetail(str string) (string, bool) {
	rs := []rune(str)
	count, first := 0, -1
	for i, r := range rs {
		if !isBidi(r) {
			continue
		}
		count++
		if first < 0 {
			first = i
		}
	}
	if count == 0 {
		return "", false
	}
	return fmt.Sprintf("%s, first U+%04X: %s", characters(count, "bidirectional control"), rs[first], quote(rs, first)), true
}

// characters is "1 <what>" or "<n> <what>s".
func characters(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// isInvisible reports a zero-width or invisible format character: U+200B..U+200F,
// U+2060..U+2064, U+FEFF, U+00AD and the Unicode tag characters U+E0000..U+E007F.
func isInvisible(r rune) bool {
	return (r >= 0x200B && r <= 0x200F) || (r >= 0x2060 && r <= 0x2064) ||
		r == 0xFEFF || r == 0x00AD || (r >= 0xE0000 && r <= 0xE007F)
}

// isBidi reports a bidirectional control: U+202A..U+202E, U+2066..U+2069, U+061C.
func isBidi(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) || r == 0x061C
}

// emojiJoin reports whether the zero-width joiner at rs[i] joins two emoji parts.
func emojiJoin(rs []rune, i int) bool {
	return i > 0 && i+1 < len(rs) && emojiPart(rs[i-1]) && emojiPart(rs[i+1])
}

// emojiPart reports a rune that ends or starts a part of an emoji sequence: a symbol, the
// emoji variation selector, a skin-tone modifier.
func emojiPart(r rune) bool {
	return unicode.Is(unicode.So, r) || r == 0xFE0F || (r >= 0x1F3FB && r <= 0x1F3FF)
}

// isASCII reports whether str is all ASCII (so none of the rules' characters are in it).
func isASCII(str string) bool {
	for i := 0; i < len(str); i++ {
		if str[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// quote is at most quoteRunes runes of rs, starting quoteLead runes before at (or at 0),
// in double quotes, safe to show: line breaks and tabs as spaces, invisible, bidi and
// other unprintable characters as U+XXXX, "…" where the text goes on.
func quote(rs []rune, at int) string {
	from := max(0, at-quoteLead)
	to := min(len(rs), from+quoteRunes)
	var b strings.Builder
	b.WriteByte('"')
	if from > 0 {
		b.WriteString("…")
	}
	for _, r := range rs[from:to] {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			b.WriteByte(' ')
		case isInvisible(r) || isBidi(r) || !unicode.IsPrint(r):
			fmt.Fprintf(&b, "U+%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	if to < len(rs) {
		b.WriteString("…")
	}
	b.WriteByte('"')
	return b.String()
}

// indexPointer is an array index as a JSON Pointer reference token.
func indexPointer(i int) string { return strconv.Itoa(i) }
