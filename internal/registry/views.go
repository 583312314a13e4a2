package registry

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/registry/internal/catalog"
)

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
	return r.views.build(servers, exclude, filter, own, elicitation)
}

// views builds the sessions' views over the registry's servers and plugins (ViewWith)
// and keeps the recent ones.
type views struct {
	r     *Registry
	cache *catalog.Cache
}

// build is ViewWith.
func (vs *views) build(servers []string, exclude map[string]bool, filter ViewFilter, own map[string]*Catalog, elicitation bool) *View {
	r := vs.r
	parts := make([]catalog.Part, 0, len(servers))
	keyb := make([]byte, 0, 64)
	// A view built from a session's own instance's catalogue is that session's alone (the
	// session keeps it): in the shared cache each restart of the instance added a view
	// no one else would ask for, holding its catalogue until 256 others pushed it out.
	private := false
	for _, name := range servers {
		if exclude[name] {
			continue
		}
		cat, mine := vs.partCatalog(name, filter, own, elicitation)
		if cat == nil {
			continue
		}
		private = private || mine
		parts = append(parts, catalog.Part{Name: name, Cat: cat})
		keyb = append(keyb, name...)
		keyb = append(keyb, '@')
		keyb = strconv.AppendUint(keyb, cat.Seq, 36)
		keyb = append(keyb, ';')
	}
	if filter != nil {
		keyb = append(keyb, '|')
		keyb = append(keyb, filter.Key()...)
	}
	keyb = append(keyb, r.integ.key()...)
	key := string(keyb)
	if v := vs.cache.Get(key); !private && v != nil {
		return v
	}
	v := catalog.BuildView(key, parts, filter, func(part string) catalog.Admission {
		return admission{in: &r.integ, policy: r.integ.policy(part)}
	})
	if !private {
		vs.cache.Put(key, v)
	}
	return v
}

// partCatalog is the catalogue a view takes from the server or plugin name: nil when it is
// neither, is not up, or the filter refuses it. A plugin's is generated for the filter's
// PluginScope; a server's is the session's own instance's when own has one (mine).
func (vs *views) partCatalog(name string, filter ViewFilter, own map[string]*Catalog, elicitation bool) (cat *Catalog, mine bool) {
	r := vs.r
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
