package config

import (
	"encoding/json"
	"fmt"
	"strings"
)

// commandPluginProblems checks an out-of-process plugin (plugins.<name>.command): a
// command and no type, no keys of the in-process types, a config that can be sent as
// JSON, and environment names that can be set.
func commandPluginProblems(where string, d *PluginDef) Problems {
	var ps Problems
	add := func(where, format string, a ...any) {
		ps = append(ps, Problem{Where: where, Text: fmt.Sprintf(format, a...)})
	}
	if strings.TrimSpace(d.Command) == "" {
		add(where, "args, env or config without a command: an out-of-process plugin needs command (the executable), an in-process one a type (%s)", strings.Join(PluginTypes(), ", "))
		return ps
	}
	if d.Type != "" {
		add(where, "both type %q and command %q: a plugin is either a type run in the gateway or a command run beside it; remove one", d.Type, d.Command)
	}
	if len(d.Connections) > 0 {
		add(where+".connections", "a command plugin's connections are its own; put them under config (they are sent to it)")
	}
	for k := range d.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			add(where+".env", "%q is not an environment variable name", k)
		}
	}
	if d.Config != nil {
		if _, err := json.Marshal(jsonable(d.Config)); err != nil {
			add(where+".config", "cannot be sent to the plugin as JSON: %v", err)
		}
	}
	if d.CallTimeout < 0 {
		add(where+".call_timeout", "must not be negative")
	}
	return ps
}

// jsonable turns what YAML decoded into values encoding/json writes: maps with
// non-string keys (YAML allows `1: x`) get their keys printed.
func jsonable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonable(e)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = jsonable(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonable(e)
		}
		return out
	}
	return v
}

// ConfigJSON is an out-of-process plugin's config as the JSON it is sent (nil: none).
func (d *PluginDef) ConfigJSON() (json.RawMessage, error) {
	if d.Config == nil {
		return nil, nil
	}
	return json.Marshal(jsonable(d.Config))
}
