package gateway

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgw/mcpgw/internal/upstream"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// routes are the ways back from an upstream to a client: the server-to-client requests
// the gateway forwarded, by the random id it gave each (the client answers by that id
// alone), and the progress tokens it put on calls, by its own token. Each table has its
// lock; neither is held while anything is sent.
type routes struct {
	reqMu   sync.Mutex
	pending map[string]pendingReq

	// Progress tokens are progPrefix (random per process) and a counter, so no upstream
	// or session can name another's call.
	progMu     sync.Mutex
	progress   map[string]progressRoute
	progSeq    atomic.Int64
	progPrefix string
}

type pendingReq struct {
	conn       *upstream.Conn
	upstreamID json.RawMessage
	session    *Session
	at         time.Time
	// wait is set instead of conn for the gateway's own requests (a plugin's confirmation):
	// the client's answer goes there.
	wait chan clientAnswer
}

type progressRoute struct {
	session *Session
	token   json.RawMessage
	call    *upstream.Call
}

func newRoutes() routes {
	return routes{pending: map[string]pendingReq{}, progress: map[string]progressRoute{},
		progPrefix: "mcpgw-p" + randomHex(8) + "-"}
}

// newRequestID names a server-to-client request: 96 random bits after a prefix. Clients
// answer by this id alone, so it must not be one another session could guess or count
// along with (a counter once let any session answer, and so cancel, another's
// elicitation); 96 bits keep it short and out of reach of guessing over the network.
func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (it panics where it cannot)
	return "mcpgw-r" + base64.RawURLEncoding.EncodeToString(b[:])
}

// ask records a request about to go to pr.session and returns the id it goes out under.
func (r *routes) ask(pr pendingReq) string {
	id := newRequestID()
	pr.at = time.Now()
	r.reqMu.Lock()
	r.pending[id] = pr
	r.reqMu.Unlock()
	return id
}

// forget drops the request id (answered some other way, or never sent).
func (r *routes) forget(ids ...string) {
	r.reqMu.Lock()
	for _, id := range ids {
		delete(r.pending, id)
	}
	r.reqMu.Unlock()
}

// answered takes the request id that session s answered. It stays when another session
// answers (ok is then true, pr names the session asked): that answer changes nothing.
func (r *routes) answered(id string, s *Session) (pr pendingReq, ok bool) {
	r.reqMu.Lock()
	pr, ok = r.pending[id]
	if ok && pr.session == s {
		delete(r.pending, id)
	}
	r.reqMu.Unlock()
	return pr, ok
}

// withdrawn takes the request that upstream c asked under upID and has now cancelled.
func (r *routes) withdrawn(c *upstream.Conn, upID json.RawMessage) (id string, pr pendingReq) {
	r.reqMu.Lock()
	defer r.reqMu.Unlock()
	for id, pr := range r.pending {
		if pr.conn == c && string(pr.upstreamID) == string(upID) {
			delete(r.pending, id)
			return id, pr
		}
	}
	return "", pendingReq{}
}

// forgetSession drops the server-to-client requests still waiting for s's answer (its
// session ended) and tells each upstream that asked, so that neither side waits and the
// table does not grow with sessions that never answered.
func (r *routes) forgetSession(s *Session) {
	r.drop(func(pr pendingReq) bool { return pr.session == s }, "the client session ended before it answered")
}

// pendingRequestTTL is how long a server-to-client request may wait for its client. The
// longest legitimate wait is a person answering an elicitation within a call's timeout.
const pendingRequestTTL = 30 * time.Minute

// expire drops the requests older than pendingRequestTTL (their upstream or client is
// long gone, or will never answer).
func (r *routes) expire(now time.Time) {
	r.drop(func(pr pendingReq) bool { return now.Sub(pr.at) > pendingRequestTTL }, "the client did not answer in time")
}

// drop ends the requests match selects with an error saying why, to whoever waits.
func (r *routes) drop(match func(pendingReq) bool, why string) {
	var gone []pendingReq
	r.reqMu.Lock()
	for id, pr := range r.pending {
		if match(pr) {
			gone = append(gone, pr)
			delete(r.pending, id)
		}
	}
	r.reqMu.Unlock()
	if len(gone) == 0 {
		return
	}
	e, _ := json.Marshal(wire.ErrorObject{Code: wire.CodeInternalError, Message: why})
	go func() {
		for _, pr := range gone {
			if pr.wait != nil {
				pr.answer(nil, e)
				continue
			}
			_ = pr.conn.Reply(pr.upstreamID, nil, e)
		}
	}()
}

// progressToken returns a new gateway progress token.
func (r *routes) progressToken() string { return r.progPrefix + itoa(r.progSeq.Add(1)) }

// routeProgress sends the progress of token tok to route.
func (r *routes) routeProgress(tok string, route progressRoute) {
	r.progMu.Lock()
	r.progress[tok] = route
	r.progMu.Unlock()
}

// progressRoute is where progress for tok goes.
func (r *routes) progressRoute(tok string) (progressRoute, bool) {
	r.progMu.Lock()
	route, ok := r.progress[tok]
	r.progMu.Unlock()
	return route, ok
}

// dropProgress forgets a finished call's progress route.
func (r *routes) dropProgress(tok string) {
	if tok != "" {
		r.progMu.Lock()
		delete(r.progress, tok)
		r.progMu.Unlock()
	}
}
