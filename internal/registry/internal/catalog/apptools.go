package catalog

import (
	"sort"
	"sync"
)

// An MCP App (a tool's ui:// resource, rendered by the host) calls its server's tools
// through the host by the names the server gave them: the app's code was written for the
// server, not for the gateway, and the host passes the call on unchanged. AppTool finds
// the tool such a call means: a tool of a server whose tools link a UI, by its own name,
// when exactly one such server in the view has a tool of that name.

// appTools is the view's index of tools by their upstream names, over the servers whose
// tools link a UI, built on first use.
type appTools struct {
	once   sync.Once
	byName map[string][]*Tool
}

// AppTool finds the tool an app's call by its server's own name means: the one tool of
// the view's UI servers named name upstream. When several servers have one, it gives nil
// and their exposed names, sorted, so the caller can say which to call.
func (v *View) AppTool(name string) (*Tool, []string) {
	v.apps.once.Do(func() {
		ui := map[string]bool{}
		for _, t := range v.Tools {
			if t.UI {
				ui[t.Server] = true
			}
		}
		if len(ui) == 0 {
			return
		}
		v.apps.byName = map[string][]*Tool{}
		for _, t := range v.Tools {
			if ui[t.Server] && t.PluginTool == nil {
				v.apps.byName[t.Name] = append(v.apps.byName[t.Name], t)
			}
		}
	})
	ts := v.apps.byName[name]
	switch len(ts) {
	case 0:
		return nil, nil
	case 1:
		return ts[0], nil
	}
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.ListedName()
	}
	sort.Strings(names)
	return nil, names
}
