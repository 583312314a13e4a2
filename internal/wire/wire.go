// Package wire reads and writes JSON-RPC 2.0 messages the way the gateway's hot path needs:
// only the envelope is decoded, params, results and errors stay raw bytes.
package wire

import (
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"
)

// JSON-RPC and MCP error codes used by the gateway.
const (
	CodeParseError      = -32700
	CodeInvalidRequest  = -32600
	CodeMethodNotFound  = -32601
	CodeInvalidParams   = -32602
	CodeInternalError   = -32603
	CodeSessionNotFound = -32001
	CodeConnection      = -32000
	// CodeUnsupportedProtocolVersion is SEP-2575's code; go-sdk v1.8 clients fall back to
	// initialize when server/discover answers with it.
	CodeUnsupportedProtocolVersion = -32022
	// CodeURLElicitationRequired (2025-11-25): the request waits for URL-mode elicitations
	// the error's data lists; the client opens them and may retry.
	CodeURLElicitationRequired = -32042
)

// Msg is one JSON-RPC message with its envelope decoded and everything else raw.
// A request has Method and ID; a notification has Method and no ID; a response has ID and
// Result or Error.
type Msg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

// ErrNotObject is returned by Parse for a body that is valid JSON but no JSON-RPC object.
var ErrNotObject = errors.New("not a JSON-RPC message object")

// EnvelopeError is returned by Parse for a JSON object whose envelope cannot be trusted: a
// member of the wrong type, a member given twice, or a method that is not valid UTF-8. The
// gateway routes on these members, so it refuses to pick one reading of them (an upstream
// or a client library might pick another). The message answers -32600 Invalid Request.
type EnvelopeError struct {
	Member  string
	Problem string
}

func (e *EnvelopeError) Error() string {
	return "invalid JSON-RPC envelope: " + e.Member + " " + e.Problem
}

// Parse decodes one message's envelope. It returns a *json.SyntaxError-like error for
// malformed JSON, ErrNotObject for JSON that is not an object and an *EnvelopeError for an
// envelope it will not route on.
func Parse(b []byte) (*Msg, error) {
	m := new(Msg)
	if err := ParseInto(b, m); err != nil {
		return nil, err
	}
	return m, nil
}

// envelope member bits, to refuse a member given twice.
const (
	seenJSONRPC = 1 << iota
	seenID
	seenMethod
	seenParams
	seenResult
	seenError
)

// ParseInto is Parse into a caller-owned Msg. The raw members of m are slices of b: b must
// not be changed while m is in use. On an *EnvelopeError, m keeps the id when it was
// readable, so that the error answer can carry it.
func ParseInto(b []byte, m *Msg) error {
	var r envelopeReader
	if err := MembersRaw(b, r.member); err != nil {
		*m = Msg{}
		return err
	}
	*m = r.m
	if len(m.ID) == 4 && string(m.ID) == "null" {
		m.ID = nil
	}
	if r.bad != nil {
		id := m.ID
		if !validID(id) {
			id = nil
		}
		*m = Msg{ID: id}
		return r.bad
	}
	return nil
}

// envelopeReader fills a Msg from an object's members, one call of member per member. It
// keeps the first problem it sees in bad and reads on, so that the id is known.
//
// It fills its own Msg, which ParseInto copies out, rather than the caller's through a
// pointer: the reader is one value to the escape analysis, so a pointer to the caller's Msg
// beside bad (which ParseInto returns) would put every caller's Msg on the heap.
type envelopeReader struct {
	m    Msg
	seen int
	bad  *EnvelopeError
}

func (r *envelopeReader) member(k, v []byte) error {
	m := &r.m
	switch string(k) {
	case "jsonrpc":
		if r.once(seenJSONRPC, "jsonrpc") {
			s, ok := stringValue(v)
			if !ok && r.bad == nil {
				r.bad = &EnvelopeError{Member: "jsonrpc", Problem: "is not a string"}
			}
			m.JSONRPC = s
		}
	case "id":
		if r.once(seenID, "id") {
			m.ID = v
		}
	case "method":
		if r.once(seenMethod, "method") {
			s, ok := stringValue(v)
			switch {
			case !ok && r.bad == nil:
				r.bad = &EnvelopeError{Member: "method", Problem: "is not a string"}
			case ok && !utf8.ValidString(s) && r.bad == nil:
				r.bad = &EnvelopeError{Member: "method", Problem: "is not valid UTF-8"}
			}
			m.Method = s
		}
	case "params":
		if r.once(seenParams, "params") {
			m.Params = v
		}
	case "result":
		if r.once(seenResult, "result") {
			m.Result = v
		}
	case "error":
		if r.once(seenError, "error") {
			m.Error = v
		}
	}
	return nil
}

// once records a member as seen; a member seen before is a problem.
func (r *envelopeReader) once(bit int, member string) bool {
	if r.seen&bit != 0 {
		if r.bad == nil {
			r.bad = &EnvelopeError{Member: member, Problem: "is given more than once"}
		}
		return false
	}
	r.seen |= bit
	return true
}

// IsRequest reports whether m is a request (method and id).
func (m *Msg) IsRequest() bool { return m.Method != "" && m.ID != nil }

// IsNotification reports whether m is a notification (method, no id).
func (m *Msg) IsNotification() bool { return m.Method != "" && m.ID == nil }

// IsResponse reports whether m is a response (no method, result or error).
func (m *Msg) IsResponse() bool { return m.Method == "" && (m.Result != nil || m.Error != nil) }

// Valid reports whether the envelope is well-formed for JSON-RPC 2.0.
func (m *Msg) Valid() bool {
	if m.JSONRPC != "2.0" {
		return false
	}
	if m.Method != "" {
		return m.ID == nil || validID(m.ID)
	}
	return m.ID != nil && (m.Result != nil) != (m.Error != nil)
}

func validID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
	switch id[0] {
	case '"':
		return true
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return true
	}
	return false
}

// Request builds a request message.
func Request(id json.RawMessage, method string, params json.RawMessage) []byte {
	b := make([]byte, 0, 48+len(method)+len(params)+len(id))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"method":`...)
	b = appendString(b, method)
	if len(params) > 0 {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	return append(b, '}')
}

// appendString appends s as a JSON string: plain method names are copied, anything else
// goes through the JSON encoder.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return append(b, Quote(s)...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// Notification builds a notification message.
func Notification(method string, params json.RawMessage) []byte {
	b := make([]byte, 0, 40+len(method)+len(params))
	b = append(b, `{"jsonrpc":"2.0","method":`...)
	b = appendString(b, method)
	if len(params) > 0 {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	return append(b, '}')
}

// Result builds a success response.
func Result(id json.RawMessage, result json.RawMessage) []byte {
	b := make([]byte, 0, 36+len(id)+len(result))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, '}')
}

// RawError builds an error response around an already-encoded error object.
func RawError(id json.RawMessage, errObj json.RawMessage) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b := make([]byte, 0, 36+len(id)+len(errObj))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"error":`...)
	b = append(b, errObj...)
	return append(b, '}')
}

// DefinedCode returns errObj as a client may be sent it. An error object without a
// usable code — 0, which go-sdk writes for an error its handler returned as a plain Go
// error, a missing code or one that is not an integer — becomes a -32603 whose message
// starts with who (e.g. `upstream "files"`), so the client has a defined code and knows
// where the error came from. Any other errObj is returned as it is, without a copy.
func DefinedCode(errObj json.RawMessage, who string) json.RawMessage {
	var e struct {
		Code    json.RawMessage `json:"code"`
		Message json.RawMessage `json:"message"`
		Data    json.RawMessage `json:"data,omitempty"`
	}
	if json.Unmarshal(errObj, &e) == nil {
		if n, err := strconv.ParseInt(string(e.Code), 10, 64); err == nil && n != 0 {
			return errObj
		}
	}
	var text string
	_ = json.Unmarshal(e.Message, &text)
	msg := who + ": " + text
	if text == "" {
		msg = who + " answered an error without a code or message"
	}
	out, _ := json.Marshal(ErrorObject{Code: CodeInternalError, Message: msg, Data: e.Data})
	return out
}

// ErrorObject is the error member of a response.
type ErrorObject struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error builds an error response. A nil id is written as null.
func Error(id json.RawMessage, code int, message string, data any) []byte {
	e := ErrorObject{Code: code, Message: message}
	if data != nil {
		e.Data, _ = json.Marshal(data)
	}
	eb, _ := json.Marshal(e)
	return RawError(id, eb)
}

// ParseError decodes an error member.
func ParseError(raw json.RawMessage) ErrorObject {
	var e ErrorObject
	_ = json.Unmarshal(raw, &e)
	return e
}

// IntID encodes n as a JSON-RPC id.
func IntID(n int64) json.RawMessage { return strconv.AppendInt(nil, n, 10) }

// Quote encodes s as a JSON string.
func Quote(s string) json.RawMessage {
	return AppendQuote(nil, s)
}

// AppendQuote appends s as a JSON string. Plain strings (printable ASCII without quotes,
// backslashes or the characters encoding/json escapes for HTML) are copied as they are;
// anything else goes through encoding/json, so the output is always the same as
// json.Marshal's.
func AppendQuote(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s)
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}
