package integrity

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// Definitions and their fingerprints: what a server serves, as the guard pins it.

// The kinds of definitions pinned, and a server's own record.
const (
	KindTool     = "tool"
	KindPrompt   = "prompt"
	KindTemplate = "template"
	// KindSkill is a skill entry of the skills extension (named by the upstream's URI of
	// its SKILL.md): its frontmatter and its files' digests and sizes.
	KindSkill = "skill"
	// KindInstructions is a server's instructions from its initialize result (name
	// "initialize"): they reach the model as they are, like a description.
	KindInstructions = "instructions"
	KindServer       = "server"
)

// Why a definition is held.
const (
	ReasonFirstUse   = "first_use"  // the server's first catalogue, under first_use: hold
	ReasonChanged    = "changed"    // a pinned definition changed
	ReasonNew        = "new"        // a definition that was not there, on an established server
	ReasonSuspicious = "suspicious" // the heuristics flagged it, under suspicious: hold
	ReasonAmbiguous  = "ambiguous"  // it names a member twice: clients may read it otherwise
)

// Def is one definition as a server serves it now.
type Def struct {
	Kind string
	Name string // the server's own name (a template's uriTemplate)
	Hash string
	Raw  json.RawMessage // canonical JSON
	// Ambiguous: it names a member twice (Raw is then as written, compacted).
	Ambiguous bool
}

// Canonical returns the canonical JSON of a definition (members in key order at every
// depth, compact, no HTML escaping) and its fingerprint, "sha256:" and the hex digest. JSON
// that does not parse is fingerprinted as it is.
func Canonical(raw json.RawMessage) (json.RawMessage, string) {
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	out := raw
	if d.Decode(&v) == nil {
		var b bytes.Buffer
		e := json.NewEncoder(&b)
		e.SetEscapeHTML(false)
		if e.Encode(v) == nil {
			out = bytes.TrimSuffix(b.Bytes(), []byte("\n"))
		}
	}
	sum := sha256.Sum256(out)
	return out, "sha256:" + hex.EncodeToString(sum[:])
}

// NewDef is the Def of raw. An ambiguous definition (one that names a member twice) is
// kept and fingerprinted as it was written, compacted, since its canonical form would
// keep one of the two.
func NewDef(kind, name string, raw json.RawMessage) Def {
	if Ambiguous(raw) {
		var b bytes.Buffer
		c := raw
		if json.Compact(&b, raw) == nil {
			c = b.Bytes()
		}
		sum := sha256.Sum256(c)
		return Def{Kind: kind, Name: name, Hash: "sha256:" + hex.EncodeToString(sum[:]), Raw: c, Ambiguous: true}
	}
	c, h := Canonical(raw)
	return Def{Kind: kind, Name: name, Hash: h, Raw: c}
}
