package catalog

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/mcpgw/mcpgw/plugin"
)

// Plugin resources: each resource type a session can read is an MCP resource, named by a
// URI of the scheme mcpgw+plugin (docs/plugins.md, "Resources and subscriptions"):
//
//	mcpgw+plugin://{plugin}/{connection}/{group}/{version}/{kind}        the type (its first page)
//	mcpgw+plugin://{plugin}/{connection}/{group}/{version}/{kind}/{id}   one resource
//
// optionally followed by ?namespace={namespace}. Every part is percent-encoded as a path
// segment. The types are in resources/list, one resource per type and connection; one
// resource per type and connection is a resource template.

// PluginURIScheme is the scheme of plugin resource URIs.
const PluginURIScheme = "mcpgw+plugin"

// PluginPageSize is how many resources reading a type's URI returns (its first page).
const PluginPageSize = 50

// PluginRef names a plugin resource or resource type.
type PluginRef struct {
	Plugin, Conn, Key string
	Namespace         string // empty: any
	ID                string // empty: the type as a whole
}

// IsPluginURI reports whether uri is of the plugin scheme (and so never an upstream's).
func IsPluginURI(uri string) bool {
	return len(uri) > len(PluginURIScheme)+1 && strings.EqualFold(uri[:len(PluginURIScheme)+1], PluginURIScheme+":")
}

// URI is the ref's URI.
func (r PluginRef) URI() string {
	g, v, k, _ := plugin.SplitKey(r.Key)
	var b strings.Builder
	b.WriteString(PluginURIScheme + "://")
	b.WriteString(url.PathEscape(r.Plugin))
	for _, s := range []string{r.Conn, g, v, k} {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	if r.ID != "" {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(r.ID))
	}
	if r.Namespace != "" {
		b.WriteString("?namespace=")
		b.WriteString(url.QueryEscape(r.Namespace))
	}
	return b.String()
}

// ParsePluginURI reads a plugin resource URI.
func ParsePluginURI(uri string) (PluginRef, error) {
	bad := func(why string) (PluginRef, error) {
		return PluginRef{}, fmt.Errorf("%q is not a plugin resource URI (%s://{plugin}/{connection}/{group}/{version}/{kind}[/{id}][?namespace=...]): %s", uri, PluginURIScheme, why)
	}
	if !IsPluginURI(uri) {
		return bad("wrong scheme")
	}
	rest := uri[len(PluginURIScheme)+1:]
	if !strings.HasPrefix(rest, "//") {
		return bad("no //")
	}
	rest = rest[2:]
	var ns string
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		q, err := url.ParseQuery(rest[i+1:])
		if err != nil {
			return bad("malformed query")
		}
		for k := range q {
			if k != "namespace" {
				return bad("unknown parameter " + k)
			}
		}
		ns, rest = q.Get("namespace"), rest[:i]
	}
	if strings.ContainsRune(rest, '#') {
		return bad("a fragment")
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 5 && len(parts) != 6 {
		return bad("wrong number of parts")
	}
	for i, p := range parts {
		s, err := url.PathUnescape(p)
		if err != nil || s == "" {
			return bad("an empty or malformed part")
		}
		parts[i] = s
	}
	if strings.Contains(parts[2]+parts[3]+parts[4], plugin.KeySeparator) {
		return bad("a key part contains " + plugin.KeySeparator)
	}
	r := PluginRef{Plugin: parts[0], Conn: parts[1], Key: plugin.Key(parts[2], parts[3], parts[4]), Namespace: ns}
	if len(parts) == 6 {
		r.ID = parts[5]
	}
	return r, nil
}

// Matches reports whether an event concerns the ref: the same type, and for a ref to one
// resource its id (an event without id concerns every resource of the type), in its
// namespace when both have one.
func (r PluginRef) Matches(e plugin.Event) bool {
	if e.Connection != r.Conn || e.Key != r.Key {
		return false
	}
	if r.Namespace != "" && e.Namespace != "" && r.Namespace != e.Namespace {
		return false
	}
	return r.ID == "" || e.ID == "" || e.ID == r.ID
}

// PluginReader is the tool of a view that lets the session read a plugin ref: a list tool
// of the type for a type's URI, a get tool for a resource's; both on the ref's connection.
// It is nil when the view does not allow the ref (the plugin is not enabled, the
// connection is out of scope, the tools were denied).
func (v *View) PluginReader(r PluginRef) *Tool {
	want := plugin.OperationList
	if r.ID != "" {
		want = plugin.OperationGet
	}
	for _, t := range v.Tools {
		if pt := t.PluginTool; pt != nil && t.Server == r.Plugin && pt.Op == want && pt.Key == r.Key && pt.Allows(r.Conn) {
			return t
		}
	}
	return nil
}

// addPluginResources lists the plugin resource types of a view's tools, as resources (a
// type's list tool: its URI) and templates (its get tool: one resource's URI).
func addPluginResources(v *View) {
	type entry struct {
		server, uri string
		def         json.RawMessage
	}
	var res, tmpl []entry
	for _, t := range v.Tools {
		pt := t.PluginTool
		if pt == nil || (pt.Op != plugin.OperationList && pt.Op != plugin.OperationGet) {
			continue
		}
		for _, conn := range pt.Connections() {
			ref := PluginRef{Plugin: t.Server, Conn: conn, Key: pt.Key}
			name := t.Server + "/" + conn + "/" + pt.Key
			if pt.Op == plugin.OperationList {
				def, _ := json.Marshal(map[string]any{"uri": ref.URI(), "name": name, "mimeType": "application/json",
					"description": fmt.Sprintf("%s resources of plugin %s on connection %s (reading gives the first %d; subscribe for changes).", pt.Key, t.Server, conn, PluginPageSize)})
				res = append(res, entry{t.Server, ref.URI(), def})
			} else {
				ref.ID = "{id}"
				u := strings.Replace(ref.URI(), url.PathEscape("{id}"), "{id}", 1) + "{?namespace}"
				def, _ := json.Marshal(map[string]any{"uriTemplate": u, "name": name + "/{id}", "mimeType": "application/json",
					"description": fmt.Sprintf("One %s resource of plugin %s on connection %s, by id.", pt.Key, t.Server, conn)})
				tmpl = append(tmpl, entry{t.Server, u, def})
			}
		}
	}
	sort.Slice(res, func(i, j int) bool { return res[i].uri < res[j].uri })
	sort.Slice(tmpl, func(i, j int) bool { return tmpl[i].uri < tmpl[j].uri })
	for _, e := range res {
		if _, dup := v.resourceBy[e.uri]; dup {
			continue
		}
		r := &Resource{Server: e.server, URI: e.uri, Def: e.def}
		v.resourceBy[e.uri] = r
		v.Resources = append(v.Resources, r)
	}
	for _, e := range tmpl {
		v.Templates = append(v.Templates, &Resource{Server: e.server, URI: e.uri, Def: e.def})
	}
}
