package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcpgw/mcpgw/gateway/internal/clientstream"
	"github.com/mcpgw/mcpgw/gateway/internal/reply"
	"github.com/mcpgw/mcpgw/gateway/internal/stateless"
	"github.com/mcpgw/mcpgw/internal/wire"
)

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

// mrtrCall is one client request running detached: its related messages and response
// come on ev, in order.
type mrtrCall struct {
	ctx    context.Context
	s      *Session
	method string
	ev     chan mrtrEvent
	cancel context.CancelFunc

	mu    sync.Mutex
	asked map[string]json.RawMessage // input requests the client has not answered: key → {method, params}
	timer *time.Timer
}

type mrtrEvent struct {
	msg   []byte
	final bool
}

// mrtrOut is the outbox the detached dispatch writes to.
type mrtrOut struct{ c *mrtrCall }

// related and reply wait for room while the call lives: a call whose client stopped
// reading is cancelled (closed stream, parkTTL), which ends the wait.
func (o mrtrOut) related(msg []byte) error {
	select {
	case o.c.ev <- mrtrEvent{msg: msg}:
		return nil
	case <-o.c.ctx.Done():
		return clientstream.ErrNoStream
	}
}

func (o mrtrOut) reply(msg []byte) error {
	select {
	case o.c.ev <- mrtrEvent{msg: msg, final: true}:
		return nil
	case <-o.c.ctx.Done():
		return clientstream.ErrNoStream
	}
}

// serveModernCall runs a stateless request: a new one is dispatched detached; a retry
// (requestState) resumes its parked call with the client's input responses.
func (f *statelessFront) serveModernCall(w http.ResponseWriter, r *http.Request, s *Session, req *stateless.Request) {
	g := f.g
	m := req.M
	var c *mrtrCall
	if state, wrapped, valid := f.sealer.Open(s.ID, req.State); wrapped {
		// A retry of an upstream's own input_required result: the upstream gets its
		// state and the client's responses back, as a new request.
		if !valid {
			reply.JSON(w, http.StatusOK, wire.Error(m.ID, wire.CodeInvalidParams,
				"Invalid params: requestState was altered or is not this caller's", nil))
			return
		}
		var p wire.Object
		_ = wire.MembersRaw(nonNull(m.Params), func(k, v []byte) error {
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
			g.calls.clientResponse(s, &wire.Msg{ID: wire.Quote(key), Result: resp})
		}
		if missing {
			// Asked again for what is still missing, under a new state.
			f.inputRequired(stateless.NewOut(w, reply.WantsSSE(r.Header.Get("Accept"))), m.ID, c)
			return
		}
	} else {
		ctx, cancel := context.WithCancel(g.ctx)
		c = &mrtrCall{ctx: ctx, s: s, method: m.Method, ev: make(chan mrtrEvent, 64), cancel: cancel, asked: map[string]json.RawMessage{}}
		// inputResponses and a requestState that is no gateway state go to the upstream
		// as they came: they answer the upstream's own input requests.
		orig := *m
		go func() {
			defer cancel()
			g.calls.dispatch(ctx, s, &orig, mrtrOut{c})
		}()
	}
	out := stateless.NewOut(w, reply.WantsSSE(r.Header.Get("Accept")))
	for {
		select {
		case ev := <-c.ev:
			if ev.final {
				msg, status := f.modernReply(c.method, m.ID, ev.msg)
				msg = f.sealer.Seal(s.ID, msg)
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
func (f *statelessFront) askClient(w http.ResponseWriter, out *stateless.Out, id json.RawMessage, c *mrtrCall, req *stateless.Request, first *wire.Msg) bool {
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
		ir, _ := json.Marshal(map[string]json.RawMessage{"method": wire.Quote(next.Method), "params": nonNull(next.Params)})
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
func (c *mrtrCall) requeue(ev mrtrEvent) {
	rest := []mrtrEvent{ev}
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

func nonNull(p json.RawMessage) json.RawMessage {
	if len(p) == 0 || string(p) == "null" {
		return json.RawMessage(`{}`)
	}
	return p
}

// inputRequired answers the client with the call's outstanding input requests and parks
// the call under a new requestState.
func (f *statelessFront) inputRequired(out *stateless.Out, id json.RawMessage, c *mrtrCall) {
	state := stateless.NewParkedState()
	c.mu.Lock()
	reqs := make(map[string]json.RawMessage, len(c.asked))
	for k, v := range c.asked {
		reqs[k] = v
	}
	c.mu.Unlock()
	f.park(state, c)
	res, _ := json.Marshal(map[string]any{"resultType": "input_required", "inputRequests": reqs, "requestState": state})
	out.Final(wire.Result(id, f.modernResult(c.method, res)), http.StatusOK)
}

// park keeps c under state until the client retries, or parkTTL passes.
func (f *statelessFront) park(state string, c *mrtrCall) {
	f.mu.Lock()
	if f.parked == nil {
		f.parked = map[string]*mrtrCall{}
	}
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
func (f *statelessFront) unpark(state string, s *Session) *mrtrCall {
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
func (f *statelessFront) dropAsked(c *mrtrCall) {
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
func (f *statelessFront) answerUpstream(s *Session, key string, code int, msg string) {
	g := f.g
	e, _ := json.Marshal(wire.ErrorObject{Code: code, Message: msg})
	g.calls.clientResponse(s, &wire.Msg{ID: wire.Quote(key), Error: e})
}
