// Package mrtr runs the multi round-trip requests of stateless callers: a call whose
// upstream asks for input is parked while the client answers in a retry of the request.
package inputround

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/clientstream"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/reply"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/reqparams"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/stateless"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// Host is the gateway as the input rounds see it; S is its session type.
type Host[S comparable] interface {
	// SessionID names s: sealed request states are bound to it.
	SessionID(s S) string
	// Dispatch serves m for s, writing its related messages and its answer to out.
	Dispatch(ctx context.Context, s S, m *wire.Msg, out Out)
	// Respond hands a client's answer to a server-to-client request of s to whoever asked.
	Respond(s S, m *wire.Msg)
	// Reply turns an answer made for the session path into the stateless revision's (with
	// its HTTP status); Result rewrites a result for it.
	Reply(method string, id json.RawMessage, msg []byte) ([]byte, int)
	Result(method string, res json.RawMessage) json.RawMessage
}

// Out is where a detached call's messages go: its related messages, then its answer.
type Out interface {
	Related(msg []byte) error
	Reply(msg []byte) error
}

// Engine runs the input rounds of one gateway: the calls parked while their clients
// answer, and the sealer of upstreams' own request states.
type Engine[S comparable] struct {
	host   Host[S]
	ctx    context.Context // the gateway's: a detached call ends with it
	sealer *stateless.Sealer
	mu     sync.Mutex
	parked map[string]*call[S]
}

// New returns the engine of a gateway whose life is ctx.
func New[S comparable](ctx context.Context, host Host[S]) *Engine[S] {
	return &Engine[S]{host: host, ctx: ctx, sealer: stateless.NewSealer(), parked: map[string]*call[S]{}}
}

// Multi Round-Trip Requests for stateless clients. Upstreams speak a session revision, so
// an upstream that needs sampling, elicitation or roots during a call sends a request of
// its own and waits for the answer. A stateless client cannot receive requests: the
// gateway ends the client's HTTP request with an input_required result that carries the
// upstream's request(s) as inputRequests and a requestState naming the call, and keeps
// the upstream call running ("parked"). The client retries the original request with
// inputResponses and that requestState; the gateway answers the upstream with them and
// goes on waiting for the call's next step (its result, or another input request).
//
// The call itself runs detached from any one HTTP request, with the session dispatch; a
// client that closes its response stream while the call runs cancels it (the revision's
// cancellation), and a parked call nobody resumes is cancelled after parkTTL.

// parkTTL bounds how long a parked call waits for the client's retry.
const parkTTL = 10 * time.Minute

// inputGather is how long the gateway waits, after an upstream's input request, for more
// of them before it answers the client: requests sent together travel in one round.
const inputGather = 20 * time.Millisecond

// call is one client request running detached: its related messages and response
// come on ev, in order.
type call[S comparable] struct {
	ctx    context.Context
	s      S
	method string
	ev     chan event
	cancel context.CancelFunc

	mu    sync.Mutex
	asked map[string]json.RawMessage // input requests the client has not answered: key → {method, params}
	timer *time.Timer
}

type event struct {
	msg   []byte
	final bool
}

// callOut is the outbox the detached dispatch writes to (Out).
type callOut[S comparable] struct{ c *call[S] }

// Related and Reply wait for room while the call lives: a call whose client stopped
// reading is cancelled (closed stream, parkTTL), which ends the wait.
func (o callOut[S]) Related(msg []byte) error {
	select {
	case o.c.ev <- event{msg: msg}:
		return nil
	case <-o.c.ctx.Done():
		return clientstream.ErrNoStream
	}
}

func (o callOut[S]) Reply(msg []byte) error {
	select {
	case o.c.ev <- event{msg: msg, final: true}:
		return nil
	case <-o.c.ctx.Done():
		return clientstream.ErrNoStream
	}
}

// Serve runs a stateless request of s: a new one is dispatched detached; a retry
// (requestState) resumes its parked call with the client's input responses.
func (f *Engine[S]) Serve(w http.ResponseWriter, r *http.Request, s S, req *stateless.Request) {
	m := req.M
	var c *call[S]
	if state, wrapped, valid := f.sealer.Open(f.host.SessionID(s), req.State); wrapped {
		// A retry of an upstream's own input_required result: the upstream gets its
		// state and the client's responses back, as a new request.
		if !valid {
			reply.JSON(w, http.StatusOK, wire.Error(m.ID, wire.CodeInvalidParams,
				"Invalid params: requestState was altered or is not this caller's", nil))
			return
		}
		var p wire.Object
		_ = wire.MembersRaw(reqparams.NonNull(m.Params), func(k, v []byte) error {
			if string(k) == "requestState" {
				p.Str("requestState", state)
				return nil
			}
			p.Raw(string(k), v)
			return nil
		})
		m.Params = p.Bytes()
		req.State = ""
	}
	if strings.HasPrefix(req.State, stateless.ParkedPrefix) {
		c = f.unpark(req.State, s)
		if c == nil {
			reply.JSON(w, http.StatusOK, wire.Error(m.ID, wire.CodeInvalidParams,
				"Invalid params: requestState is unknown, expired or not this caller's", nil))
			return
		}
		c.mu.Lock()
		answered := map[string]json.RawMessage{}
		for key, resp := range req.Inputs {
			if _, ok := c.asked[key]; !ok {
				continue // not asked (or answered already): ignored
			}
			delete(c.asked, key)
			answered[key] = resp
		}
		missing := len(c.asked) > 0
		c.mu.Unlock()
		for key, resp := range answered {
			f.host.Respond(s, &wire.Msg{ID: wire.Quote(key), Result: resp})
		}
		if missing {
			// Asked again for what is still missing, under a new state.
			f.inputRequired(stateless.NewOut(w, reply.WantsSSE(r.Header.Get("Accept"))), m.ID, c)
			return
		}
	} else {
		ctx, cancel := context.WithCancel(f.ctx)
		c = &call[S]{ctx: ctx, s: s, method: m.Method, ev: make(chan event, 64), cancel: cancel, asked: map[string]json.RawMessage{}}
		// inputResponses and a requestState that is no gateway state go to the upstream
		// as they came: they answer the upstream's own input requests.
		orig := *m
		go func() {
			defer cancel()
			f.host.Dispatch(ctx, s, &orig, callOut[S]{c})
		}()
	}
	out := stateless.NewOut(w, reply.WantsSSE(r.Header.Get("Accept")))
	for {
		select {
		case ev := <-c.ev:
			if ev.final {
				msg, status := f.host.Reply(c.method, m.ID, ev.msg)
				msg = f.sealer.Seal(f.host.SessionID(s), msg)
				out.Final(msg, status)
				return
			}
			var rel wire.Msg
			if wire.ParseInto(ev.msg, &rel) != nil {
				continue
			}
			if rel.IsRequest() {
				if !f.askClient(w, out, m.ID, c, req, &rel) {
					return
				}
				f.inputRequired(out, m.ID, c)
				return
			}
			if rel.Method == "notifications/message" && !stateless.WantsLog(req.Level, rel.Params) {
				continue // the revision: no log messages for a request that set no logLevel
			}
			_ = out.Notify(ev.msg)
		case <-r.Context().Done():
			// Closing the response stream cancels the request.
			c.cancel()
			f.dropAsked(c)
			return
		}
	}
}

// askClient records an upstream's input request (and those that follow within
// inputGather) for the client. A request for a capability the client did not declare
// ends the call with MissingRequiredClientCapability; false means that answer was written.
func (f *Engine[S]) askClient(w http.ResponseWriter, out *stateless.Out, id json.RawMessage, c *call[S], req *stateless.Request, first *wire.Msg) bool {
	next := first
	deadline := time.NewTimer(inputGather)
	defer deadline.Stop()
	for {
		need := map[string]string{"sampling/createMessage": "sampling", "elicitation/create": "elicitation", "roots/list": "roots"}[next.Method]
		var key string
		_ = json.Unmarshal(next.ID, &key)
		if need == "" || !req.HasCap(need) {
			c.cancel()
			f.dropAsked(c)
			f.answerUpstream(c.s, key, wire.CodeMethodNotFound, "the client did not declare the capability for "+next.Method)
			msg := wire.Error(id, stateless.CodeMissingClientCapabilities, "Missing required client capability: "+need,
				map[string]any{"requiredCapabilities": map[string]any{need: map[string]any{}}})
			if out.Streaming() {
				out.Final(msg, http.StatusOK)
			} else {
				reply.JSON(w, http.StatusBadRequest, msg)
			}
			return false
		}
		ir, _ := json.Marshal(map[string]json.RawMessage{"method": wire.Quote(next.Method), "params": reqparams.NonNull(next.Params)})
		c.mu.Lock()
		c.asked[key] = ir
		c.mu.Unlock()
		// Another request within the gathering window joins this round.
		for next = nil; next == nil; {
			select {
			case ev := <-c.ev:
				var rel wire.Msg
				if wire.ParseInto(ev.msg, &rel) == nil && rel.IsRequest() && !ev.final {
					next = &rel
					continue
				}
				// Anything else goes back to the front of the call's queue for the retry.
				c.requeue(ev)
				return true
			case <-deadline.C:
				return true
			}
		}
	}
}

// requeue puts back an event read while gathering input requests: the next retry sees it
// first. Events keep their order, since the gathering stops at the first one.
func (c *call[S]) requeue(ev event) {
	rest := []event{ev}
	for {
		select {
		case e := <-c.ev:
			rest = append(rest, e)
			continue
		default:
		}
		break
	}
	go func() {
		for _, e := range rest {
			select {
			case c.ev <- e:
			case <-c.ctx.Done():
				return
			}
		}
	}()
}

// inputRequired answers the client with the call's outstanding input requests and parks
// the call under a new requestState.
func (f *Engine[S]) inputRequired(out *stateless.Out, id json.RawMessage, c *call[S]) {
	state := stateless.NewParkedState()
	c.mu.Lock()
	reqs := make(map[string]json.RawMessage, len(c.asked))
	for k, v := range c.asked {
		reqs[k] = v
	}
	c.mu.Unlock()
	f.park(state, c)
	res, _ := json.Marshal(map[string]any{"resultType": "input_required", "inputRequests": reqs, "requestState": state})
	out.Final(wire.Result(id, f.host.Result(c.method, res)), http.StatusOK)
}

// park keeps c under state until the client retries, or parkTTL passes.
func (f *Engine[S]) park(state string, c *call[S]) {
	f.mu.Lock()
	f.parked[state] = c
	f.mu.Unlock()
	c.mu.Lock()
	c.timer = time.AfterFunc(parkTTL, func() {
		if f.unpark(state, c.s) != nil {
			c.cancel()
			f.dropAsked(c)
		}
	})
	c.mu.Unlock()
}

// unpark takes the call parked under state, if it is s's.
func (f *Engine[S]) unpark(state string, s S) *call[S] {
	f.mu.Lock()
	c := f.parked[state]
	if c == nil || c.s != s {
		f.mu.Unlock()
		return nil
	}
	delete(f.parked, state)
	f.mu.Unlock()
	c.mu.Lock()
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	c.mu.Unlock()
	return c
}

// dropAsked tells the upstreams of a call's unanswered input requests that no answer
// will come.
func (f *Engine[S]) dropAsked(c *call[S]) {
	c.mu.Lock()
	keys := make([]string, 0, len(c.asked))
	for k := range c.asked {
		keys = append(keys, k)
	}
	clear(c.asked)
	c.mu.Unlock()
	for _, k := range keys {
		f.answerUpstream(c.s, k, wire.CodeInternalError, "the client cancelled the request")
	}
}

// answerUpstream answers a pending server-to-client request with an error.
func (f *Engine[S]) answerUpstream(s S, key string, code int, msg string) {
	e, _ := json.Marshal(wire.ErrorObject{Code: code, Message: msg})
	f.host.Respond(s, &wire.Msg{ID: wire.Quote(key), Error: e})
}
