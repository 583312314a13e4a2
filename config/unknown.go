package config

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// unknownKeys lists the keys of a config document that the config model has no place
// for, by their path in the file (naming.seperator) and line, with the nearest known key
// when one is close: what a user who mistyped a key needs, where the YAML decoder says
// "field seperator not found in type config.Naming". n is the document's node as written
// (so lines are the file's), t the Go type it decodes into.
func unknownKeys(n *yaml.Node, t reflect.Type, path string) Problems {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.DocumentNode {
		var ps Problems
		for _, c := range n.Content {
			ps = append(ps, unknownKeys(c, t, path)...)
		}
		return ps
	}
	if reflect.PointerTo(t).Implements(reflect.TypeFor[yaml.Unmarshaler]()) {
		return nil // it reads its own shapes
	}
	var ps Problems
	switch {
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		fields := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			f, ok := fields[k.Value]
			if !ok {
				ps = append(ps, Problem{Where: path + k.Value,
					Text: fmt.Sprintf("line %d: unknown key%s", k.Line, suggestKey(k.Value, fields))})
				continue
			}
			ps = append(ps, unknownKeys(v, f, path+k.Value+".")...)
		}
	case t.Kind() == reflect.Map && n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			ps = append(ps, unknownKeys(n.Content[i+1], t.Elem(), path+n.Content[i].Value+".")...)
		}
	case t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode:
		for i, c := range n.Content {
			ps = append(ps, unknownKeys(c, t.Elem(), strings.TrimSuffix(path, ".")+"["+strconv.Itoa(i)+"].")...)
		}
	}
	return ps
}

// yamlFields maps a struct's YAML keys to their types, as the decoder names them.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f.Type
	}
	return out
}

// suggestKey is ` (did you mean "separator"?)` for the known key nearest to key, when it
// is within two edits (or a third of the key's length), else "".
func suggestKey(key string, fields map[string]reflect.Type) string {
	best, bestD := "", 1<<30
	for k := range fields {
		if d := editDistance(strings.ToLower(key), k); d < bestD || (d == bestD && k < best) {
			best, bestD = k, d
		}
	}
	if best == "" || bestD > max(2, len(key)/3) {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
