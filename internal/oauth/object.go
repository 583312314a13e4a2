package oauth

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// object is a JSON object's members by exact name. Metadata, registration and token
// answers are read through it rather than into structs because encoding/json matches
// member names case-insensitively and lets a later duplicate win: a document with both
// "issuer" and "Issuer", or two "issuer" members, could then say one thing to one reader
// and another to this one. Here a duplicate name is an error and names match exactly.
type object map[string]json.RawMessage

// parseObject reads body as one JSON object with unique member names.
func parseObject(body []byte) (object, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("oauth: malformed JSON: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("oauth: JSON document is not an object")
	}
	obj := object{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("oauth: malformed JSON: %w", err)
		}
		name, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("oauth: malformed JSON member %q: %w", name, err)
		}
		if _, dup := obj[name]; dup {
			return nil, fmt.Errorf("oauth: duplicate JSON member %q", name)
		}
		obj[name] = raw
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("oauth: malformed JSON: %w", err)
	}
	// Only JSON's own whitespace may follow (RFC 8259: space, tab, LF, CR); bytes.TrimSpace
	// would also pass a form feed or a Unicode space that encoding/json refuses.
	if len(bytes.Trim(body[dec.InputOffset():], " \t\n\r")) != 0 {
		return nil, fmt.Errorf("oauth: data after the JSON object")
	}
	return obj, nil
}

// str is a string member; absent or null is "", another type an error.
func (o object) str(name string) (string, error) {
	raw, ok := o[name]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("oauth: member %q is not a string", name)
	}
	return s, nil
}

// strs is an array-of-strings member; absent or null is nil.
func (o object) strs(name string) ([]string, error) {
	raw, ok := o[name]
	if !ok || string(raw) == "null" {
		return nil, nil
	}
	var s []string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("oauth: member %q is not an array of strings", name)
	}
	return s, nil
}

// boolean is a boolean member; absent or null is false.
func (o object) boolean(name string) (bool, error) {
	raw, ok := o[name]
	if !ok || string(raw) == "null" {
		return false, nil
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		return false, fmt.Errorf("oauth: member %q is not a boolean", name)
	}
	return b, nil
}

// number is a numeric member; absent or null is 0 and ok false.
func (o object) number(name string) (float64, bool, error) {
	raw, ok := o[name]
	if !ok || string(raw) == "null" {
		return 0, false, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		return 0, false, fmt.Errorf("oauth: member %q is not a number", name)
	}
	return f, true, nil
}

// reader collects the first error of a series of member reads, so a decoder reads as a
// list of fields.
type reader struct {
	obj object
	err error
}

func (r *reader) str(name string) string {
	s, err := r.obj.str(name)
	r.keep(err)
	return s
}

func (r *reader) strs(name string) []string {
	s, err := r.obj.strs(name)
	r.keep(err)
	return s
}

func (r *reader) boolean(name string) bool {
	b, err := r.obj.boolean(name)
	r.keep(err)
	return b
}

func (r *reader) keep(err error) {
	if r.err == nil {
		r.err = err
	}
}
