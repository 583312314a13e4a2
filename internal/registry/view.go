package registry

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"sync"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// View is the set of tools, prompts and resources one session may see.
type View struct {
	Key       string
	Servers   []string
	Tools     []*Tool
	Prompts   []*Prompt
	Resources []*Resource
	Templates []*Resource

	toolByName   map[string]*Tool
	promptByName map[string]*Prompt
	resourceBy   map[string]*Resource

	pages sync.Map // cursor+kind → *Page

	hashOnce   sync.Once
	hash       string
	othersOnce sync.Once
	othersHash string

	// held are the exposed names of tools the view's filter admits and integrity holds
	// (internal/registry/integrity.go): a call to one is told it awaits approval.
	held map[string]bool

	search viewSearch  // the tool search index (search.go), built on first use
	shaped shapedViews // the view as clients with stricter name rules see it (shaped.go)
}

// Tool finds a tool by exposed name.
func (v *View) Tool(name string) *Tool { return v.toolByName[name] }

// Held reports whether name is a tool of the view's servers that the view would admit
// but integrity holds until an admin approves it.
func (v *View) Held(name string) bool { return v.held[name] }

func (v *View) hold(name string) {
	if v.held == nil {
		v.held = map[string]bool{}
	}
	v.held[name] = true
}

// Prompt finds a prompt by exposed name.
func (v *View) Prompt(name string) *Prompt { return v.promptByName[name] }

// Resource finds the server of a listed resource URI.
func (v *View) Resource(uri string) *Resource { return v.resourceBy[uri] }

// ViewFilter decides what of the catalogue a view admits. Key identifies its rules.
type ViewFilter interface {
	Key() string
	Server(name string) (bool, string)
	Tool(t *Tool) (bool, string)
	Prompt(p *Prompt) bool
}

// ViewFor builds (or fetches from cache) the view over the given servers. Servers that are
// not up, and those in exclude, are left out; filter (if not nil) decides the rest.
func (r *Registry) ViewFor(servers []string, exclude map[string]bool, filter ViewFilter, own map[string]*Catalog) *View {
	return r.ViewWith(servers, exclude, filter, own, false)
}

// ViewWith is ViewFor for a session whose client may (elicitation) or may not be asked to
// confirm: plugin tools that delete or run Dangerous actions then ask the user instead of
// requiring "confirm": true. servers may name plugins too; their tools are generated for
// the filter's PluginScope (when it is a PluginScoper).
func (r *Registry) ViewWith(servers []string, exclude map[string]bool, filter ViewFilter, own map[string]*Catalog, elicitation bool) *View {
	parts := make([]viewPart, 0, len(servers))
	keyb := make([]byte, 0, 64)
	// A view built from a session's own instance's catalogue is that session's alone (the
	// session keeps it): in the shared cache each restart of the instance added a view
	// no one else would ask for, holding its catalogue until 256 others pushed it out.
	private := false
	for _, name := range servers {
		if exclude[name] {
			continue
		}
		cat, mine := r.partCatalog(name, filter, own, elicitation)
		if cat == nil {
			continue
		}
		private = private || mine
		parts = append(parts, viewPart{name, cat})
		keyb = append(keyb, name...)
		keyb = append(keyb, '@')
		keyb = strconv.AppendUint(keyb, cat.seq, 36)
		keyb = append(keyb, ';')
	}
	if filter != nil {
		keyb = append(keyb, '|')
		keyb = append(keyb, filter.Key()...)
	}
	keyb = append(keyb, r.integ.key()...)
	key := string(keyb)
	if v := r.views.get(key); !private && v != nil {
		return v
	}
	v := &View{Key: key, toolByName: map[string]*Tool{}, promptByName: map[string]*Prompt{}, resourceBy: map[string]*Resource{}}
	tmplSeen := map[string]bool{}
	for _, p := range parts {
		v.Servers = append(v.Servers, p.name)
		a := admission{in: &r.integ, policy: r.integ.policy(p.name)}
		v.addTools(p.cat, filter, a)
		v.addRest(p.cat, filter, tmplSeen, a)
	}
	addPluginResources(v) // the plugin resource types of the tools the view kept
	sort.Slice(v.Tools, func(i, j int) bool { return v.Tools[i].Exposed < v.Tools[j].Exposed })
	sort.Slice(v.Prompts, func(i, j int) bool { return v.Prompts[i].Exposed < v.Prompts[j].Exposed })
	if !private {
		r.views.put(key, v)
	}
	return v
}

// viewPart is one server's (or plugin's) catalogue in a view.
type viewPart struct {
	name string
	cat  *Catalog
}

// partCatalog is the catalogue a view takes from the server or plugin name: nil when it is
// neither, is not up, or the filter refuses it. A plugin's is generated for the filter's
// PluginScope; a server's is the session's own instance's when own has one (mine).
func (r *Registry) partCatalog(name string, filter ViewFilter, own map[string]*Catalog, elicitation bool) (cat *Catalog, mine bool) {
	s := r.Server(name)
	var p *Plugin
	if s == nil {
		if p = r.Plugin(name); p == nil {
			return nil, false
		}
	}
	if filter != nil {
		if ok, _ := filter.Server(name); !ok {
			return nil, false
		}
	}
	if p != nil {
		var sc PluginScope
		if ps, ok := filter.(PluginScoper); ok {
			sc = ps.PluginScope()
		}
		return p.CatalogFor(sc, elicitation), false
	}
	cat = s.Catalog()
	if oc := own[name]; oc != nil && cat != nil {
		return oc, true // the session's own instance's catalogue
	}
	return cat, false
}

// addTools adds the tools of cat the filter admits; for a name two servers offer, the
// first server wins (validation reports the collision).
func (v *View) addTools(cat *Catalog, filter ViewFilter, a admission) {
	for _, t := range cat.Tools {
		if _, dup := v.toolByName[t.Exposed]; dup {
			continue
		}
		if filter != nil {
			if ok, _ := filter.Tool(t); !ok {
				continue
			}
		}
		at := a.tool(t)
		if at == nil {
			v.hold(t.Exposed)
			continue
		}
		t = at
		v.toolByName[t.Exposed] = t
		v.Tools = append(v.Tools, t)
	}
}

// addRest adds the prompts the filter admits, the resources and the resource templates of
// cat; the first of each name or URI wins.
func (v *View) addRest(cat *Catalog, filter ViewFilter, tmplSeen map[string]bool, a admission) {
	for _, pr := range cat.Prompts {
		if _, dup := v.promptByName[pr.Exposed]; dup {
			continue
		}
		if filter != nil && !filter.Prompt(pr) {
			continue
		}
		if pr = a.prompt(pr); pr == nil {
			continue
		}
		v.promptByName[pr.Exposed] = pr
		v.Prompts = append(v.Prompts, pr)
	}
	for _, res := range cat.Resources {
		if _, dup := v.resourceBy[res.URI]; dup {
			continue
		}
		v.resourceBy[res.URI] = res
		v.Resources = append(v.Resources, res)
	}
	for _, t := range cat.Templates {
		if tmplSeen[t.URI] {
			continue
		}
		if t = a.template(t); t == nil {
			continue
		}
		tmplSeen[t.URI] = true
		v.Templates = append(v.Templates, t)
	}
}

// Collisions lists exposed tool and prompt names that more than one server offers, as
// validation problems naming both servers.
func (r *Registry) Collisions() config.Problems {
	var ps config.Problems
	tools := map[string]string{}
	prompts := map[string]string{}
	set := r.set.Load()
	type named struct {
		name string
		cat  *Catalog
	}
	cats := make([]named, 0, len(set.names)+len(set.plugins))
	for _, name := range set.names {
		if cat := set.m[name].Catalog(); cat != nil {
			cats = append(cats, named{name, cat})
		}
	}
	// A plugin's tools as a session with every connection sees them.
	for _, name := range slices.Sorted(maps.Keys(set.plugins)) {
		if cat := set.plugins[name].CatalogFor(PluginScope{}, false); cat != nil {
			cats = append(cats, named{name, cat})
		}
	}
	for _, c := range cats {
		name, cat := c.name, c.cat
		where := "servers." + name
		if _, isPlugin := set.plugins[name]; isPlugin {
			where = "plugins." + name
		}
		for _, t := range cat.Tools {
			if prev, ok := tools[t.Exposed]; ok && prev != name {
				ps = append(ps, config.Problem{Where: where, Text: fmt.Sprintf("tool name %q collides with %q's tool of the same exposed name", t.Exposed, prev)})
				continue
			}
			tools[t.Exposed] = name
		}
		for _, p := range cat.Prompts {
			if prev, ok := prompts[p.Exposed]; ok && prev != name {
				ps = append(ps, config.Problem{Where: where, Text: fmt.Sprintf("prompt name %q collides with %q's prompt of the same exposed name", p.Exposed, prev)})
				continue
			}
			prompts[p.Exposed] = name
		}
	}
	return ps
}

// Page is one pre-serialized page of a list result and its size in tokens (CountTokens),
// counted once when the page was built: serving it again reads both from the cache.
type Page struct {
	Bytes  []byte
	Tokens int
}

// ListPage returns one page of a list result, pre-serialized: kind is tools, prompts,
// resources or resourceTemplates; thin selects the thin form of tools. An unknown cursor
// gives ok=false.
func (v *View) ListPage(kind string, thin bool, cursor string, pageSize int, extra ...json.RawMessage) (page []byte, ok bool) {
	p, ok := v.ListPageCounted(kind, thin, cursor, pageSize, extra...)
	if !ok {
		return nil, false
	}
	return p.Bytes, true
}

// ListPageCounted is ListPage with the page's token count. The first call for a page builds
// it and counts its tokens; later calls are a cache hit that neither builds nor counts.
func (v *View) ListPageCounted(kind string, thin bool, cursor string, pageSize int, extra ...json.RawMessage) (*Page, bool) {
	ck := kind + "\x00" + strconv.Itoa(pageSize) + "\x00" + cursor
	if thin {
		ck = "thin:" + ck
	}
	if p, hit := v.pages.Load(ck); hit {
		return p.(*Page), true
	}
	b, ok := v.buildPage(kind, thin, cursor, pageSize, extra)
	if !ok {
		return nil, false
	}
	p, _ := v.pages.LoadOrStore(ck, &Page{Bytes: b, Tokens: CountTokens(b)})
	return p.(*Page), true
}

// buildPage serializes one page (see ListPage).
func (v *View) buildPage(kind string, thin bool, cursor string, pageSize int, extra []json.RawMessage) ([]byte, bool) {
	var defs []json.RawMessage
	var names []string
	switch kind {
	case "tools":
		for _, t := range v.Tools {
			if thin {
				defs = append(defs, t.Thin())
			} else {
				defs = append(defs, t.Def)
			}
			names = append(names, t.Exposed)
		}
		if thin {
			// Gateway tools go last; their names sort after no upstream's on purpose.
			for i, e := range extra {
				defs, names = append(defs, e), append(names, "\xff"+strconv.Itoa(i))
			}
		}
	case "prompts":
		for _, p := range v.Prompts {
			defs, names = append(defs, p.Def), append(names, p.Exposed)
		}
	case "resources":
		for _, res := range v.Resources {
			defs, names = append(defs, res.Def), append(names, res.Server+"\x00"+res.URI)
		}
	case "resourceTemplates":
		for _, res := range v.Templates {
			defs, names = append(defs, res.Def), append(names, res.Server+"\x00"+res.URI)
		}
	}
	start := 0
	if cursor != "" {
		after, err := decodeCursor(kind, cursor)
		if err != nil {
			return nil, false
		}
		start = -1
		for i, n := range names {
			if n == after {
				start = i + 1
				break
			}
		}
		if start < 0 {
			return nil, false
		}
	}
	end := len(defs)
	if pageSize > 0 && end-start > pageSize {
		end = start + pageSize
	}
	size := 32
	for _, d := range defs[start:end] {
		size += len(d) + 1
	}
	b := make([]byte, 0, size)
	b = append(b, `{"`...)
	b = append(b, kind...)
	b = append(b, `":[`...)
	for i, d := range defs[start:end] {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, d...)
	}
	b = append(b, ']')
	if end < len(defs) {
		b = append(b, `,"nextCursor":`...)
		b = append(b, wire.Quote(encodeCursor(kind, names[end-1]))...)
	}
	b = append(b, '}')
	return b, true
}
