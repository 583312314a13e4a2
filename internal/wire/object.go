package wire

// Object builds a JSON object member by member, in the order given: what the gateway sends
// an upstream is the client's members rebuilt with a few replaced, never re-encoded. The
// zero value is an empty object.
type Object struct{ b []byte }

func (o *Object) key(k string) {
	if len(o.b) == 0 {
		o.b = append(o.b, '{')
	} else {
		o.b = append(o.b, ',')
	}
	o.b = AppendQuote(o.b, k)
	o.b = append(o.b, ':')
}

// Raw adds a member with an already-encoded value; an absent or null value adds nothing.
func (o *Object) Raw(k string, v []byte) {
	if len(v) == 0 || string(v) == "null" {
		return
	}
	o.key(k)
	o.b = append(o.b, v...)
}

// Str adds a string member.
func (o *Object) Str(k, v string) {
	o.key(k)
	o.b = AppendQuote(o.b, v)
}

// Bytes ends the object and returns it ({} when no member was added).
func (o *Object) Bytes() []byte {
	if len(o.b) == 0 {
		return []byte("{}")
	}
	return append(o.b, '}')
}

// Empty reports whether no member was added.
func (o *Object) Empty() bool { return len(o.b) == 0 }
