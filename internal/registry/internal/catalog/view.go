package catalog

import (
	"encoding/json"
	"sort"
	"strconv"
	"sync"

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
	Skills    []*Skill // in server order, each server's as listed (skills.go)

	toolByName   map[string]*Tool
	promptByName map[string]*Prompt
	resourceBy   map[string]*Resource
	skillBy      map[string]*Skill   // by exposed URI
	skillsOf     map[string][]*Skill // by server

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
	apps   appTools    // its UI servers' tools by their own names (apptools.go), built on first use
	catMap viewMap     // its catalogue map (catmap.go), built on first use
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

// Resource finds a listed resource by the URI clients see (ListedURI).
func (v *View) Resource(uri string) *Resource { return v.resourceBy[uri] }

// ViewFilter decides what of the catalogue a view admits. Key identifies its rules.
type ViewFilter interface {
	Key() string
	Server(name string) (bool, string)
	Tool(t *Tool) (bool, string)
	Prompt(p *Prompt) bool
}

// Part is one server's (or plugin's) catalogue in a view.
type Part struct {
	Name string
	Cat  *Catalog
}

// Admission is what integrity lets a view serve of one part's catalogue: the tool, prompt
// or template as given, an older version of it, or nil (held until an admin approves).
type Admission interface {
	Tool(t *Tool) *Tool
	Prompt(p *Prompt) *Prompt
	Template(t *Resource) *Resource
	Skill(s *Skill) *Skill
}

// admitAll serves everything as given.
type admitAll struct{}

func (admitAll) Tool(t *Tool) *Tool             { return t }
func (admitAll) Prompt(p *Prompt) *Prompt       { return p }
func (admitAll) Template(t *Resource) *Resource { return t }
func (admitAll) Skill(s *Skill) *Skill          { return s }

// BuildView builds the view named key over parts, in order: filter (if not nil) decides
// what it admits, admit (if not nil) what integrity lets it serve of each part. For a
// name or URI two parts offer, the first part wins.
func BuildView(key string, parts []Part, filter ViewFilter, admit func(part string) Admission) *View {
	v := &View{Key: key, toolByName: map[string]*Tool{}, promptByName: map[string]*Prompt{}, resourceBy: map[string]*Resource{}}
	tmplSeen := map[string]bool{}
	for _, p := range parts {
		v.Servers = append(v.Servers, p.Name)
		var a Admission = admitAll{}
		if admit != nil {
			a = admit(p.Name)
		}
		v.addTools(p.Cat, filter, a)
		v.addSkills(p.Cat, a)
		v.addRest(p.Cat, filter, tmplSeen, a)
	}
	addPluginResources(v) // the plugin resource types of the tools the view kept
	sort.Slice(v.Tools, func(i, j int) bool { return v.Tools[i].Exposed < v.Tools[j].Exposed })
	sort.Slice(v.Prompts, func(i, j int) bool { return v.Prompts[i].Exposed < v.Prompts[j].Exposed })
	return v
}

// addTools adds the tools of cat the filter admits; for a name two servers offer, the
// first server wins (validation reports the collision).
func (v *View) addTools(cat *Catalog, filter ViewFilter, a Admission) {
	for _, t := range cat.Tools {
		if _, dup := v.toolByName[t.Exposed]; dup {
			continue
		}
		if filter != nil {
			if ok, _ := filter.Tool(t); !ok {
				continue
			}
		}
		at := a.Tool(t)
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
func (v *View) addRest(cat *Catalog, filter ViewFilter, tmplSeen map[string]bool, a Admission) {
	for _, pr := range cat.Prompts {
		if _, dup := v.promptByName[pr.Exposed]; dup {
			continue
		}
		if filter != nil && !filter.Prompt(pr) {
			continue
		}
		if pr = a.Prompt(pr); pr == nil {
			continue
		}
		v.promptByName[pr.Exposed] = pr
		v.Prompts = append(v.Prompts, pr)
	}
	for _, res := range cat.Resources {
		if _, dup := v.resourceBy[res.ListedURI()]; dup || res.Skill != "" && v.skillBy[res.Skill] == nil {
			continue // a held skill's files are not listed
		}
		v.resourceBy[res.ListedURI()] = res
		v.Resources = append(v.Resources, res)
	}
	for _, t := range cat.Templates {
		if tmplSeen[t.URI] {
			continue
		}
		if t = a.Template(t); t == nil {
			continue
		}
		tmplSeen[t.URI] = true
		v.Templates = append(v.Templates, t)
	}
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
	case "skills":
		for _, sk := range v.Skills {
			defs, names = append(defs, sk.Def), append(names, sk.Exposed)
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
