package catalog

import (
	"encoding/json"
	"regexp"
	"strconv"
	"sync"
)

// NameRule is what a client takes as a tool name (docs/config.md, "Clients"): at most Max
// bytes (0: no limit of its own) matching Pattern (nil: any name the naming rules make).
type NameRule struct {
	Max     int
	Pattern *regexp.Regexp
}

// key names the rule in a view's cache of shaped views.
func (r NameRule) key() string {
	k := strconv.Itoa(r.Max)
	if r.Pattern != nil {
		k += "\x00" + r.Pattern.String()
	}
	return k
}

// fits reports whether name needs no shaping under r.
func (r NameRule) fits(name string) bool {
	return (r.Max <= 0 || len(name) <= r.Max) && (r.Pattern == nil || r.Pattern.MatchString(name))
}

// shapedViews caches a view's shaped forms, by rule.
type shapedViews struct {
	mu sync.Mutex
	by map[string]*View
}

// Shaped is the view as a client with name rule r sees it: each tool whose exposed name does
// not fit is listed under ShapeName's shortened name, which depends only on the name and the
// rule, so it is the same across sessions, restarts and replicas. The shaped tool keeps its
// Exposed name (the audit log and metrics carry that) and is found by either name, so a call
// by the real name works too. Tools that fit are the view's own. The shaped view is built
// once per view and rule; with nothing to shape it is v itself.
func (v *View) Shaped(r NameRule, sep string) *View {
	if r.Max <= 0 && r.Pattern == nil {
		return v
	}
	return v.shaped.get(r.key(), func() *View { return v.shapedCopy(r, sep) })
}

// get is the shaped view cached under key, built (once) by build when there is none.
func (c *shapedViews) get(key string, build func() *View) *View {
	c.mu.Lock()
	defer c.mu.Unlock()
	if sv, ok := c.by[key]; ok {
		return sv
	}
	sv := build()
	if c.by == nil {
		c.by = map[string]*View{}
	}
	c.by[key] = sv
	return sv
}

// shapedCopy builds Shaped's view: v when every name fits.
func (v *View) shapedCopy(r NameRule, sep string) *View {
	// taken are the names a shaped name may not be: every exposed name of the view, and the
	// shaped names given so far. A shaped name that would be one of them (an upstream may
	// name a tool after another's shortening: the hash is no secret) is made again from
	// the name with a counter; after a few tries the tool keeps its exposed name.
	taken := make(map[string]bool, len(v.Tools))
	for _, t := range v.Tools {
		taken[t.Exposed] = true
	}
	var renamed map[*Tool]*Tool
	for _, t := range v.Tools {
		if r.fits(t.Exposed) {
			continue
		}
		tsep, tail := sep, ""
		if t.PluginTool != nil { // a plugin tool's name is cut in the middle, its operation kept
			tsep, tail = "", t.PluginTool.NameOp()
		}
		name := shapeKeeping(t.Exposed, tsep, tail, r.Max, r.Pattern)
		for i := 1; taken[name] && i <= shapeRetries; i++ {
			name = shapeKeeping(t.Exposed+"_"+strconv.Itoa(i), tsep, "", r.Max, r.Pattern)
		}
		if taken[name] {
			continue
		}
		taken[name] = true
		if renamed == nil {
			renamed = map[*Tool]*Tool{}
		}
		renamed[t] = &Tool{Server: t.Server, Name: t.Name, Exposed: t.Exposed, Plain: t.Plain, Def: Rename(t.Def, name), Own: t.Own, UI: t.UI,
			ReadOnly: t.ReadOnly, Destructive: t.Destructive, PluginTool: t.PluginTool, PluginRun: t.PluginRun}
	}
	if renamed == nil {
		return v
	}
	sv := &View{Key: v.Key + "|shaped:" + r.key(), Servers: v.Servers, Prompts: v.Prompts, Resources: v.Resources,
		Templates: v.Templates, promptByName: v.promptByName, resourceBy: v.resourceBy, held: v.held,
		toolByName: make(map[string]*Tool, len(v.toolByName)+len(renamed))}
	for _, t := range v.Tools {
		if st := renamed[t]; st != nil {
			t = st
		}
		sv.Tools = append(sv.Tools, t)
		sv.toolByName[t.Exposed] = t
	}
	for _, st := range renamed {
		sv.toolByName[st.ListedName()] = st // never an exposed name: taken above
	}
	return sv
}

// shapeRetries bounds the attempts at a shaped name that no other tool has.
const shapeRetries = 8

// ListedName is the name the tool is listed under: its Exposed name unless a client's name
// rule shaped it (View.Shaped).
func (t *Tool) ListedName() string {
	var d struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(t.Def, &d) != nil || d.Name == "" {
		return t.Exposed
	}
	return d.Name
}
