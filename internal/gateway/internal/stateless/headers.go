package stateless

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/reqparams"
	"github.com/mcpgw/mcpgw/internal/upstream"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// CheckParamHeaders validates the Mcp-Param-{Name} headers of a tools/call against the
// arguments: every parameter the tool's input schema marks with x-mcp-header (reached
// through properties only, upstream.MaxParamHeaderDepth levels: the connection refused
// tools annotated deeper) and the call gives a value must come as its header, with the
// same value (Base64 sentinel decoded; numbers compared as numbers). It returns what is
// wrong, or "".
func CheckParamHeaders(r *http.Request, schema, args json.RawMessage) string {
	if !bytes.Contains(schema, []byte("x-mcp-header")) {
		return ""
	}
	var argv any
	_ = json.Unmarshal(args, &argv)
	var problem string
	var walk func(node json.RawMessage, val any, depth int)
	walk = func(node json.RawMessage, val any, depth int) {
		var sch struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if depth >= upstream.MaxParamHeaderDepth || json.Unmarshal(node, &sch) != nil {
			return
		}
		obj, _ := val.(map[string]any)
		names := make([]string, 0, len(sch.Properties))
		for k, prop := range sch.Properties {
			// A property without the word holds no annotation: it is not decoded (each
			// level decodes what is below it again).
			if bytes.Contains(prop, []byte("x-mcp-header")) {
				names = append(names, k)
			}
		}
		slices.Sort(names)
		for _, k := range names {
			prop := sch.Properties[k]
			v, present := obj[k]
			var ann struct {
				Header string `json:"x-mcp-header"`
			}
			_ = json.Unmarshal(prop, &ann)
			if ann.Header != "" && problem == "" && present && v != nil {
				problem = checkParamHeader(r, ann.Header, v)
			}
			walk(prop, v, depth+1)
		}
	}
	walk(schema, argv, 0)
	return problem
}

func checkParamHeader(r *http.Request, name string, v any) string {
	h := "Mcp-Param-" + name
	vals := r.Header.Values(h)
	if len(vals) == 0 {
		return "the " + h + " header is required for the argument it mirrors"
	}
	hv, ok := headerValue(vals[0])
	if len(vals) > 1 || !ok {
		return "the " + h + " header is malformed"
	}
	switch x := v.(type) {
	case string:
		ok = hv == x
	case float64:
		f, err := strconv.ParseFloat(hv, 64)
		ok = err == nil && f == x
	case bool:
		ok = hv == strconv.FormatBool(x)
	default:
		ok = false
	}
	if !ok {
		return h + " header value '" + hv + "' does not match the argument"
	}
	return ""
}

// headerValue decodes an Mcp-Name style header: surrounding whitespace is not part of the
// value, and =?base64?…?= carries a value that is no plain ASCII.
func headerValue(v string) (string, bool) {
	v = strings.Trim(v, " \t")
	if b, ok := strings.CutPrefix(v, "=?base64?"); ok {
		if b, ok = strings.CutSuffix(b, "?="); ok {
			d, err := base64.StdEncoding.DecodeString(b)
			if err != nil {
				return "", false
			}
			return string(d), true
		}
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c > 0x7e {
			return "", false
		}
	}
	return v, true
}

// CheckHeaders compares Mcp-Method and Mcp-Name with the body; it returns what is
// wrong, or "".
func CheckHeaders(r *http.Request, m *wire.Msg) string {
	vals := r.Header.Values("Mcp-Method")
	if len(vals) == 0 {
		if m.IsNotification() {
			return "" // header rules for notification POSTs are not defined
		}
		return "the Mcp-Method header is required"
	}
	method, ok := headerValue(vals[0])
	if len(vals) > 1 || !ok {
		return "the Mcp-Method header is malformed"
	}
	if method != m.Method {
		return "Mcp-Method header value '" + method + "' does not match body value '" + m.Method + "'"
	}
	var member string
	switch m.Method {
	case "tools/call", "prompts/get":
		member = "name"
	case "resources/read":
		member = "uri"
	case "tasks/get", "tasks/update", "tasks/cancel":
		member = "taskId"
	default:
		return ""
	}
	body, ok := nameMember(m.Params, member)
	if !ok {
		return "" // the params error is reported by the method
	}
	names := r.Header.Values("Mcp-Name")
	if len(names) == 0 {
		if body == "" {
			return ""
		}
		return "the Mcp-Name header is required for " + m.Method
	}
	name, ok := headerValue(names[0])
	if len(names) > 1 || !ok {
		return "the Mcp-Name header is malformed"
	}
	if name != body {
		return "Mcp-Name header value '" + name + "' does not match body value '" + body + "'"
	}
	return ""
}

// nameMember is the string value of the params member an Mcp-Name header mirrors (""
// when absent); ok is false for params the method itself will refuse.
func nameMember(params json.RawMessage, member string) (string, bool) {
	if member != "taskId" {
		p, err := reqparams.Read(params)
		if err != nil {
			return "", false
		}
		if member == "uri" {
			return p.URI, true
		}
		return p.Name, true
	}
	var id string
	err := wire.Members(params, func(k string, v []byte) error {
		if k == "taskId" {
			id, _ = wire.String(v)
		}
		return nil
	})
	return id, err == nil
}
