package integrity

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"slices"
	"strings"
)

// The bounds of one Diff. A definition is small (a tool's schema is a few kilobytes), so
// these are never reached by an honest server; they keep a hostile one from making the
// admin's view (and the gateway building it) pay for a huge or very deep document.
const (
	// maxChanges is how many changes Diff lists at most; it stops there.
	maxChanges = 200
	// maxDiffDepth is how many object levels Diff descends; an object deeper than that
	// is compared whole, as one change.
	maxDiffDepth = 64
)

// Change is one member that differs between two definitions.
type Change struct {
	Path string          `json:"path"`          // JSON Pointer (RFC 6901) of the member: "/inputSchema/properties/note", "" for the whole
	Op   string          `json:"op"`            // "added" | "removed" | "changed"
	Old  json.RawMessage `json:"old,omitempty"` // compact JSON of the old value (absent for added)
	New  json.RawMessage `json:"new,omitempty"` // compact JSON of the new value (absent for removed)
}

// The values of Change.Op.
const (
	OpAdded   = "added"
	OpRemoved = "removed"
	OpChanged = "changed"
)

// Diff lists the members that differ between old and new (both JSON), depth first, in
// key order: objects are compared member by member, recursively; arrays and scalars that
// differ are one "changed" each (arrays compared whole). Member order alone is no change;
// numbers are compared by their text as written (1 and 1.0 differ).
//
// Invalid JSON on either side is a single change at "", the invalid side shown as a JSON
// string of its text; an empty side is no definition at all, so the change at "" is
// "added" (old empty) or "removed" (new empty). Equal inputs give nil.
//
// The work is bounded: Diff stops after 200 changes (the list is then incomplete, with
// no marker), and an object more than 64 levels deep is compared whole, as one change.
func Diff(old, new json.RawMessage) []Change {
	if bytes.Equal(old, new) {
		return nil
	}
	oldEmpty, newEmpty := len(bytes.TrimSpace(old)) == 0, len(bytes.TrimSpace(new)) == 0
	switch {
	case oldEmpty && newEmpty:
		return nil
	case oldEmpty:
		return []Change{{Path: "", Op: OpAdded, New: shown(new)}}
	case newEmpty:
		return []Change{{Path: "", Op: OpRemoved, Old: shown(old)}}
	}
	a, errA := decode(old)
	b, errB := decode(new)
	if errA != nil || errB != nil {
		return []Change{{Path: "", Op: OpChanged, Old: shown(old), New: shown(new)}}
	}
	d := differ{}
	d.compare("", a, b, 0)
	return d.out
}

// shown is raw as Change shows a whole side: compact when it is valid JSON, else a JSON
// string of its text (so that a Change always marshals).
func shown(raw json.RawMessage) json.RawMessage {
	if v, err := decode(raw); err == nil {
		return compact(v)
	}
	return compact(string(raw))
}

// decode is raw as a value, numbers kept as their text (json.Number); trailing data after
// the value is an error, as json.Unmarshal has it.
func decode(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errTrailing
	}
	return v, nil
}

// errTrailing is decode's error for data after the value.
const errTrailing = constError("integrity: data after the JSON value")

// constError is an error that can be a constant, so the package has no error variables.
type constError string

func (e constError) Error() string { return string(e) }

// compact is v as compact JSON, "<" and ">" and "&" left as they are (an admin reads it).
func compact(v any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only a decoded value reaches here, and every one encodes; null keeps the
		// Change marshalable should that ever change.
		return json.RawMessage("null")
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// differ collects the changes of one Diff.
type differ struct {
	out []Change
}

// full reports whether the list has reached maxChanges.
func (d *differ) full() bool { return len(d.out) >= maxChanges }

// add appends one change unless the list is full.
func (d *differ) add(c Change) {
	if !d.full() {
		d.out = append(d.out, c)
	}
}

// compare records how b differs from a, both at path, depth object levels down.
func (d *differ) compare(path string, a, b any, depth int) {
	if d.full() {
		return
	}
	objA, okA := a.(map[string]any)
	objB, okB := b.(map[string]any)
	if okA && okB && depth < maxDiffDepth {
		d.members(path, objA, objB, depth)
		return
	}
	if !reflect.DeepEqual(a, b) {
		d.add(Change{Path: path, Op: OpChanged, Old: compact(a), New: compact(b)})
	}
}

// members compares two objects member by member, in key order.
func (d *differ) members(path string, a, b map[string]any, depth int) {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if d.full() {
			return
		}
		va, inA := a[k]
		vb, inB := b[k]
		p := path + "/" + escapePointer(k)
		switch {
		case !inB:
			d.add(Change{Path: p, Op: OpRemoved, Old: compact(va)})
		case !inA:
			d.add(Change{Path: p, Op: OpAdded, New: compact(vb)})
		default:
			d.compare(p, va, vb, depth+1)
		}
	}
}

// escapePointer is key as one JSON Pointer reference token (RFC 6901): "~" first, so the
// "~1" written for "/" is not escaped again.
func escapePointer(key string) string {
	return strings.ReplaceAll(strings.ReplaceAll(key, "~", "~0"), "/", "~1")
}
