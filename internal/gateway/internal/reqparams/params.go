// Package params reads what the gateway routes on in a client request's params: the
// members it passes on or decides by, a completion ref, and the log levels it filters by.
package reqparams

import (
	"encoding/json"
	"errors"

	"github.com/mcpgw/mcpgw/internal/wire"
)

// Routed are the members of a client request's params that the gateway routes on or
// passes on. They are read by one strict reader (wire.StrictMembers: exact-case names, no
// member twice, routed strings valid UTF-8), and what goes upstream is rebuilt from them
// (wire.Object), never the client's bytes: an upstream that parses differently from the
// gateway (case-insensitive names, the first of two members) still reads what was decided.
type Routed struct {
	Name      string // tools/call, prompts/get
	URI       string // resources/read, subscribe, unsubscribe
	Arguments json.RawMessage
	Meta      json.RawMessage
	Task      json.RawMessage
	Ref       json.RawMessage // completion/complete
	Argument  json.RawMessage
	Context   json.RawMessage
	Level     string // logging/setLevel
	Cursor    string // the list methods
	RequestID json.RawMessage
	// Inputs are a retried request's inputResponses and requestState (multi round-trip,
	// 2026-07-28), passed on to the upstream as they came.
	InputResponses, RequestState json.RawMessage
}

// ErrNotObject is the error of params that are not a JSON object.
var ErrNotObject = errors.New("params must be an object")

// Read reads params; absent or null params read as empty.
func Read(raw json.RawMessage) (Routed, error) {
	var p Routed
	if len(raw) == 0 || string(raw) == "null" {
		return p, nil
	}
	err := wire.StrictMembers(raw, func(k, v []byte) error {
		var err error
		switch string(k) {
		case "name":
			p.Name, err = wire.StrictString(v)
		case "uri":
			p.URI, err = wire.StrictString(v)
		case "level":
			p.Level, err = wire.StrictString(v)
		case "cursor":
			p.Cursor, err = wire.StrictString(v)
		case "arguments":
			p.Arguments = v
		case "_meta":
			p.Meta = v
		case "task":
			p.Task = v
		case "ref":
			p.Ref = v
		case "argument":
			p.Argument = v
		case "context":
			p.Context = v
		case "requestId":
			p.RequestID = v
		case "inputResponses":
			p.InputResponses = v
		case "requestState":
			p.RequestState = v
		}
		if err != nil {
			return errors.New(string(k) + " " + err.Error())
		}
		return nil
	})
	if errors.Is(err, wire.ErrNotObject) {
		err = ErrNotObject
	}
	return p, err
}

// Ref is a completion/complete ref, read strictly.
type Ref struct{ Type, Name, URI string }

// ReadRef reads a completion/complete ref.
func ReadRef(raw json.RawMessage) (Ref, error) {
	var r Ref
	err := wire.StrictMembers(raw, func(k, v []byte) error {
		var err error
		switch string(k) {
		case "type":
			r.Type, err = wire.StrictString(v)
		case "name":
			r.Name, err = wire.StrictString(v)
		case "uri":
			r.URI, err = wire.StrictString(v)
		}
		return err
	})
	return r, err
}

// NonNull is params as an object: absent or null params read as {}.
func NonNull(p json.RawMessage) json.RawMessage {
	if len(p) == 0 || string(p) == "null" {
		return json.RawMessage(`{}`)
	}
	return p
}
