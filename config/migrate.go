package config

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// A migration brings a config file's document from one schema version to the next. It
// works on the YAML tree, before decoding, because an older file may use keys the current
// types no longer accept. Each one is small, named, and has its own test that feeds the
// old shape and checks the new one (migrate_test.go).
type migration struct {
	from int // the version it reads; it writes from+1
	name string
	// run changes the document in place and says whether it changed anything.
	run func(doc *yaml.Node) (bool, Problems)
}

// migrations run in order from a file's version up to CurrentVersion. Version 0 (no
// version: key) is read as version 1, the shape of the first release.
var migrations = []migration{
	{from: 1, name: "v1-to-v2-url-rewrite-key", run: renamePolicyKey("http_url_rewrite", "url_rewrite")},
}

// migrateDoc runs the migrations a document needs and sets its version: to CurrentVersion.
// A migration that changed the document is reported as a warning (the file still works;
// updating it silences the warning); a file written for a newer release is an error.
func migrateDoc(doc *yaml.Node) Problems {
	root := docRoot(doc)
	if root == nil {
		return nil
	}
	v := 1
	vn := mapValue(root, "version")
	if vn != nil {
		if err := vn.Decode(&v); err != nil {
			return Problems{{Where: "version", Text: fmt.Sprintf("%q is not a number", vn.Value)}}
		}
		if v == 0 {
			v = 1
		}
	}
	if v > CurrentVersion {
		return Problems{{Where: "version", Text: fmt.Sprintf("%d is newer than this mcpgw understands (%d): the file was written for a later release", v, CurrentVersion)}}
	}
	var ps Problems
	for _, m := range migrations {
		if m.from < v {
			continue
		}
		changed, mps := m.run(root)
		ps = append(ps, mps...)
		if changed {
			ps = append(ps, Problem{Warning: true, Where: "version", Text: fmt.Sprintf("migrated from version %d to %d (%s); update the file and set version: %d to silence this", m.from, m.from+1, m.name, CurrentVersion)})
		}
		v = m.from + 1
	}
	if vn == nil {
		root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "version"}, &yaml.Node{Kind: yaml.ScalarNode, Value: fmt.Sprint(v)})
	} else {
		vn.Kind, vn.Tag, vn.Value = yaml.ScalarNode, "!!int", fmt.Sprint(v)
	}
	return ps
}

// renamePolicyKey renames a key inside every executor's mcp_policy (the name the
// orchestrators' own config format used, http_url_rewrite, became url_rewrite).
func renamePolicyKey(old, new string) func(*yaml.Node) (bool, Problems) {
	return func(root *yaml.Node) (bool, Problems) {
		var ps Problems
		changed := false
		execs := mapValue(root, "executors")
		if execs == nil || execs.Kind != yaml.MappingNode {
			return false, nil
		}
		for i := 0; i+1 < len(execs.Content); i += 2 {
			pol := mapValue(execs.Content[i+1], "mcp_policy")
			if pol == nil || pol.Kind != yaml.MappingNode {
				continue
			}
			where := "executors." + execs.Content[i].Value + ".mcp_policy"
			for j := 0; j+1 < len(pol.Content); j += 2 {
				if pol.Content[j].Value != old {
					continue
				}
				if mapValue(pol, new) != nil {
					ps = append(ps, Problem{Where: where, Text: fmt.Sprintf("has both %s and %s (the old name of the same key): keep %s", old, new, new)})
					continue
				}
				pol.Content[j].Value = new
				changed = true
			}
		}
		return changed, ps
	}
}

// docRoot is the top mapping of a document node (nil for an empty document).
func docRoot(doc *yaml.Node) *yaml.Node {
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		doc = doc.Content[0]
	}
	if doc.Kind != yaml.MappingNode {
		return nil
	}
	return doc
}

// mapValue is the value node of key in a mapping node (nil when absent).
func mapValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}
