package gateway

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/mcpgw/mcpgw/internal/upstream"
)

// SEP-2243 toward upstreams: an upstream of the stateless revision over HTTP requires,
// for every tools/call argument its tool's input schema marks with x-mcp-header, the
// header Mcp-Param-{Name} with the argument's value (-32020 without it). The gateway
// builds them from the arguments, whoever the caller is: a session client sends no such
// headers, and a stateless caller's went to the gateway, not to the upstream.

// mcpHeaderMark is what a tool definition contains when some argument is mirrored in a
// header: definitions without it cost one search per call and nothing else.
const mcpHeaderMark = "x-mcp-header"

// paramHeaders are the Mcp-Param-{Name} headers of a call of a tool with definition def
// (the upstream's tool object) and arguments args; nil when the tool mirrors none.
func paramHeaders(def, args json.RawMessage) []upstream.Header {
	if !bytes.Contains(def, []byte(mcpHeaderMark)) {
		return nil
	}
	var tool struct {
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	_ = json.Unmarshal(def, &tool)
	var argv any
	_ = json.Unmarshal(args, &argv)
	var out []upstream.Header
	var walk func(node json.RawMessage, val any)
	walk = func(node json.RawMessage, val any) {
		var sch struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if json.Unmarshal(node, &sch) != nil {
			return
		}
		obj, _ := val.(map[string]any)
		names := make([]string, 0, len(sch.Properties))
		for k := range sch.Properties {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			prop := sch.Properties[k]
			v, present := obj[k]
			var ann struct {
				Header string `json:"x-mcp-header"`
			}
			_ = json.Unmarshal(prop, &ann)
			if ann.Header != "" && present && v != nil {
				if hv, ok := paramHeaderValue(v); ok {
					out = append(out, upstream.Header{Name: "Mcp-Param-" + ann.Header, Value: hv})
				}
			}
			walk(prop, v)
		}
	}
	walk(tool.InputSchema, argv)
	return out
}

// paramHeaderValue is an argument's header value: strings, numbers and booleans as they
// read, a string that is no plain printable ASCII (or has surrounding whitespace, which a
// header loses) in the =?base64?…?= sentinel.
func paramHeaderValue(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		plain := x == "" || (x[0] != ' ' && x[0] != '\t' && x[len(x)-1] != ' ' && x[len(x)-1] != '\t')
		for i := 0; plain && i < len(x); i++ {
			if c := x[i]; c < 0x20 || c > 0x7e {
				plain = false
			}
		}
		if plain {
			return x, true
		}
		return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(x)) + "?=", true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case bool:
		return strconv.FormatBool(x), true
	}
	return "", false
}
