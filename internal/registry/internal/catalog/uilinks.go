package catalog

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// UI resources (the MCP Apps extension, io.modelcontextprotocol/ui): a tool links the
// ui:// resource a host renders for it in _meta.ui.resourceUri (and the legacy
// _meta["ui/resourceUri"]). Two servers of one kind link the same ui:// URI, so the gateway
// names a ui:// resource the way it names a tool: the server and the separator before the
// URI's own authority (ui://get-time/mcp-app.html of server "clock" is
// ui://clock__get-time/mcp-app.html), with naming.prefix always; with prefix never, URIs
// keep their own names and the first server in name order serves a URI two list. The one
// mapping (ExposedURI) names the resource in resources/list, routes resources/read and
// rewrites the tools' links, so a link always resolves to its own server's resource.
// Other schemes are not renamed: their URIs mean something outside the gateway (a file, a
// web page) that a model or another tool may be given.

// uiScheme is the scheme of MCP Apps resources.
const uiScheme = "ui://"

// IsUIURI reports whether uri is a ui:// URI (the scheme in any case).
func IsUIURI(uri string) bool {
	return len(uri) >= len(uiScheme) && strings.EqualFold(uri[:len(uiScheme)], uiScheme)
}

// ExposedURI is the URI clients see for a resource uri of server: a ui:// URI gets the
// server's name and the separator before its authority (naming.prefix always); any other
// URI is its own name.
func ExposedURI(server, uri string, n config.Naming) string {
	if n.Prefix == "never" || !IsUIURI(uri) {
		return uri
	}
	return uiScheme + server + n.Separator + uri[len(uiScheme):]
}

// UpstreamURI inverts ExposedURI for one of servers: the server whose name (and the
// separator) follows ui:// in uri, the longest such name when several do, and the URI the
// server knows. ok is false for a URI that names none of them.
func UpstreamURI(servers []string, uri string, n config.Naming) (server, own string, ok bool) {
	if n.Prefix == "never" || !IsUIURI(uri) {
		return "", "", false
	}
	rest := uri[len(uiScheme):]
	for _, s := range servers {
		p := s + n.Separator
		if len(p) > len(server)+len(n.Separator) && strings.HasPrefix(rest, p) {
			server, own = s, uiScheme+rest[len(p):]
		}
	}
	return server, own, server != ""
}

// uiLinkKey is the legacy flat key of a tool's UI resource link in _meta.
const uiLinkKey = "ui/resourceUri"

// exposeUILinks returns def with the ui:// links of its _meta (ui.resourceUri and the
// legacy ui/resourceUri) named as ExposedURI names them, and whether it has any.
// Every other member keeps its bytes; a _meta or ui member given twice keeps its last
// value (what a JavaScript host reads).
func exposeUILinks(def json.RawMessage, server string, n config.Naming) (json.RawMessage, bool) {
	if !bytes.Contains(def, []byte(`"_meta"`)) {
		return def, false
	}
	var metaRaw []byte
	if wire.Members(def, func(k string, v []byte) error {
		if k == "_meta" {
			metaRaw = v
		}
		return nil
	}) != nil || metaRaw == nil {
		return def, false
	}
	var meta map[string]json.RawMessage
	if json.Unmarshal(metaRaw, &meta) != nil {
		return def, false
	}
	changed := false
	if v, ok := exposeLink(meta[uiLinkKey], server, n); ok {
		meta[uiLinkKey], changed = v, true
	}
	var ui map[string]json.RawMessage
	if json.Unmarshal(meta["ui"], &ui) == nil {
		if v, ok := exposeLink(ui["resourceUri"], server, n); ok {
			ui["resourceUri"] = v
			meta["ui"] = marshalRaw(ui)
			changed = true
		}
	}
	if !changed {
		return def, false
	}
	return setMember(def, "_meta", marshalRaw(meta)), true
}

// marshalRaw is m as a JSON object, its keys sorted and its values' bytes as they are
// (no HTML escaping: a ui member may carry markup).
func marshalRaw(m map[string]json.RawMessage) json.RawMessage {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := []byte{'{'}
	for i, k := range keys {
		if i > 0 {
			out = append(out, ',')
		}
		out = wire.AppendQuote(out, k)
		out = append(out, ':')
		out = append(out, m[k]...)
	}
	return append(out, '}')
}

// exposeLink is a link's value named by ExposedURI, when it is a ui:// URI string.
func exposeLink(raw json.RawMessage, server string, n config.Naming) (json.RawMessage, bool) {
	var uri string
	if json.Unmarshal(raw, &uri) != nil || !IsUIURI(uri) {
		return nil, false
	}
	return wire.Quote(ExposedURI(server, uri, n)), true
}

// ExposeResource is one listed resource of server as clients see it: its uri member
// named by ExposedURI.
func ExposeResource(server, uri string, raw json.RawMessage, n config.Naming) *Resource {
	r := &Resource{Server: server, URI: uri, Def: Compact(raw)}
	if ex := ExposedURI(server, uri, n); ex != uri {
		r.Exposed = ex
		r.Def = setMember(r.Def, "uri", wire.Quote(ex))
	}
	return r
}

// ListedURI is the URI the resource is listed and read under: Exposed when the gateway
// renamed it, else its own.
func (r *Resource) ListedURI() string {
	if r.Exposed != "" {
		return r.Exposed
	}
	return r.URI
}

// setMember returns the JSON object obj with member key's value replaced by v (appended
// when absent), every other member in its place; obj itself when it is no object.
func setMember(obj json.RawMessage, key string, v []byte) json.RawMessage {
	out := make([]byte, 0, len(obj)+len(v))
	out = append(out, '{')
	found := false
	err := wire.Members(obj, func(k string, val []byte) error {
		if len(out) > 1 {
			out = append(out, ',')
		}
		if k == key {
			val, found = v, true
		}
		out = append(out, wire.Quote(k)...)
		out = append(out, ':')
		out = append(out, val...)
		return nil
	})
	if err != nil {
		return obj
	}
	if !found {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, wire.Quote(key)...)
		out = append(out, ':')
		out = append(out, v...)
	}
	return append(out, '}')
}

// uiMeta is the part of a tool's _meta that names its UI (the ui member and the legacy
// ui/resourceUri), or nil when it has none: what the thin form keeps of _meta.
func uiMeta(meta json.RawMessage) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	if len(meta) == 0 || json.Unmarshal(meta, &m) != nil {
		return nil
	}
	var out map[string]json.RawMessage
	for _, k := range []string{"ui", uiLinkKey} {
		if v, ok := m[k]; ok {
			if out == nil {
				out = map[string]json.RawMessage{}
			}
			out[k] = v
		}
	}
	return out
}
