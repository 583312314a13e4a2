package gateway

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/mcpgw/mcpgw/internal/registry"
)

// Server extensions (capabilities.extensions, e.g. io.modelcontextprotocol/skills) that
// upstreams declare are passed on: server/discover lists those of the caller's servers,
// and an initialize result lists those the client itself declared (a client that names
// an extension can use it; one that does not never sees a member it does not know).
// What an extension adds on the wire (resources, tools, _meta) travels through the
// gateway like anything else. When two upstreams declare the same extension with
// different settings, the first server in name order wins; but the skills extension,
// which the gateway serves itself over its servers' skills, is declared with
// directoryRead only when every server that declares it does.

// upstreamExtensions merges the extensions the given servers' upstreams declare.
func upstreamExtensions(reg *registry.Registry, servers []string) map[string]json.RawMessage {
	var out map[string]json.RawMessage
	var skills []json.RawMessage // the skills extension's settings, merged (SkillsSettings)
	names := slices.Clone(servers)
	slices.Sort(names)
	for _, name := range names {
		srv := reg.Server(name)
		if srv == nil {
			continue
		}
		cat := srv.Catalog()
		if cat == nil || len(cat.Caps.Extensions) == 0 {
			continue
		}
		if out == nil {
			out = map[string]json.RawMessage{}
		}
		for id, settings := range cat.Caps.Extensions {
			if id == registry.SkillsExtension {
				skills = append(skills, settings)
			} else if _, ok := out[id]; !ok {
				out[id] = settings
			}
		}
	}
	if len(skills) > 0 {
		out[registry.SkillsExtension] = registry.SkillsSettings(skills)
	}
	return usedExtensions(reg, names, out) // extensions_known.go
}

// clientExtensions lists the extension ids a client declared in its capabilities.
func clientExtensions(caps json.RawMessage) map[string]bool {
	var c struct {
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	if json.Unmarshal(caps, &c) != nil || len(c.Extensions) == 0 {
		return nil
	}
	out := make(map[string]bool, len(c.Extensions))
	for id := range c.Extensions {
		out[id] = true
	}
	return out
}

// capsWithExtensions returns the gateway's session capabilities with the upstream
// extensions the client declared; the plain capabilities when there are none.
func capsWithExtensions(reg *registry.Registry, clientCaps json.RawMessage, servers []string) json.RawMessage {
	want := clientExtensions(clientCaps)
	if len(want) == 0 {
		return gatewayCaps
	}
	ext := upstreamExtensions(reg, servers)
	maps.DeleteFunc(ext, func(id string, _ json.RawMessage) bool { return !want[id] })
	if len(ext) == 0 {
		return gatewayCaps
	}
	var caps map[string]json.RawMessage
	_ = json.Unmarshal(gatewayCaps, &caps)
	b, _ := json.Marshal(ext)
	caps["extensions"] = b
	out, _ := json.Marshal(caps)
	return out
}

// gatewayCaps are the capabilities the gateway declares to its clients.
var gatewayCaps = json.RawMessage(`{"completions":{},"logging":{},"prompts":{"listChanged":true},"resources":{"listChanged":true,"subscribe":true},"tools":{"listChanged":true}}`)
