package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// expandEnv replaces ${VAR} and ${VAR:-default}. Unset variables without a default expand
// to "" and are reported as warnings.
func expandEnv(src []byte, lookup func(string) (string, bool)) ([]byte, Problems) {
	var ps Problems
	seen := map[string]bool{}
	out := envRef.ReplaceAllFunc(src, func(m []byte) []byte {
		sub := envRef.FindSubmatch(m)
		name := string(sub[1])
		if v, ok := lookup(name); ok && v != "" {
			return []byte(v)
		}
		if len(sub[2]) > 0 {
			return sub[3]
		}
		if !seen[name] {
			seen[name] = true
			ps = append(ps, Problem{Warning: true, Text: fmt.Sprintf("environment variable %s is not set; ${%s} expands to an empty string", name, name)})
		}
		return nil
	})
	return out, ps
}

// Load reads, expands, parses, migrates and validates a config file. The returned
// Problems hold every warning; err is a Problems value when there are errors.
func Load(path string) (*Config, Problems, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read config: %w", err)
	}
	cfg, ps, err := Parse(raw)
	if cfg != nil {
		cfg.Path = path
	}
	return cfg, ps, err
}

// Parse is Load on bytes. ${VAR} references are expanded inside YAML scalar
// values (never across the document's structure, never in comments); unknown keys are
// errors, and validation still runs so that every problem is listed at once.
func Parse(raw []byte) (*Config, Problems, error) {
	var ps Problems
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		ps = append(ps, yamlProblems(err)...)
		return nil, ps, ps
	}
	ps = append(ps, expandNode(&doc, os.LookupEnv, map[string]bool{})...)
	ps = append(ps, migrateDoc(&doc)...)
	if ps.HasErrors() {
		return nil, ps, ps
	}
	expanded, err := yaml.Marshal(&doc)
	if err != nil {
		ps = append(ps, Problem{Text: err.Error()})
		return nil, ps, ps
	}
	if len(doc.Content) == 0 {
		expanded = nil
	}
	cfg := &Config{}
	dec := yaml.NewDecoder(bytes.NewReader(expanded))
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil && !errors.Is(err, io.EOF) {
		ps = append(ps, decodeProblems(err, &doc)...)
		// Read what can be read, so that the other problems are listed too.
		cfg = &Config{}
		if err := yaml.Unmarshal(expanded, cfg); err != nil {
			return nil, ps, ps
		}
	}
	cfg.applyDefaults()
	ps = append(ps, cfg.Validate()...)
	if ps.HasErrors() {
		return cfg, ps, ps
	}
	return cfg, ps, nil
}

// expandNode expands ${VAR} in every scalar value of the document.
func expandNode(n *yaml.Node, lookup func(string) (string, bool), seen map[string]bool) Problems {
	var ps Problems
	if n.Kind == yaml.ScalarNode && strings.Contains(n.Value, "${") {
		out, p := expandEnv([]byte(n.Value), lookup)
		for _, q := range p {
			if !seen[q.Text] {
				seen[q.Text] = true
				ps = append(ps, q)
			}
		}
		if string(out) != n.Value {
			n.Value = string(out)
			switch {
			case n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0:
			case strings.ContainsAny(n.Value, "\"'#:{}[],&*!|>%@`\n\r\t") || strings.TrimSpace(n.Value) != n.Value:
				// A value with YAML syntax in it stays the string it is.
				n.Style, n.Tag = yaml.DoubleQuotedStyle, "!!str"
			default:
				n.Tag = "" // a plain value: its type is read from what it now says (8080, true)
			}
		}
	}
	for _, c := range n.Content {
		ps = append(ps, expandNode(c, lookup, seen)...)
	}
	return ps
}

// decodeProblems is yamlProblems with the decoder's "field X not found in type
// config.Y" lines replaced by the unknown keys' paths, lines and nearest known keys.
func decodeProblems(err error, doc *yaml.Node) Problems {
	var out Problems
	unknown := false
	for _, p := range yamlProblems(err) {
		if strings.Contains(p.Text, " not found in type ") {
			unknown = true
			continue
		}
		out = append(out, p)
	}
	if unknown {
		keys := unknownKeys(doc, reflect.TypeFor[Config](), "")
		if len(keys) == 0 {
			return yamlProblems(err)
		}
		out = append(out, keys...)
	}
	return out
}

func yamlProblems(err error) Problems {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		var ps Problems
		for _, e := range te.Errors {
			ps = append(ps, Problem{Text: e})
		}
		return ps
	}
	return Problems{{Text: err.Error()}}
}
