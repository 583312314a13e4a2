package stateless

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/mcpgw/mcpgw/internal/wire"
)

// cacheable methods carry ttlMs and cacheScope in their results.
func cacheable(method string) bool {
	switch method {
	case "tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read", "server/discover",
		"skills/list", "skills/get", "resources/directory/read":
		return true
	}
	return false
}

// Result rewrites a result for the stateless revision: resultType (complete unless
// the result says otherwise), the gateway's serverInfo in _meta, and the caching hints of
// the list methods (kept when an upstream set them).
func Result(method string, result, serverInfo json.RawMessage, scope string) json.RawMessage {
	var out wire.Object
	var meta json.RawMessage
	hasType, hasTTL, hasScope := false, false, false
	err := wire.MembersRaw(result, func(k, v []byte) error {
		switch string(k) {
		case "_meta":
			meta = v
			return nil
		case "resultType":
			hasType = true
		case "ttlMs":
			hasTTL = true
		case "cacheScope":
			hasScope = true
		}
		out.Raw(string(k), v)
		return nil
	})
	if err != nil {
		return result
	}
	if !hasType {
		rt := "complete"
		if bytes.Contains(result, []byte(`"inputRequests"`)) && hasMember(result, "inputRequests") {
			rt = "input_required" // an upstream's own multi round-trip result
		}
		out.Str("resultType", rt)
	}
	if cacheable(method) {
		if !hasTTL {
			ttl := listTTL
			if method == "resources/read" || method == "resources/directory/read" {
				ttl = 0 // content may change at any time; an upstream that knows better says so
			}
			out.Raw("ttlMs", []byte(strconv.Itoa(ttl)))
		}
		if !hasScope {
			out.Str("cacheScope", scope)
		}
	}
	var mb wire.Object
	hasInfo := false
	_ = wire.MembersRaw(meta, func(k, v []byte) error {
		if string(k) == MetaServerInfo {
			hasInfo = true
		}
		mb.Raw(string(k), v)
		return nil
	})
	if !hasInfo {
		mb.Raw(MetaServerInfo, serverInfo)
	}
	out.Raw("_meta", mb.Bytes())
	return out.Bytes()
}

// Reply turns a response made for the session path into the stateless revision's:
// the request's own id, results rewritten (Result), and the error codes this
// revision changed (resource not found is -32602). It returns the message and its HTTP
// status (404 for method not found).
func Reply(method string, id json.RawMessage, msg, serverInfo json.RawMessage, scope string) ([]byte, int) {
	var resp wire.Msg
	if err := wire.ParseInto(msg, &resp); err != nil {
		return wire.Error(id, wire.CodeInternalError, "Internal error: malformed response", nil), http.StatusOK
	}
	if resp.Error != nil {
		e := wire.ParseError(resp.Error)
		switch e.Code {
		case -32002:
			return wire.Error(id, wire.CodeInvalidParams, e.Message, e.Data), http.StatusOK
		case wire.CodeMethodNotFound:
			return wire.RawError(id, resp.Error), http.StatusNotFound
		case CodeHeaderMismatch, CodeMissingClientCapabilities, wire.CodeUnsupportedProtocolVersion:
			// The revision answers these with 400, also when an upstream raised them.
			return wire.RawError(id, resp.Error), http.StatusBadRequest
		}
		return wire.RawError(id, resp.Error), http.StatusOK
	}
	return wire.Result(id, Result(method, resp.Result, serverInfo, scope)), http.StatusOK
}

// hasMember reports whether a JSON object has a top-level member name.
func hasMember(obj json.RawMessage, name string) bool {
	found := false
	_ = wire.MembersRaw(obj, func(k, _ []byte) error {
		if string(k) == name {
			found = true
		}
		return nil
	})
	return found
}
