package gateway

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/inputround"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/stateless"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// Multi round-trip requests of stateless callers (internal/gateway/internal/inputround): a call whose
// upstream asks for sampling, elicitation or roots is parked while the client answers in
// a retry. roundsHost is what the engine needs of the gateway.

// serveStatelessCall runs a stateless request through the input rounds.
func (f *statelessFront) serveStatelessCall(w http.ResponseWriter, r *http.Request, s *session.Session, req *stateless.Request) {
	f.rounds.Serve(w, r, s, req)
}

type roundsHost struct{ g *Gateway }

func (h roundsHost) SessionID(s *session.Session) string { return s.ID }

func (h roundsHost) Dispatch(ctx context.Context, s *session.Session, m *wire.Msg, out inputround.Out) {
	h.g.calls.Dispatch(ctx, s, m, out)
}

func (h roundsHost) Respond(s *session.Session, m *wire.Msg) { h.g.calls.ClientResponse(s, m) }

func (h roundsHost) Reply(method string, id json.RawMessage, msg []byte) ([]byte, int) {
	return h.g.stateless.statelessReply(method, id, msg)
}

func (h roundsHost) Result(method string, res json.RawMessage) json.RawMessage {
	return h.g.stateless.statelessResult(method, res)
}
