// Package stateless holds the wire rules of the stateless protocol revision (2026-07-28):
// reading a request's _meta and headers, rewriting results, the answer writer, the session keys.
package stateless

import (
	"encoding/json"
	"net/http"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/reqparams"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// The stateless protocol revision (2026-07-28): no initialize, no session id;
// every request carries its protocol version, client capabilities and (optionally) client
// info in params._meta, mirrored in the MCP-Protocol-Version, Mcp-Method and Mcp-Name
// headers.

const Version = "2026-07-28"

// Error codes the stateless revision adds.
const (
	CodeHeaderMismatch            = -32020
	CodeMissingClientCapabilities = -32021
)

// _meta keys of the stateless revision.
const (
	MetaProtocolVersion = "io.modelcontextprotocol/protocolVersion"
	MetaClientInfo      = "io.modelcontextprotocol/clientInfo"
	MetaClientCaps      = "io.modelcontextprotocol/clientCapabilities"
	MetaServerInfo      = "io.modelcontextprotocol/serverInfo"
	MetaLogLevel        = "io.modelcontextprotocol/logLevel"
)

// listTTL is the ttlMs of list results: how long a client may reuse a list. Changes reach
// clients that hold a subscriptions/listen stream at once; the others see them within it.
const listTTL = 60_000

// Request is a validated stateless request.
type Request struct {
	M      *wire.Msg
	Level  string          // _meta logLevel: log notifications wanted at this level and above
	Caps   json.RawMessage // _meta clientCapabilities
	Info   json.RawMessage // _meta clientInfo
	Form   string          // the list form the X-Mcp-Handshake header asks for ("": none; FormAsked)
	State  string          // requestState of a retried request (MRTR)
	Inputs map[string]json.RawMessage
	HasCap func(string) bool // whether the client declared a top-level capability
}

// Read validates params._meta and takes out the stateless _meta keys: the params
// forwarded upstream are rebuilt without them (an upstream on a session revision must not
// see a revision it did not negotiate). inputResponses and requestState stay (the
// gateway's input rounds decide whose they are). On failure it returns the HTTP status
// and the error message.
func Read(m *wire.Msg, header string) (*Request, int, []byte) {
	req := &Request{M: m}
	bad := func(msg string) (*Request, int, []byte) {
		return nil, http.StatusBadRequest, wire.Error(m.ID, wire.CodeInvalidParams, "Invalid params: "+msg, nil)
	}
	if len(m.Params) == 0 || string(m.Params) == "null" {
		return bad("params._meta with " + MetaProtocolVersion + " and " + MetaClientCaps + " is required")
	}
	var out, meta wire.Object
	var rawMeta json.RawMessage
	err := wire.StrictMembers(m.Params, func(k, v []byte) error {
		switch string(k) {
		case "_meta":
			rawMeta = v
		case "requestState":
			s, err := wire.StrictString(v)
			if err != nil {
				return err
			}
			req.State = s
			out.Raw(string(k), v)
		case "inputResponses":
			if err := json.Unmarshal(v, &req.Inputs); err != nil {
				return reqparams.ErrNotObject
			}
			out.Raw(string(k), v)
		default:
			out.Raw(string(k), v)
		}
		return nil
	})
	if err != nil {
		return bad(err.Error())
	}
	version := ""
	if len(rawMeta) > 0 {
		err = wire.StrictMembers(rawMeta, func(k, v []byte) error {
			switch string(k) {
			case MetaProtocolVersion:
				s, err := wire.StrictString(v)
				if err != nil {
					return err
				}
				version = s
			case MetaClientCaps:
				if len(v) == 0 || v[0] != '{' {
					return errCapsNotObject
				}
				req.Caps = v
			case MetaClientInfo:
				req.Info = v
			case MetaLogLevel:
				s, err := wire.StrictString(v)
				if err != nil || !reqparams.ValidLevel(s) {
					return errBadLogLevel
				}
				req.Level = s
			default:
				meta.Raw(string(k), v)
			}
			return nil
		})
		if err != nil {
			return bad("_meta " + err.Error())
		}
	}
	switch {
	case len(rawMeta) == 0:
		return bad("params._meta is required on protocol version " + Version)
	case version == "":
		return bad("params._meta needs " + MetaProtocolVersion)
	case req.Caps == nil:
		return bad("params._meta needs " + MetaClientCaps)
	}
	if version != header {
		return nil, http.StatusBadRequest, wire.Error(m.ID, CodeHeaderMismatch,
			"Header mismatch: MCP-Protocol-Version header value '"+header+"' does not match _meta "+MetaProtocolVersion+" '"+version+"'", nil)
	}
	if !meta.Empty() {
		out.Raw("_meta", meta.Bytes())
	}
	p := out.Bytes()
	m.Params = p
	req.HasCap = capsHas(req.Caps)
	return req, 0, nil
}

var (
	errCapsNotObject = jsonError("clientCapabilities must be an object")
	errBadLogLevel   = jsonError("logLevel must be a log level")
)

type jsonError string

func (e jsonError) Error() string { return string(e) }

// capsHas reports which top-level client capabilities caps declares.
func capsHas(caps json.RawMessage) func(string) bool {
	var c map[string]json.RawMessage
	_ = json.Unmarshal(caps, &c)
	return func(name string) bool { v, ok := c[name]; return ok && string(v) != "null" }
}
