// Package external runs resource providers as separate executables: the host side
// (Launch starts an executable and returns a plugin.Plugin that calls it) and the plugin
// side (Serve answers the host with a provider; package plugin/serve wraps it in a main).
// They talk gRPC (the service in internal/pluginpb) over hashicorp/go-plugin: go-plugin
// starts the process, checks the handshake cookie, connects over a Unix socket in a
// private temporary directory, and carries the plugin's stdout and stderr to the host's
// logger. docs/plugins.md describes it for plugin authors.
//
// Schemas, resources and values cross as JSON, decoded on arrival by the contract's rule
// (plugin.DecodeValue: integral numbers are int64), so a provider gives the same tools and
// results in either place. Errors keep their text and their kind: plugin.ErrNotFound and
// plugin.ErrUnsupported survive the crossing.
package pluginproc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/mcpgw/mcpgw/internal/pluginpb"
	"github.com/mcpgw/mcpgw/internal/schemabound"
	"github.com/mcpgw/mcpgw/plugin"
)

// handshake is what the host and a plugin executable must agree on. go-plugin passes the
// cookie in the environment: an executable started by hand says it is a plugin and exits.
func handshake() goplugin.HandshakeConfig {
	return goplugin.HandshakeConfig{
		ProtocolVersion:  1,
		MagicCookieKey:   "MCPGW_PLUGIN",
		MagicCookieValue: "resource-provider-7f3c9a1e",
	}
}

// pluginName is the one plugin an executable serves in go-plugin's plugin set.
const pluginName = "provider"

// encodeSchema writes a schema as JSON, with its property order beside it (the catalogue
// keeps the top level's order; nested orders do not survive its own JSON copy either).
func encodeSchema(s *jsonschema.Schema) (*pluginpb.Schema, error) {
	if s == nil {
		return nil, nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	return &pluginpb.Schema{Json: b, PropertyOrder: s.PropertyOrder}, nil
}

func decodeSchema(w *pluginpb.Schema) (*jsonschema.Schema, error) {
	if w == nil {
		return nil, nil
	}
	if err := schemabound.Decodable(w.Json); err != nil {
		return nil, fmt.Errorf("the plugin sent a schema too costly to read: %v", err)
	}
	s := new(jsonschema.Schema)
	if err := json.Unmarshal(w.Json, s); err != nil {
		return nil, fmt.Errorf("the plugin sent a schema that is not JSON Schema: %v", err)
	}
	s.PropertyOrder = w.PropertyOrder
	return s, nil
}

// encodeJSON writes a value; nil is empty (the contract's "none").
func encodeJSON(v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	if m, ok := v.(map[string]any); ok && m == nil {
		return nil, nil
	}
	return json.Marshal(v)
}

func decodeObject(b []byte) (map[string]any, error) {
	m, err := plugin.DecodeObject(b)
	if err != nil {
		return nil, fmt.Errorf("decoding a JSON object from the other side of the plugin boundary: %v", err)
	}
	return m, nil
}

// toStatus turns a provider's error into a gRPC status that keeps its text and kind.
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	code := codes.Unknown
	switch {
	case errors.Is(err, plugin.ErrNotFound):
		code = codes.NotFound
	case errors.Is(err, plugin.ErrUnsupported):
		code = codes.Unimplemented
	case errors.Is(err, plugin.ErrTooLarge):
		code = codes.ResourceExhausted
	case errors.Is(err, context.Canceled):
		code = codes.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		code = codes.DeadlineExceeded
	}
	return status.Error(code, err.Error())
}

// remoteError is a provider's error as the host sees it: the provider's text, and its
// kind for errors.Is.
type remoteError struct {
	msg  string
	kind error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.kind }

// fromStatus turns a gRPC error back into the provider's error.
func fromStatus(err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	switch st.Code() {
	case codes.NotFound:
		return &remoteError{st.Message(), plugin.ErrNotFound}
	case codes.Unimplemented:
		return &remoteError{st.Message(), plugin.ErrUnsupported}
	case codes.ResourceExhausted:
		// The plugin refused to send a result that large, or the host to read it (gRPC's
		// "received message larger than max").
		return &remoteError{st.Message(), plugin.ErrTooLarge}
	case codes.Canceled:
		return &remoteError{st.Message(), context.Canceled}
	case codes.DeadlineExceeded:
		return &remoteError{st.Message(), context.DeadlineExceeded}
	case codes.Unavailable:
		return fmt.Errorf("the plugin process is not reachable: %s", st.Message())
	case codes.Unknown, codes.Internal:
		return errors.New(st.Message())
	}
	return fmt.Errorf("%s (%s)", st.Message(), st.Code())
}
