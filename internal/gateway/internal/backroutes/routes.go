// Package routes holds the ways back from an upstream to a client: the server-to-client
// requests the gateway forwarded, by the unguessable id it gave each, and its progress tokens.
package backroutes

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgw/mcpgw/internal/upstream"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// Table holds the ways back for sessions of type S: the server-to-client requests the
// gateway forwarded, by the random id it gave each (the client answers by that id alone),
// and the progress tokens it put on calls, by its own token. Each table has its lock;
// neither is held while anything is sent.
type Table[S comparable] struct {
	reqMu   sync.Mutex
	pending map[string]Request[S]

	// Progress tokens are progPrefix (random per process) and a counter, so no upstream
	// or session can name another's call.
	progMu     sync.Mutex
	progress   map[string]Progress[S]
	progSeq    atomic.Int64
	progPrefix string
}

// Request is a server-to-client request waiting for its client's answer: one an
// upstream asked (Conn, UpstreamID) or the gateway's own (Wait).
type Request[S comparable] struct {
	Conn       *upstream.Conn
	UpstreamID json.RawMessage
	Session    S
	at         time.Time
	// Wait is set instead of Conn for the gateway's own requests (a plugin's
	// confirmation): the client's answer goes there.
	Wait chan Answer
}

// Answer is a client's response to a request the gateway itself made.
type Answer struct {
	Result json.RawMessage
	Err    *wire.ErrorObject
}

// Progress is where the progress of one call goes: its session, under the client's own
// token, while the call is in flight.
type Progress[S comparable] struct {
	Session S
	Token   json.RawMessage
	Call    *upstream.Call
}

// New is an empty table; its progress tokens start with prefix and a random part.
func New[S comparable](prefix string) *Table[S] {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (it panics where it cannot)
	return &Table[S]{pending: map[string]Request[S]{}, progress: map[string]Progress[S]{},
		progPrefix: prefix + hex.EncodeToString(b[:]) + "-"}
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

// Ask records a request about to go to pr.Session and returns the id it goes out under.
func (r *Table[S]) Ask(pr Request[S]) string {
	id := newRequestID()
	pr.at = time.Now()
	r.reqMu.Lock()
	r.pending[id] = pr
	r.reqMu.Unlock()
	return id
}

// Forget drops the request id (answered some other way, or never sent).
func (r *Table[S]) Forget(ids ...string) {
	r.reqMu.Lock()
	for _, id := range ids {
		delete(r.pending, id)
	}
	r.reqMu.Unlock()
}

// Answered takes the request id that session s answered. It stays when another session
// answers (ok is then true, pr names the session asked): that answer changes nothing.
func (r *Table[S]) Answered(id string, s S) (pr Request[S], ok bool) {
	r.reqMu.Lock()
	pr, ok = r.pending[id]
	if ok && pr.Session == s {
		delete(r.pending, id)
	}
	r.reqMu.Unlock()
	return pr, ok
}

// Withdrawn takes the request that upstream c asked under upID and has now cancelled.
func (r *Table[S]) Withdrawn(c *upstream.Conn, upID json.RawMessage) (id string, pr Request[S]) {
	r.reqMu.Lock()
	defer r.reqMu.Unlock()
	for id, pr := range r.pending {
		if pr.Conn == c && string(pr.UpstreamID) == string(upID) {
			delete(r.pending, id)
			return id, pr
		}
	}
	return "", Request[S]{}
}

// ForgetSession drops the server-to-client requests still waiting for s's answer (its
// session ended) and tells each upstream that asked, so that neither side waits and the
// table does not grow with sessions that never answered.
func (r *Table[S]) ForgetSession(s S) {
	r.drop(func(pr Request[S]) bool { return pr.Session == s }, "the client session ended before it answered")
}

// RequestTTL is how long a server-to-client request may wait for its client. The
// longest legitimate wait is a person answering an elicitation within a call's timeout.
const RequestTTL = 30 * time.Minute

// Expire drops the requests older than RequestTTL (their upstream or client is
// long gone, or will never answer).
func (r *Table[S]) Expire(now time.Time) {
	r.drop(func(pr Request[S]) bool { return now.Sub(pr.at) > RequestTTL }, "the client did not answer in time")
}

// drop ends the requests match selects with an error saying why, to whoever waits.
func (r *Table[S]) drop(match func(Request[S]) bool, why string) {
	var gone []Request[S]
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
			if pr.Wait != nil {
				pr.Answer(nil, e)
				continue
			}
			_ = pr.Conn.Reply(pr.UpstreamID, nil, e)
		}
	}()
}

// ProgressToken returns a new gateway progress token.
func (r *Table[S]) ProgressToken() string {
	return r.progPrefix + strconv.FormatInt(r.progSeq.Add(1), 10)
}

// RouteProgress sends the progress of token tok to route.
func (r *Table[S]) RouteProgress(tok string, route Progress[S]) {
	r.progMu.Lock()
	r.progress[tok] = route
	r.progMu.Unlock()
}

// ProgressRoute is where progress for tok goes.
func (r *Table[S]) ProgressRoute(tok string) (Progress[S], bool) {
	r.progMu.Lock()
	route, ok := r.progress[tok]
	r.progMu.Unlock()
	return route, ok
}

// DropProgress forgets a finished call's progress route.
func (r *Table[S]) DropProgress(tok string) {
	if tok != "" {
		r.progMu.Lock()
		delete(r.progress, tok)
		r.progMu.Unlock()
	}
}

// Pending reports whether request id still waits for its answer.
func (r *Table[S]) Pending(id string) bool {
	r.reqMu.Lock()
	defer r.reqMu.Unlock()
	_, ok := r.pending[id]
	return ok
}

// Answer hands a client's response to the gateway's own request that waits for it.
func (pr Request[S]) Answer(result, errObj json.RawMessage) {
	a := Answer{Result: append(json.RawMessage(nil), result...)}
	if len(errObj) > 0 {
		a.Err = &wire.ErrorObject{}
		if json.Unmarshal(errObj, a.Err) != nil {
			a.Err.Message = "malformed error"
		}
	}
	select {
	case pr.Wait <- a:
	default:
	}
}
