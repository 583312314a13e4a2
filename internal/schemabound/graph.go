package schemabound

import (
	"fmt"
	"net/url"
	"reflect"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
)

// edge is one way the validator goes from a subschema to another: to the same argument
// value (allOf, $ref, ...), or down to a member or element of it (properties, items, ...).
type edge struct {
	to   int
	kind edgeKind
	key  string // member: the property; everyMember: the keyword
	idx  int    // element: the index
}

// edgeKind is which values of the argument an edge's subschema applies to.
type edgeKind uint8

const (
	sameValue    edgeKind = iota // allOf, anyOf, oneOf, not, if/then/else, dependentSchemas, $ref
	member                       // properties[key]
	everyMember                  // patternProperties, additionalProperties, propertyNames, unevaluatedProperties
	element                      // prefixItems[idx], items[idx] (draft 7 array form)
	everyElement                 // items, additionalItems, contains, unevaluatedItems
	notApplied                   // $defs, definitions (reached through a $ref only), contentSchema
)

// node is one subschema.
type node struct {
	obj    map[string]any
	base   *url.URL // the URI its relative references resolve against
	weight uint64   // 1 plus the entries it checks one by one (enum, required, properties)
	edges  []edge
	// pattern and keyPatterns are the instructions of its pattern and of its
	// patternProperties names: matching a string costs its length times them.
	pattern, keyPatterns uint64
}

// graph is a schema's subschemas and the ways between them.
type graph struct {
	nodes     []*node
	index     map[uintptr]int // a subschema's map → its node
	resources map[string]int  // a resource's URI (its $id, or "" for the root) → node
	anchors   map[string]int  // resource URI + "#" + $anchor or $dynamicAnchor → node
	dynamic   map[string][]int
	refs      []pendingRef
	// patternInsts is the instructions the schema's patterns compile to, so far.
	patternInsts int
}

// pendingRef is a $ref or $dynamicRef found while walking, resolved once every node is
// known.
type pendingRef struct {
	from    int
	ref     string
	dynamic bool
}

func newGraph() *graph {
	return &graph{index: map[uintptr]int{}, resources: map[string]int{}, anchors: map[string]int{}, dynamic: map[string][]int{}}
}

// oneSchema is the edge kind of a keyword whose value is one subschema.
func oneSchema(k string) (edgeKind, bool) {
	switch k {
	case "not", "if", "then", "else":
		return sameValue, true
	case "additionalProperties", "propertyNames", "unevaluatedProperties":
		return everyMember, true
	case "items", "additionalItems", "contains", "unevaluatedItems":
		return everyElement, true
	case "contentSchema":
		return notApplied, true
	}
	return 0, false
}

// schemaMap is the edge kind of a keyword whose value is an object of subschemas.
func schemaMap(k string) (edgeKind, bool) {
	switch k {
	case "properties":
		return member, true
	case "patternProperties":
		return everyMember, true
	case "dependentSchemas", "dependencies":
		return sameValue, true
	case "$defs", "definitions":
		return notApplied, true
	}
	return 0, false
}

// schemaArray is the edge kind of a keyword whose value is an array of subschemas.
func schemaArray(k string) (edgeKind, bool) {
	switch k {
	case "allOf", "anyOf", "oneOf":
		return sameValue, true
	case "prefixItems", "items":
		return element, true
	}
	return 0, false
}

// build walks the schema from its root, then resolves every reference.
func (g *graph) build(root any) error {
	obj, ok := root.(map[string]any)
	if !ok {
		return nil // true, false or not a schema: nothing to recurse into
	}
	if _, err := g.add(obj, &url.URL{}); err != nil {
		return err
	}
	for _, r := range g.refs {
		targets, err := g.resolve(r)
		if err != nil {
			return err
		}
		for _, t := range targets {
			g.nodes[r.from].edges = append(g.nodes[r.from].edges, edge{to: t, kind: sameValue})
		}
	}
	return nil
}

// add records obj and its subschemas; base is the URI of the resource around it.
func (g *graph) add(obj map[string]any, base *url.URL) (int, error) {
	i := len(g.nodes)
	if id, ok := obj["$id"].(string); ok && id != "" {
		u, err := url.Parse(id)
		if err != nil || u.Fragment != "" {
			return 0, fmt.Errorf("$id %q is not a URI without a fragment", id)
		}
		base = base.ResolveReference(u)
		if _, dup := g.resources[base.String()]; dup {
			return 0, fmt.Errorf("$id %q names two subschemas", id)
		}
		g.resources[base.String()] = i
	} else if i == 0 {
		g.resources[base.String()] = i
	}
	n := &node{obj: obj, base: base, weight: weightOf(obj)}
	g.nodes = append(g.nodes, n)
	g.index[mapID(obj)] = i
	// An anchor named twice in one resource could resolve, in the validator, to the one
	// this analysis did not follow: refused.
	for _, kw := range []string{"$anchor", "$dynamicAnchor"} {
		a, ok := obj[kw].(string)
		if !ok {
			continue
		}
		if _, dup := g.anchors[base.String()+"#"+a]; dup {
			return 0, fmt.Errorf("anchor %q is named twice", a)
		}
		g.anchors[base.String()+"#"+a] = i
		if kw == "$dynamicAnchor" {
			g.dynamic[a] = append(g.dynamic[a], i)
		}
	}
	if err := g.addPatterns(n, obj); err != nil {
		return 0, err
	}
	if r, ok := obj["$ref"].(string); ok {
		g.refs = append(g.refs, pendingRef{from: i, ref: r})
	}
	if r, ok := obj["$dynamicRef"].(string); ok {
		g.refs = append(g.refs, pendingRef{from: i, ref: r, dynamic: true})
	}
	for _, k := range sortedKeys(obj) {
		if err := g.addChildren(n, k, obj[k], base); err != nil {
			return 0, err
		}
	}
	return i, nil
}

// addPatterns counts the regular expressions of obj (its pattern, its patternProperties'
// names) toward MaxPatternInsts. The validator compiles each once and keeps it, and the
// compiled size is a product of repeat counts that the pattern's length does not show.
func (g *graph) addPatterns(n *node, obj map[string]any) error {
	if p, ok := obj["pattern"].(string); ok {
		c, err := g.addPattern(p)
		if err != nil {
			return err
		}
		n.pattern = uint64(c)
	}
	if pp, ok := obj["patternProperties"].(map[string]any); ok {
		for _, p := range sortedKeys(pp) {
			c, err := g.addPattern(p)
			if err != nil {
				return err
			}
			n.keyPatterns += uint64(c)
		}
	}
	return nil
}

// addPattern counts p toward MaxPatternInsts and returns its instructions.
func (g *graph) addPattern(p string) (int, error) {
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return 0, fmt.Errorf("pattern %q does not compile: %v", shorten(p), err)
	}
	c := insts(re, MaxPatternInsts+1-g.patternInsts)
	if g.patternInsts += c; g.patternInsts > MaxPatternInsts {
		return 0, fmt.Errorf("its patterns compile to over %d instructions (at pattern %q)", MaxPatternInsts, shorten(p))
	}
	return c, nil
}

// insts estimates the instructions re compiles to, counting no further than limit.
func insts(re *syntax.Regexp, limit int) int {
	n := 1
	if re.Op == syntax.OpLiteral {
		n = len(re.Rune) // one instruction a rune; a class is one, its ranges shared
	}
	for _, sub := range re.Sub {
		if n += insts(sub, limit-n); n >= limit {
			return limit
		}
	}
	if re.Op == syntax.OpRepeat {
		count := max(re.Min, re.Max, 1)
		if n > limit/count {
			return limit
		}
		n *= count
	}
	return min(n, limit)
}

// shorten is p cut to 40 bytes, for an error message.
func shorten(p string) string {
	if len(p) <= 40 {
		return p
	}
	return p[:40] + "…"
}

// addChildren adds the subschemas under keyword k of n.
func (g *graph) addChildren(n *node, k string, v any, base *url.URL) error {
	link := func(child any, e edge) error {
		c, ok := child.(map[string]any)
		if !ok {
			return nil // a boolean schema, or not a schema: checks nothing below
		}
		j, err := g.add(c, base)
		if err == nil && e.kind != notApplied {
			e.to = j
			n.edges = append(n.edges, e)
		}
		return err
	}
	switch v := v.(type) {
	case map[string]any:
		if kind, ok := oneSchema(k); ok {
			return link(v, edge{kind: kind, key: k})
		}
		if kind, ok := schemaMap(k); ok {
			for _, mk := range sortedKeys(v) {
				key := mk
				if kind == everyMember {
					key = k
				}
				if err := link(v[mk], edge{kind: kind, key: key}); err != nil {
					return err
				}
			}
		}
	case []any:
		if kind, ok := schemaArray(k); ok {
			for i, e := range v {
				if err := link(e, edge{kind: kind, idx: i}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// weightOf is 1 plus the entries a subschema checks one by one.
func weightOf(obj map[string]any) uint64 {
	w := uint64(1)
	for _, k := range []string{"enum", "required", "properties", "patternProperties", "dependentRequired", "dependentSchemas", "dependencies"} {
		switch v := obj[k].(type) {
		case []any:
			w += uint64(len(v))
		case map[string]any:
			w += uint64(len(v))
		}
	}
	return w
}

// resolve is the subschemas a reference can lead to: the one it names (a JSON Pointer or
// an anchor, inside a resource of this schema), and for a $dynamicRef every subschema with
// the dynamic anchor it names. A reference to anything outside the schema is an error:
// the validator has no way to load it.
func (g *graph) resolve(r pendingRef) ([]int, error) {
	u, err := url.Parse(r.ref)
	if err != nil {
		return nil, fmt.Errorf("$ref %q: %v", r.ref, err)
	}
	u = g.nodes[r.from].base.ResolveReference(u)
	frag := u.Fragment
	u.Fragment = ""
	res, ok := g.resources[u.String()]
	if !ok {
		return nil, fmt.Errorf("$ref %q names a schema outside this one", r.ref)
	}
	var out []int
	if r.dynamic {
		out = append(out, g.dynamic[frag]...)
	}
	if frag == "" || strings.HasPrefix(frag, "/") {
		t, err := g.pointer(res, frag)
		if err != nil {
			return nil, fmt.Errorf("$ref %q: %v", r.ref, err)
		}
		return append(out, t), nil
	}
	t, ok := g.anchors[u.String()+"#"+frag]
	if !ok {
		return nil, fmt.Errorf("$ref %q: no anchor %q", r.ref, frag)
	}
	return append(out, t), nil
}

// pointer is the subschema at JSON Pointer ptr under node res.
func (g *graph) pointer(res int, ptr string) (int, error) {
	var cur any = g.nodes[res].obj
	if ptr != "" {
		for _, tok := range strings.Split(ptr[1:], "/") {
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
			switch c := cur.(type) {
			case map[string]any:
				cur = c[tok]
			case []any:
				i, err := strconv.Atoi(tok)
				if err != nil || i < 0 || i >= len(c) {
					return 0, fmt.Errorf("no element %q", tok)
				}
				cur = c[i]
			default:
				cur = nil
			}
			if cur == nil {
				return 0, fmt.Errorf("nothing at %q", ptr)
			}
		}
	}
	obj, ok := cur.(map[string]any)
	if !ok {
		return 0, fmt.Errorf("%q is not a schema object", ptr)
	}
	i, ok := g.index[mapID(obj)]
	if !ok {
		return 0, fmt.Errorf("%q is not a subschema", ptr)
	}
	return i, nil
}

// sameValueOrder is the nodes in an order where every edge that stays on the same
// argument value goes forward; a cycle of such edges is an error, since the validator
// would follow it without end.
func (g *graph) sameValueOrder() ([]int, error) {
	const (
		unseen = iota
		open
		done
	)
	state := make([]uint8, len(g.nodes))
	order := make([]int, 0, len(g.nodes))
	var visit func(i int) error
	visit = func(i int) error {
		state[i] = open
		for _, e := range g.nodes[i].edges {
			if e.kind != sameValue {
				continue
			}
			switch state[e.to] {
			case open:
				return fmt.Errorf("a $ref cycle applies a subschema to the same value again without end (through %s)", g.where(e.to))
			case unseen:
				if err := visit(e.to); err != nil {
					return err
				}
			}
		}
		state[i] = done
		order = append(order, i)
		return nil
	}
	for i := range g.nodes {
		if state[i] == unseen {
			if err := visit(i); err != nil {
				return nil, err
			}
		}
	}
	return order, nil // every node after all it reaches on the same value
}

// heaviestClosure is the node whose application to one scalar value costs the most (its
// weight and that of every subschema it applies to the same value, with multiplicity),
// and that cost. order has each node after those it reaches on the same value.
func (g *graph) heaviestClosure(order []int) (int, uint64) {
	closure := make([]uint64, len(g.nodes))
	heaviest, most := 0, uint64(0)
	for _, i := range order {
		c := ApplyCost + g.nodes[i].weight
		for _, e := range g.nodes[i].edges {
			if e.kind == sameValue {
				c = addSat(c, closure[e.to])
			}
		}
		closure[i] = c
		if c > most {
			heaviest, most = i, c
		}
	}
	return heaviest, most
}

// where names node i for an error: its $ref, else its place in the walk.
func (g *graph) where(i int) string {
	if r, ok := g.nodes[i].obj["$ref"].(string); ok {
		return "$ref " + strconv.Quote(r)
	}
	return "subschema " + strconv.Itoa(i)
}

// sortedKeys is m's keys in order, so that node numbers (and errors) do not depend on
// map order.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// mapID identifies a decoded JSON object: the map's own pointer.
func mapID(m map[string]any) uintptr { return uintptr(reflect.ValueOf(m).UnsafePointer()) }
