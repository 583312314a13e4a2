// Package reply writes the answer to one POSTed request of the streamable HTTP front: one
// JSON body when the response is all there is, else an event stream, primed and resumable.
package reply

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/resume"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// Post answers one POSTed request: as a JSON body when the response is all there is,
// or, once a related message must go first, as an event stream. A primed reply (requests
// on 2025-11-25 sessions, SEP-1699) becomes an event stream whose first event carries an
// id and a retry hint if the response has not come within primeDelay; a fast call still
// leaves as one JSON body in one write.
type Post struct {
	w         http.ResponseWriter
	r         *http.Request
	mu        sync.Mutex
	sse       bool
	done      bool
	sseWanted bool // the client prefers an event stream (WantsSSE): the answer is one even when fast
	primed    bool
	stream    int64 // the stream's number; its id ("s" + number) is made when it starts
	streamID  string
	nextID    int
	buf       []byte
	timer     *primeTimer
	// set and store keep a primed stream's events (Prime).
	set   *resume.Set
	store *resume.Store
	// rb keeps the stream's events for a client that resumes it (package resume); made
	// when a primed stream starts, so a JSON answer has none.
	rb *resume.Buf
	// closed: the stream was ended before the answer (CloseEarly); what follows goes to rb
	// alone, for the client's resume.
	closed bool
}

const primeDelay = 20 * time.Millisecond

// ErrAnswered is a message for a request that has been answered already.
var ErrAnswered = errors.New("no stream open for the request: it has been answered")

func NewPost(w http.ResponseWriter, r *http.Request) *Post {
	return &Post{w: w, r: r, sseWanted: WantsSSE(r.Header.Get("Accept"))}
}

// WantsSSE reports whether a POST's answer should be an event stream even when it comes at
// once: the client accepts text/event-stream and prefers it to application/json, by a
// higher q-value or, at equal q-values, by naming it first. Clients that list JSON first
// (every SDK we know) or only JSON get a fast answer as plain JSON.
func WantsSSE(accept string) bool {
	sse := strings.Index(accept, "text/event-stream")
	if sse < 0 {
		return false
	}
	js := strings.Index(accept, "application/json")
	if js < 0 {
		return true
	}
	if strings.IndexByte(accept, ';') >= 0 { // parameters: compare q-values
		if qs, qj := acceptQ(accept[sse:]), acceptQ(accept[js:]); qs != qj {
			return qs > qj
		}
	}
	return sse < js
}

// acceptQ is the q-value of the media range that starts s (up to the next comma); 1 when it
// has none or an unreadable one.
func acceptQ(s string) float64 {
	if i := strings.IndexByte(s, ','); i >= 0 {
		s = s[:i]
	}
	for {
		i := strings.IndexByte(s, ';')
		if i < 0 {
			return 1
		}
		s = s[i+1:]
		param := s
		if j := strings.IndexByte(param, ';'); j >= 0 {
			param = param[:j]
		}
		k, v, ok := strings.Cut(strings.TrimSpace(param), "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
			if q, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && q >= 0 && q <= 1 {
				return q
			}
			return 1
		}
	}
}

// Prime arranges for a priming event (id, retry, empty data, SEP-1699) to open the event
// stream "s<stream>", whose events are kept in a buffer of set (within store) for a
// client that resumes it. Nothing is written yet: an answer that comes within primeDelay leaves as plain
// JSON (when the client accepts it), since priming belongs to an event stream and a fast
// answer needs none. A slower answer, or a related message, starts the stream with the
// priming event first.
func (p *Post) Prime(stream int64, set *resume.Set, store *resume.Store) {
	if !strings.Contains(p.r.Header.Get("Accept"), "text/event-stream") {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.set, p.store = set, store
	p.stream = stream
	p.primed = true
	pt := primeTimers.Get().(*primeTimer)
	pt.p.Store(p)
	pt.t.Reset(primeDelay)
	p.timer = pt
}

// primeTimer is a reusable primeDelay timer: a request's answer usually comes first, the
// timer is stopped and goes back to the pool, so priming costs no allocation per request.
type primeTimer struct {
	t *time.Timer
	p atomic.Pointer[Post]
}

var primeTimers = sync.Pool{New: func() any {
	pt := &primeTimer{}
	pt.t = time.AfterFunc(time.Hour, pt.fire)
	pt.t.Stop()
	return pt
}}

// fire starts the event stream of a request whose answer has not come within primeDelay.
func (pt *primeTimer) fire() {
	p := pt.p.Load()
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.done {
		p.startStream()
		if fl, ok := p.w.(http.Flusher); ok {
			fl.Flush()
		}
	}
}

// stop stops the timer; one that had not fired goes back to the pool. A timer whose
// function has started is left to the garbage collector.
func (pt *primeTimer) stop() {
	if pt.t.Stop() {
		pt.p.Store(nil)
		primeTimers.Put(pt)
	}
}

// startStream switches the answer to an event stream, opening it with the priming event
// when the request was primed. Callers hold p.mu.
func (p *Post) startStream() {
	if p.sse {
		return
	}
	p.startSSE()
	if p.primed {
		p.streamID = "s" + strconv.FormatInt(p.stream, 10)
		if p.r.Context().Err() == nil {
			p.rb = p.set.New(p.store, p.streamID)
		}
		p.buf = append(p.buf[:0], "id: "...)
		p.buf = append(p.buf, p.eventID()...)
		p.buf = append(p.buf, "\nretry: 1000\ndata: \n\n"...)
		_, _ = p.w.Write(p.buf)
	}
}

// CloseEarly ends the client's event stream before the request's answer, as the upstream
// ended the call's own (SSE polling, SEP-1699): the client has the priming event's id and
// resumes with GET and Last-Event-ID, where the answer written after this waits for it in
// the stream's replay buffer. It reports false, changing nothing, for an answer that is
// not a primed event stream the client can resume (the answer then goes on the stream).
func (p *Post) CloseEarly() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done || !p.primed || p.r.Context().Err() != nil {
		return false
	}
	p.startStream()
	if p.rb == nil {
		return false
	}
	p.closed = true
	if fl, ok := p.w.(http.Flusher); ok {
		fl.Flush()
	}
	return true
}

// Resumable reports whether the client can resume the answer's stream by its event ids:
// then the call goes on when the POST's connection drops.
func (p *Post) Resumable() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rb != nil && !p.done
}

func (p *Post) eventID() string {
	if p.streamID == "" {
		return ""
	}
	id := p.streamID + "-" + strconv.Itoa(p.nextID)
	p.nextID++
	return id
}

// Header values shared by every response (net/http does not modify them).
var (
	ctJSON     = []string{"application/json"}
	ctSSE      = []string{"text/event-stream"}
	hdrNoCache = []string{"no-cache"}
)

func (p *Post) startSSE() {
	h := p.w.Header()
	h["Content-Type"] = ctSSE
	h["Cache-Control"] = hdrNoCache
	p.w.WriteHeader(http.StatusOK)
	p.sse = true
}

func (p *Post) event(msg []byte, flush, final bool) error {
	seq := p.nextID
	p.buf = wire.AppendEvent(p.buf[:0], p.eventID(), "message", msg)
	if p.rb != nil {
		p.rb.Add(seq, p.buf, final)
		if p.closed || p.rb.TakenOver() {
			return nil // a resumed GET carries the stream now (or will)
		}
	}
	if _, err := p.w.Write(p.buf); err != nil {
		return err
	}
	if fl, ok := p.w.(http.Flusher); ok && flush {
		fl.Flush()
	}
	return nil
}

// Related writes a notification or request that belongs to the request, starting the
// event stream.
func (p *Post) Related(msg []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return ErrAnswered
	}
	p.startStream()
	return p.event(msg, true, false)
}

// answering marks the request answered and stops its priming timer; false when it was
// answered already. Callers hold p.mu.
func (p *Post) answering() bool {
	if p.done {
		return false
	}
	p.done = true
	if p.timer != nil {
		p.timer.stop()
		p.timer = nil
	}
	return true
}

// Reply writes the response (nil ends the request without one, after cancellation): as
// one JSON body unless the answer is an event stream already or the client prefers one.
func (p *Post) Reply(msg []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.answering() {
		return ErrAnswered
	}
	if msg == nil {
		p.startStream()
		return nil
	}
	if p.sse || p.sseWanted {
		p.startStream()
		// No flush: the handler's return sends it with the end of the body, in one write.
		return p.event(msg, false, true)
	}
	p.w.Header()["Content-Type"] = ctJSON
	p.w.WriteHeader(http.StatusOK)
	_, err := p.w.Write(msg)
	return err
}

// ReplyResult writes {"jsonrpc":"2.0","id":ID,"result":RESULT} without first copying a
// large result (a pre-serialized tools/list page) into a new buffer. result must hold no
// line breaks (pages are compact).
func (p *Post) ReplyResult(id, result []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.answering() {
		return ErrAnswered
	}
	if !p.sse && !p.sseWanted {
		p.w.Header()["Content-Type"] = ctJSON
		p.w.Header().Set("Content-Length", strconv.Itoa(len(id)+len(result)+len(`{"jsonrpc":"2.0","id":,"result":}`)))
		p.w.WriteHeader(http.StatusOK)
	} else {
		p.startStream()
		if p.rb != nil {
			ev := wire.AppendEvent(nil, p.streamID+"-"+strconv.Itoa(p.nextID), "message",
				slices.Concat([]byte(`{"jsonrpc":"2.0","id":`), id, []byte(`,"result":`), result, []byte("}")))
			p.rb.Add(p.nextID, ev, true)
			if p.closed || p.rb.TakenOver() {
				p.nextID++
				return nil
			}
		}
		p.buf = append(p.buf[:0], "event: message\n"...)
		if id := p.eventID(); id != "" {
			p.buf = append(p.buf, "id: "...)
			p.buf = append(p.buf, id...)
			p.buf = append(p.buf, '\n')
		}
		p.buf = append(p.buf, "data: "...)
		if _, err := p.w.Write(p.buf); err != nil {
			return err
		}
	}
	for _, part := range [][]byte{[]byte(`{"jsonrpc":"2.0","id":`), id, []byte(`,"result":`), result, []byte("}")} {
		if _, err := p.w.Write(part); err != nil {
			return err
		}
	}
	if p.sse {
		_, err := p.w.Write([]byte("\n\n"))
		return err
	}
	return nil
}

// Finish makes sure the request got an answer.
func (p *Post) Finish() {
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	if !done {
		_ = p.Reply(nil)
	}
	p.mu.Lock()
	rb := p.rb
	p.mu.Unlock()
	if rb != nil {
		rb.Finish()
	}
}
