package upstream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcpgw/mcpgw/internal/httpclient"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// Tool parameters mirrored into headers (SEP-2243, 2026-07-28). A tool's input schema
// may mark a property with "x-mcp-header": NAME; a client then sends that argument's
// value as the Mcp-Param-NAME header of the tools/call POST too, so that the server's
// infrastructure can route on it without reading the body. A client must leave out a tool
// whose annotations are invalid (empty, on a type other than string, integer or boolean,
// not an HTTP token, or the same name twice regardless of case). The connection learns
// the annotations from its own tools/list (ListAll) and drops the invalid tools there, so
// the gateway neither exposes nor calls them.

// paramBinding is one annotated property: its path from the arguments' top level, and the
// header name it mirrors into.
type paramBinding struct {
	path   []string
	header string
}

// headerSchema is the part of a JSON schema the annotations live in.
type headerSchema struct {
	Type       json.RawMessage            `json:"type"`
	Header     json.RawMessage            `json:"x-mcp-header"`
	Properties map[string]json.RawMessage `json:"properties"`
}

// toolParamHeaders reads a tool definition's annotations: its name and bindings, or an
// error saying why the tool is invalid.
func toolParamHeaders(def []byte) (name string, bindings []paramBinding, err error) {
	var t struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if err := json.Unmarshal(def, &t); err != nil {
		return "", nil, nil // not the connection's to judge: the registry skips it, saying why
	}
	if !strings.Contains(string(t.InputSchema), "x-mcp-header") {
		return t.Name, nil, nil
	}
	var s headerSchema
	if json.Unmarshal(t.InputSchema, &s) != nil {
		return t.Name, nil, nil
	}
	seen := map[string]string{}
	bindings, err = collectParamHeaders(s.Properties, nil, seen, nil)
	return t.Name, bindings, err
}

// MaxParamHeaderDepth is how many levels of nested properties x-mcp-header annotations
// are read from. Each level is decoded from the bytes of what is below it, so the work is
// at most this many times the schema's size (a schema of properties 4,000 levels deep
// over a 1 MiB leaf took 4 minutes to read unbounded). No honest schema nests an
// annotated property that deep; one that does is refused, not half read, so that no call
// leaves out a header its server expects.
const MaxParamHeaderDepth = 16

// annotated reports whether raw may hold an x-mcp-header annotation: subschemas without
// the word are not decoded at all.
func annotated(raw []byte) bool { return bytes.Contains(raw, []byte("x-mcp-header")) }

// collectParamHeaders walks properties (nested objects too, MaxParamHeaderDepth levels)
// and appends a binding for each annotated one; seen maps a lower-cased header name to the
// property that took it.
func collectParamHeaders(props map[string]json.RawMessage, prefix []string, seen map[string]string, out []paramBinding) ([]paramBinding, error) {
	for _, prop := range slices.Sorted(maps.Keys(props)) {
		sub := props[prop]
		if !annotated(sub) {
			continue
		}
		path := append(append([]string(nil), prefix...), prop)
		where := strings.Join(path, ".")
		var ps headerSchema
		if json.Unmarshal(sub, &ps) != nil {
			continue
		}
		if ps.Header != nil {
			name, err := checkParamHeader(ps)
			if err != nil {
				return nil, fmt.Errorf("property %q: %v", where, err)
			}
			lower := strings.ToLower(name)
			if other, dup := seen[lower]; dup {
				return nil, fmt.Errorf("properties %q and %q both name the header %q (x-mcp-header names are case-insensitive)", other, where, name)
			}
			seen[lower] = where
			out = append(out, paramBinding{path: path, header: name})
		}
		if len(path) < MaxParamHeaderDepth {
			var err error
			if out, err = collectParamHeaders(ps.Properties, path, seen, out); err != nil {
				return nil, err
			}
			continue
		}
		for _, deeper := range ps.Properties {
			if annotated(deeper) {
				return nil, fmt.Errorf("property %q: x-mcp-header annotations are read %d levels of properties deep, not deeper", where, MaxParamHeaderDepth)
			}
		}
	}
	return out, nil
}

// checkParamHeader returns an annotated property's header name, or why it is invalid.
func checkParamHeader(s headerSchema) (string, error) {
	var name string
	if json.Unmarshal(s.Header, &name) != nil || name == "" {
		return "", fmt.Errorf("x-mcp-header must be a non-empty string, not %s", s.Header)
	}
	if !validToken(name) {
		return "", fmt.Errorf("x-mcp-header %q is not an HTTP header name (visible ASCII, no spaces, colons or other separators)", name)
	}
	var typ string
	if json.Unmarshal(s.Type, &typ) != nil || (typ != "string" && typ != "integer" && typ != "boolean") {
		return "", fmt.Errorf("x-mcp-header %q is on a property of type %s; only string, integer and boolean may be mirrored", name, orMissing(s.Type))
	}
	return name, nil
}

func orMissing(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "(none)"
	}
	return string(raw)
}

// validToken reports whether s is an HTTP token (RFC 9110 tchar), as a header name must be.
func validToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// toolBindings are the bindings of one server's tools, by tool name.
type toolBindings struct {
	p atomic.Pointer[map[string][]paramBinding]
}

// serverBindings hands every connection of a server (by name) the same toolBindings: the
// registry lists a server's tools on one connection and exposes them for all its
// instances. Its zero value is ready.
type serverBindings struct {
	mu sync.Mutex
	m  map[string]*toolBindings
}

func (s *serverBindings) of(server string) *toolBindings {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]*toolBindings{}
	}
	b := s.m[server]
	if b == nil {
		b = &toolBindings{}
		s.m[server] = b
	}
	return b
}

// keepValidTools is ListAll's pass over a complete tools/list: it drops the tools whose
// x-mcp-header annotations are invalid (logging which and why) and keeps the bindings of
// the others for the tools/call POSTs.
func (c *Conn) keepValidTools(items []json.RawMessage) []json.RawMessage {
	bindings := map[string][]paramBinding{}
	kept := items[:0:0]
	for _, raw := range items {
		name, b, err := toolParamHeaders(raw)
		if err != nil {
			c.log.Warn("upstream tool left out: its x-mcp-header annotations are invalid (SEP-2243)",
				"server", c.Name, "tool", name, "err", err)
			continue
		}
		if len(b) > 0 {
			bindings[name] = b
		}
		kept = append(kept, raw)
	}
	if c.paramHeaders != nil {
		c.paramHeaders.p.Store(&bindings)
	}
	return kept
}

// addParamHeaders adds the Mcp-Param-* headers of a tools/call of tool with args, from
// the bindings c learnt from its last tools/list. An argument that is absent, null, or not
// a string, boolean or integer (within ±2^53-1) gets no header.
func (c *Conn) addParamHeaders(h *httpclient.Header, tool string, args []byte) {
	if c.paramHeaders == nil || len(args) == 0 {
		return
	}
	all := c.paramHeaders.p.Load()
	if all == nil {
		return
	}
	for _, b := range (*all)[tool] {
		v, ok := lookupArg(args, b.path)
		if !ok {
			continue
		}
		if s, ok := paramHeaderValue(v); ok {
			h.Add("Mcp-Param-"+b.header, s)
		}
	}
}

// lookupArg finds the value at path in the arguments object.
func lookupArg(args []byte, path []string) ([]byte, bool) {
	cur := args
	for _, key := range path {
		var next []byte
		found := false
		if wire.Members(cur, func(k string, v []byte) error {
			if k == key {
				next, found = v, true
			}
			return nil
		}) != nil || !found {
			return nil, false
		}
		cur = next
	}
	return cur, true
}

// paramHeaderValue is an argument's header value: a string as the revision encodes it
// (headerSafe), true or false, or an integer in decimal.
func paramHeaderValue(v []byte) (string, bool) {
	var x any
	if json.Unmarshal(v, &x) != nil {
		return "", false
	}
	switch x := x.(type) {
	case string:
		return headerSafe(x), true
	case bool:
		return strconv.FormatBool(x), true
	case float64:
		const maxSafe = 1<<53 - 1
		if x != math.Trunc(x) || math.Abs(x) > maxSafe {
			return "", false
		}
		return strconv.FormatInt(int64(x), 10), true
	}
	return "", false
}
