package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
)

// hashLen is the length of the hash a shortened name carries: 4 bytes of SHA-256 in hex.
// It keeps shortened names apart (a collision needs the same visible part and the same 32
// bits), and it is the suffix ExposedName has always written, so a name that was not
// being cut keeps the bytes it had.
const hashLen = 8

// minShape is the shortest length a shaped name is cut to while looking for one a pattern
// takes: a hash and one character.
const minShape = hashLen + 1

// ShapeName fits an exposed tool name (server + sep + tool, or a bare tool) into max bytes
// and the pattern re (nil: none). A name that already fits comes back unchanged. Otherwise the
// tool's own name is kept whole when it can be, the server part is cut, and a short stable hash
// of the whole exposed name keeps shaped names distinct; the result depends only on its inputs
// (stable across restarts and replicas).
//
// The name is split at the first sep (a server name never holds the separator when names
// are prefixed; config validation refuses it). Shapes, in order of preference:
//
//	server__tool_1a2b3c4d    the name fits with the hash (it had characters outside
//	                         A-Z a-z 0-9 _ -, now replaced by _, or re refused it)
//	serv_1a2b3c4d__tool      the server part cut so the tool's own name stays whole
//	too_long_to_keep_w_1a2b3c4d   the tool's own name cut, the server left out
//	k8s_apiextensions_1a2b3c4d_get  a plugin tool's name cut in the middle, its
//	                         operation kept (shapeKeeping, PluginToolName)
//
// A name always keeps to ^[A-Za-z0-9_-]+$ and max (max <= 0 reads as 64). When re refuses
// the shape, shorter shapes are tried, then each with - as _, then lower-cased; a pattern
// that refuses all of them (one no name of this alphabet can match) gets the plain shape.
func ShapeName(exposed, sep string, max int, re *regexp.Regexp) string {
	return shapeKeeping(exposed, sep, "", max, re)
}

// shapeKeeping is ShapeName keeping tail (a plugin tool's operation: "get", an action's
// id) whole at the end of a name whose tool part is cut: the middle goes, then the hash,
// then "_" and tail.
func shapeKeeping(exposed, sep, tail string, max int, re *regexp.Regexp) string {
	if max <= 0 {
		max = 64
	}
	if cleanName(exposed) && len(exposed) >= 1 && len(exposed) <= max && (re == nil || re.MatchString(exposed)) {
		return exposed
	}
	server, tool, found := "", exposed, false
	if sep != "" {
		server, tool, found = strings.Cut(exposed, sep)
	}
	if !found {
		server, tool, sep = "", exposed, ""
	}
	sum := sha256.Sum256([]byte(exposed))
	p := nameParts{server: cleaned(server), sep: cleaned(sep), tool: cleaned(tool), hash: hex.EncodeToString(sum[:hashLen/2])}
	p.keepTail(tail)
	return p.fit(max, re)
}

// nameParts is a name being shaped: its cleaned server part, separator and tool part,
// and the hash of its identity.
type nameParts struct{ server, sep, tool, hash, tail string }

// keepTail makes the tool part's last "_"+op a tail kept whole when the tool part is cut
// (when the tool part ends with it).
func (p *nameParts) keepTail(op string) {
	if t := "_" + cleaned(op); op != "" && strings.HasSuffix(p.tool, t) && len(t) < len(p.tool) {
		p.tail = t
	}
}

// fit returns the first shape, from max bytes down, that re takes (each also tried with -
// as _ and lower-cased); the max-byte shape when re takes none.
func (p nameParts) fit(max int, re *regexp.Regexp) string {
	first := p.at(max)
	if re == nil || re.MatchString(first) {
		return first
	}
	for m := max; m >= minShape; m-- {
		s := p.at(m)
		under := strings.ReplaceAll(s, "-", "_")
		for _, cand := range []string{s, under, strings.ToLower(under)} {
			if re.MatchString(cand) {
				return cand
			}
		}
	}
	return first
}

// at is the shape of the name in at most limit bytes, always carrying the hash: the whole
// name when it fits beside the hash; else the server part cut so that the tool part stays
// whole; else the tool part cut and the server part left out.
func (p nameParts) at(limit int) string {
	suffix := "_" + p.hash
	if limit < len(suffix)+1 {
		return p.hash[:min(len(p.hash), max(1, limit))]
	}
	room := limit - len(suffix)
	if whole := len(p.server) + len(p.sep) + len(p.tool); whole <= room && whole > 0 {
		return p.server + p.sep + p.tool + suffix
	}
	if p.server != "" {
		if keep := room - len(p.sep) - len(p.tool); keep >= 1 {
			return p.server[:min(keep, len(p.server))] + suffix + p.sep + p.tool
		}
	}
	if head := len(p.tool) - len(p.tail); p.tail != "" && room-len(p.tail) >= 1 {
		// The operation says what the tool does: the middle of the name goes instead.
		return p.tool[:min(room-len(p.tail), head)] + suffix + p.tail
	}
	return p.tool[:min(room, len(p.tool))] + suffix
}

// cleanName reports whether every byte of s is one a tool name may hold (A-Z a-z 0-9 _ -).
func cleanName(s string) bool {
	for i := 0; i < len(s); i++ {
		if !nameByte(s[i]) {
			return false
		}
	}
	return true
}

// cleaned replaces every byte a tool name may not hold by _ (a multi-byte character
// becomes one _ per byte, as ExposedName has always done).
func cleaned(s string) string {
	if cleanName(s) {
		return s
	}
	b := []byte(s)
	for i, c := range b {
		if !nameByte(c) {
			b[i] = '_'
		}
	}
	return string(b)
}

func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}
