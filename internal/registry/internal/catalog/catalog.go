// Package catalog is what the gateway's upstreams and plugins offer, as data: tools,
// prompts and resources as exposed (names, thin and shaped forms, schemas), a server's
// catalogue, and the views a session sees over them, with their pre-serialized list pages
// and tool search. It holds no connection, lock of another part or live plugin: its values
// are built from data and derived from it (a few caches inside them, built on first use,
// are derived data: see Tool and View).
package catalog

import (
	"bytes"
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
	// Def is the definition clients see (the upstream's, with the exposed name and its UI
	// resource links named as the gateway names them: uilinks.go), as bytes.
	Def json.RawMessage
	// Own is the upstream's own definition when Def differs from it in more than the name
	// (its UI links were renamed); nil otherwise. Integrity fingerprints it (OwnDef).
	Own json.RawMessage
	// UI says the tool links a ui:// resource (MCP Apps) in its _meta.
	UI bool
	// The thin form and the compiled schema are derived from Def, each built on its first
	// use (Thin, ValidateArgs), never when the catalogue is read.
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

// Resource is a resource or resource template. Only ui:// resources are renamed
// (uilinks.go): Exposed is then the URI clients list and read, and Def carries it.
type Resource struct {
	Server  string
	URI     string // the upstream's uri, or uriTemplate for templates
	Exposed string // the URI clients see when the gateway renamed it, else ""
	Def     json.RawMessage
	Hash    string // a template's fingerprint
	// Skill is the exposed URI of the skill whose file this resource is (its URI renamed
	// with the skill's): listed only while the view serves that skill.
	Skill string
}

// Catalog is what one upstream offers, as of its last listing.
type Catalog struct {
	Tools     []*Tool
	Prompts   []*Prompt
	Resources []*Resource
	Templates []*Resource
	Skills    []*Skill // io.modelcontextprotocol/skills (skills.go)
	Caps      upstream.Capabilities
	// Instructions from the upstream's initialize result (served through
	// Integrity.Instructions).
	Instructions string
	InstrHash    string // their fingerprint (set by integrity)
	// Problems found while building the catalogue (names that collide inside one server).
	Problems []string
	// Seq identifies this catalogue in view keys (NextSeq).
	Seq uint64
}

// catalogSeq numbers catalogues (NextSeq).
var catalogSeq atomic.Uint64

// NextSeq is a number no catalogue had before: a new catalogue's Seq.
func NextSeq() uint64 { return catalogSeq.Add(1) }

// Thin is the tool's definition in the thin form (docs/sessions.md), built on first use.
func (t *Tool) Thin() json.RawMessage {
	t.thinOnce.Do(func() { t.thin = thinTool(t.Def) })
	return t.thin
}

// ExposeTool is the upstream tool raw of server as the gateway exposes it: named by the
// naming rules, its UI resource links named as the gateway names the resources.
func ExposeTool(server string, raw json.RawMessage, n config.Naming) (*Tool, error) {
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
	if linked, ok := exposeUILinks(raw, server, n); ok {
		t.UI = true
		if n.Prefix != "never" { // with prefix never, URIs keep their own names
			t.Own = Compact(raw)
			raw = linked
		}
	}
	t.Def = Rename(raw, t.Exposed)
	return t, nil
}

// OwnDef is the upstream's own definition of the tool, compacted, its members in key
// order: what integrity fingerprints, whatever the gateway renamed in Def.
func (t *Tool) OwnDef() json.RawMessage {
	if t.Own != nil {
		return Rename(t.Own, t.Name)
	}
	return Rename(t.Def, t.Name)
}

// rename returns def, compacted, with its "name" member set to name and its top-level
// members in key order, so that the same upstream definition always gives the same bytes
// (whatever order the upstream wrote them in). Member values are copied, not decoded.
func Rename(def json.RawMessage, name string) json.RawMessage {
	c := Compact(def)
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

func Compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.Grow(len(raw))
	if json.Compact(&b, raw) != nil {
		return raw
	}
	out := b.Bytes()
	return out[:len(out):len(out)]
}

// Equal reports whether two catalogues expose the same things.
func (c *Catalog) Equal(o *Catalog) bool {
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
	return skillsEqual(c.Skills, o.Skills)
}

// OtherNames are the tool's names besides Exposed that tool globs match: its Plain name,
// when the naming rules cut it.
func (t *Tool) OtherNames() []string {
	if t.Plain == "" || t.Plain == t.Exposed {
		return nil
	}
	return []string{t.Plain}
}
