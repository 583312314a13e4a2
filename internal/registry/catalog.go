package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/schemabound"
	"github.com/mcpgw/mcpgw/internal/upstream"
	"github.com/mcpgw/mcpgw/internal/wire"
	"github.com/mcpgw/mcpgw/plugin"
)

// Tool is one upstream tool as the gateway exposes it.
type Tool struct {
	Server  string
	Name    string // the upstream's own name
	Exposed string
	// Plain is the name the naming rules give before naming.max_length cuts it (server,
	// separator, name; or the name alone): tool globs match it as well as Exposed, so a glob
	// written as "server__*" still holds for a tool whose exposed name was shortened.
	Plain string
	// Def is the definition clients see (the upstream's, with the exposed name), as bytes.
	Def        json.RawMessage
	thinOnce   sync.Once
	thin       json.RawMessage
	schemaOnce sync.Once
	schema     *jsonschema.Resolved // compiled input schema, for schema-on-error
	bound      *schemabound.Plan    // the work bound of validating against it
	// Unvalidated says why calls to the tool are forwarded without checking their
	// arguments against its input schema: the schema cannot be validated within bounds
	// (internal/schemabound). "" when they are checked.
	Unvalidated string
	ReadOnly    bool
	Destructive bool
	// PluginTool and PluginRun are set on a tool a plugin generated (Server is the
	// plugin's name): a call to it runs the plugin's Call(PluginTool) in the gateway instead
	// of going to an upstream. PluginRun says which run of the plugin generated it (a
	// plugin a reload replaced is a new run): Registry.PluginFor finds the plugin by name
	// and gives nil when the run is no longer the plugin's.
	PluginTool *plugin.Tool
	PluginRun  uint64
	// Hash is the fingerprint of the upstream's own definition (internal/registry/integrity.go).
	Hash string
}

// Prompt is one upstream prompt as exposed.
type Prompt struct {
	Server  string
	Name    string
	Exposed string
	Def     json.RawMessage
	Hash    string // the fingerprint of the upstream's own definition
}

// Resource is a resource or resource template; URIs are not renamed.
type Resource struct {
	Server string
	URI    string // uri, or uriTemplate for templates
	Def    json.RawMessage
	Hash   string // a template's fingerprint
}

// Catalog is what one upstream offers, as of its last listing.
type Catalog struct {
	Tools     []*Tool
	Prompts   []*Prompt
	Resources []*Resource
	Templates []*Resource
	Caps      upstream.Capabilities
	// Instructions from the upstream's initialize result (served through
	// Integrity.Instructions).
	Instructions string
	instrHash    string // their fingerprint
	// Problems found while building the catalogue (names that collide inside one server).
	Problems []string
	// seq identifies this catalogue in view keys.
	seq uint64
}

var catalogSeq atomic.Uint64

// fetchCatalog lists everything an upstream offers.
func fetchCatalog(ctx context.Context, server string, c *upstream.Conn, n config.Naming) (cat *Catalog, err error) {
	defer func() {
		// What an upstream lists is input like any other: a list that trips a bug fails
		// this listing (the server is retried with backoff), never the daemon.
		if p := recover(); p != nil {
			cat, err = nil, fmt.Errorf("reading the lists of %q failed: internal error: %v", server, p)
		}
	}()
	cat = &Catalog{Caps: c.ServerCaps, Instructions: c.Instructions, seq: catalogSeq.Add(1)}
	if c.ServerCaps.Tools != nil {
		items, err := c.ListAll(ctx, "tools/list", "tools")
		if err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		seen := map[string]string{}
		for _, raw := range items {
			t, err := exposeTool(server, raw, n)
			if err != nil {
				cat.Problems = append(cat.Problems, err.Error())
				continue
			}
			if prev, dup := seen[t.Exposed]; dup {
				cat.Problems = append(cat.Problems, fmt.Sprintf("tools %q and %q both expose as %q; the second is hidden", prev, t.Name, t.Exposed))
				continue
			}
			seen[t.Exposed] = t.Name
			if t.checkSchema(); t.Unvalidated != "" {
				cat.Problems = append(cat.Problems, fmt.Sprintf("tool %q: calls are forwarded unvalidated: %s", t.Name, t.Unvalidated))
			}
			cat.Tools = append(cat.Tools, t)
		}
		sort.Slice(cat.Tools, func(i, j int) bool { return cat.Tools[i].Exposed < cat.Tools[j].Exposed })
	}
	if c.ServerCaps.Prompts != nil {
		items, err := c.ListAll(ctx, "prompts/list", "prompts")
		if err != nil {
			return nil, fmt.Errorf("prompts/list: %w", err)
		}
		for _, raw := range items {
			var head struct {
				Name string `json:"name"`
			}
			if json.Unmarshal(raw, &head) != nil || head.Name == "" {
				cat.Problems = append(cat.Problems, "a prompt without a name was skipped")
				continue
			}
			ex := ExposedName(server, head.Name, n)
			cat.Prompts = append(cat.Prompts, &Prompt{Server: server, Name: head.Name, Exposed: ex, Def: rename(raw, ex)})
		}
		sort.Slice(cat.Prompts, func(i, j int) bool { return cat.Prompts[i].Exposed < cat.Prompts[j].Exposed })
	}
	if c.ServerCaps.Resources != nil {
		items, err := c.ListAll(ctx, "resources/list", "resources")
		if err != nil {
			return nil, fmt.Errorf("resources/list: %w", err)
		}
		for _, raw := range items {
			var head struct {
				URI string `json:"uri"`
			}
			if json.Unmarshal(raw, &head) == nil && head.URI != "" {
				cat.Resources = append(cat.Resources, &Resource{Server: server, URI: head.URI, Def: compact(raw)})
			}
		}
		// Templates are optional; an upstream without them answers method not found.
		if items, err := c.ListAll(ctx, "resources/templates/list", "resourceTemplates"); err == nil {
			for _, raw := range items {
				var head struct {
					URI string `json:"uriTemplate"`
				}
				if json.Unmarshal(raw, &head) == nil && head.URI != "" {
					cat.Templates = append(cat.Templates, &Resource{Server: server, URI: head.URI, Def: compact(raw)})
				}
			}
		}
	}
	return cat, nil
}

// Thin is the tool's definition in the thin form (docs/sessions.md), built on first use.
func (t *Tool) Thin() json.RawMessage {
	t.thinOnce.Do(func() { t.thin = thinTool(t.Def) })
	return t.thin
}

func exposeTool(server string, raw json.RawMessage, n config.Naming) (*Tool, error) {
	var head struct {
		Name        string `json:"name"`
		Annotations *struct {
			ReadOnlyHint    *bool `json:"readOnlyHint"`
			DestructiveHint *bool `json:"destructiveHint"`
		} `json:"annotations"`
	}
	if err := json.Unmarshal(raw, &head); err != nil || head.Name == "" {
		return nil, fmt.Errorf("a tool without a readable name was skipped")
	}
	t := &Tool{Server: server, Name: head.Name, Exposed: ExposedName(server, head.Name, n), Plain: PlainName(server, head.Name, n), Destructive: true}
	if a := head.Annotations; a != nil {
		if a.ReadOnlyHint != nil {
			t.ReadOnly = *a.ReadOnlyHint
		}
		if a.DestructiveHint != nil {
			t.Destructive = *a.DestructiveHint
		}
	}
	t.Def = rename(raw, t.Exposed)
	return t, nil
}

// rename returns def, compacted, with its "name" member set to name and its top-level
// members in key order, so that the same upstream definition always gives the same bytes
// (whatever order the upstream wrote them in). Member values are copied, not decoded.
func rename(def json.RawMessage, name string) json.RawMessage {
	c := compact(def)
	type member struct {
		k string
		v []byte
	}
	var ms []member
	size := 0
	if err := wire.Members(c, func(k string, v []byte) error {
		if k != "name" {
			ms = append(ms, member{k, v})
			size += len(k) + len(v) + 4
		}
		return nil
	}); err != nil {
		return c
	}
	ms = append(ms, member{"name", wire.Quote(name)})
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].k < ms[j].k })
	out := make([]byte, 0, size+len(name)+16)
	out = append(out, '{')
	for i, m := range ms {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, wire.Quote(m.k)...)
		out = append(out, ':')
		out = append(out, m.v...)
	}
	return append(out, '}')
}

func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.Grow(len(raw))
	if json.Compact(&b, raw) != nil {
		return raw
	}
	out := b.Bytes()
	return out[:len(out):len(out)]
}

// equal reports whether two catalogues expose the same things.
func (c *Catalog) equal(o *Catalog) bool {
	if c == nil || o == nil {
		return c == o
	}
	if len(c.Tools) != len(o.Tools) || len(c.Prompts) != len(o.Prompts) || len(c.Resources) != len(o.Resources) || len(c.Templates) != len(o.Templates) {
		return false
	}
	for i := range c.Tools {
		if !bytes.Equal(c.Tools[i].Def, o.Tools[i].Def) {
			return false
		}
	}
	for i := range c.Prompts {
		if !bytes.Equal(c.Prompts[i].Def, o.Prompts[i].Def) {
			return false
		}
	}
	for i := range c.Resources {
		if !bytes.Equal(c.Resources[i].Def, o.Resources[i].Def) {
			return false
		}
	}
	for i := range c.Templates {
		if !bytes.Equal(c.Templates[i].Def, o.Templates[i].Def) {
			return false
		}
	}
	return true
}

// OtherNames are the tool's names besides Exposed that tool globs match: its Plain name,
// when the naming rules cut it.
func (t *Tool) OtherNames() []string {
	if t.Plain == "" || t.Plain == t.Exposed {
		return nil
	}
	return []string{t.Plain}
}
