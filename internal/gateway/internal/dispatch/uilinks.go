package dispatch

import (
	"encoding/json"
	"strings"

	"github.com/mcpgw/mcpgw/internal/wire"
)

// What travels back from an upstream about a resource the gateway renamed (a ui://
// resource: registry.ExposedURI) names it the way the client does: the contents of a
// resources/read, a notifications/resources/updated. Every other byte is the upstream's.

// renameContents returns a resources/read result with each content's uri that is own
// set to exposed; the result unchanged when it has none or is not what it should be.
func renameContents(res []byte, own, exposed string) []byte {
	out, err := editMembers(res, func(k string, v []byte) []byte {
		if k != "contents" {
			return v
		}
		var items [][]byte
		if wire.Elements(v, func(el []byte) error {
			e, err := editMembers(el, func(k string, v []byte) []byte {
				if s, ok := wire.String(v); ok && k == "uri" && s == own {
					return wire.Quote(exposed)
				}
				return v
			})
			if err != nil {
				e = el
			}
			items = append(items, e)
			return nil
		}) != nil {
			return v
		}
		b := []byte{'['}
		for i, e := range items {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, e...)
		}
		return append(b, ']')
	})
	if err != nil {
		return res
	}
	return out
}

// renameUpdated is a notifications/resources/updated whose params name uri instead of the
// upstream's own URI, its other params kept.
func renameUpdated(m *wire.Msg, uri string) []byte {
	params, err := editMembers(m.Params, func(k string, v []byte) []byte {
		if k == "uri" {
			return wire.Quote(uri)
		}
		return v
	})
	if err != nil {
		params, _ = json.Marshal(map[string]string{"uri": uri})
	}
	return wire.Notification(m.Method, params)
}

// editMembers returns the JSON object obj with each member's value replaced by what fn
// gives for it, members in their order.
func editMembers(obj []byte, fn func(k string, v []byte) []byte) ([]byte, error) {
	out := make([]byte, 0, len(obj)+32)
	out = append(out, '{')
	err := wire.Members(obj, func(k string, v []byte) error {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = wire.AppendQuote(out, k)
		out = append(out, ':')
		out = append(out, fn(k, v)...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return append(out, '}'), nil
}

// unknownTool is the message of a call to a name the view has no tool by. also are the
// tools of several UI servers that all have a tool of that own name (View.AppTool): an
// app's call that cannot be told apart.
func unknownTool(name string, also []string) string {
	if len(also) == 0 {
		return "Unknown tool: " + name
	}
	return "Unknown tool: " + name + " (it is the own name of " + strings.Join(also, ", ") +
		", tools of several servers: call one of these)"
}
