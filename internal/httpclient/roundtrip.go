package httpclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"time"
)

// Tracker is told which connections requests hold, and for which owner (a call), so that
// its owner can end them: closing a connection ends the request on it.
type Tracker interface {
	// Track(c, owner, true) reports false when the tracker takes no more requests (the
	// request then fails with ErrUntracked); Track(c, nil, false) reports false when c was
	// taken away meanwhile (c is being closed and must not be pooled).
	Track(c *Conn, owner any, add bool) bool
	// Abandoned reports whether the owner has given its request up (a write that failed
	// then is not retried).
	Abandoned(owner any) bool
}

// ErrUntracked is the error of a request the Tracker would not take.
var ErrUntracked = errors.New("transport ended")

// Field is one header field of a request.
type Field struct {
	Name, Value string
}

// Header is a request's header fields, in the order they were added. The first dozen are
// held in the value itself, so that a Request built on the caller's stack allocates
// nothing (a slice's array would escape with the request's body and owner).
type Header struct {
	fields [12]Field
	n      int
	more   []Field
}

// Add appends a field. Its name must be a token and its value free of CR, LF and NUL,
// else the request fails (RoundTrip).
func (h *Header) Add(name, value string) {
	if h.n < len(h.fields) {
		h.fields[h.n] = Field{name, value}
		h.n++
		return
	}
	h.more = append(h.more, Field{name, value})
}

// Len is the number of fields.
func (h *Header) Len() int { return h.n + len(h.more) }

// At is the i-th field added.
func (h *Header) At(i int) Field {
	if i < h.n {
		return h.fields[i]
	}
	return h.more[i-h.n]
}

// Request is one request to an Endpoint: the method, the header fields after the
// endpoint's own, and the body (a Content-Length is always sent). Build it where it is
// sent and pass its address: it is read, never kept.
type Request struct {
	Method string
	Header Header
	Body   []byte
	// Deadline bounds the exchange until the answer's head has come (zero: none).
	Deadline time.Time
	// Owner is what the Tracker is told the connection is held for.
	Owner any
	// Keep names, in lower case, the answer's header field that Response.Kept returns
	// ("": none): the answer's head is read in place, not kept. Known is the value the
	// caller already has, returned without a copy when the answer repeats it.
	Keep, Known string
}

// Response is the head of an answer: its status, whether it is an event stream
// (Content-Type text/event-stream), and the header field the request asked to keep. Its
// body is read with ReadBody or Body, or let go with Discard.
type Response struct {
	Status      int
	EventStream bool
	Kept        string
	// Challenges are the answer's WWW-Authenticate fields (an authorization challenge;
	// read on every answer, since they are rare and small).
	Challenges []string
	length     int64 // -1: unknown
	chunked    bool
	reusable   bool

	ep       *Endpoint
	c        *Conn
	deadline bool // the connection carries ctx's deadline
	tr       Tracker
	ctx      context.Context
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// RoundTrip sends req and reads the answer's head. ctx and req.Deadline bound the
// exchange (the deadline as the connection's: no goroutine, timer or allocation of its
// own); cancelling a request is the tracker's business (it closes the connection held
// for the owner). A header field that is not a token name with a value free of CR, LF and
// NUL, or one the client sets itself, fails the request before anything is sent.
func (e *Endpoint) RoundTrip(ctx context.Context, tr Tracker, req *Request) (Response, error) {
	if err := checkFields(&req.Header); err != nil {
		return Response{}, err
	}
	bp := bufPool.Get().(*[]byte)
	w := wireRequest{head: e.appendHead((*bp)[:0], req), body: req.Body}
	if w.inline = len(req.Body) <= 64<<10; w.inline {
		w.head = append(w.head, req.Body...)
	}
	defer func() {
		if cap(w.head) <= 256<<10 {
			*bp = w.head[:0]
			bufPool.Put(bp)
		}
	}()
	x := attempt{ctx: ctx, deadline: req.Deadline, tr: tr, owner: req.Owner, keep: req.Keep, known: req.Known}
	for n := 0; ; n++ {
		var c *Conn
		if n == 0 {
			c = e.pool.get(e.key, e.checkAlways) // a retry goes out on a new connection
		}
		reused := c != nil
		if c == nil {
			var err error
			if c, err = e.dial(ctx, req.Deadline); err != nil {
				return Response{}, orCtxErr(ctx, !req.Deadline.IsZero(), err)
			}
		}
		r, retry, err := e.exchange(&x, c, &w)
		// A kept-alive connection the server closed a moment ago: the request did not get
		// through, so one more try on a new connection is safe.
		if retry && reused && n == 0 {
			continue
		}
		return r, err
	}
}

// checkFields refuses fields that could end the head early, smuggle a request or
// contradict the framing the client writes (CheckField).
func checkFields(h *Header) error {
	for i := 0; i < h.Len(); i++ {
		f := h.At(i)
		if err := CheckField(f.Name, f.Value); err != nil {
			return err
		}
	}
	return nil
}

// CheckField says what is wrong with a header field a request may not carry: a name that
// is not a token, a value with CR, LF or NUL, or a field the client writes itself (Host,
// Content-Length, Transfer-Encoding, Connection, Proxy-Authorization).
func CheckField(name, value string) error {
	if !validHeaderName(name) || !validValue(value) {
		return fmt.Errorf("header %q: not a valid HTTP header", name)
	}
	if setByClient(name) {
		return fmt.Errorf("header %q is set by the client", name)
	}
	return nil
}

// wireRequest is one request's bytes: its head, with the body after it when inline.
type wireRequest struct {
	head   []byte
	body   []byte
	inline bool
}

// attempt is what one request's attempts share.
type attempt struct {
	ctx         context.Context
	deadline    time.Time
	tr          Tracker
	owner       any
	keep, known string
}

// appendHead appends the request line and header fields of req to b: the method, the
// endpoint's fixed part, the request's fields and Content-Length.
func (e *Endpoint) appendHead(b []byte, req *Request) []byte {
	b = append(b, req.Method...)
	b = append(b, e.head...)
	for i := 0; i < req.Header.Len(); i++ {
		f := req.Header.At(i)
		b = append(b, f.Name...)
		b = append(b, ": "...)
		b = append(b, f.Value...)
		b = append(b, "\r\n"...)
	}
	b = append(b, "Content-Length: "...)
	b = strconv.AppendInt(b, int64(len(req.Body)), 10)
	return append(b, "\r\n\r\n"...)
}

// exchange writes req on c and reads the answer's head. retry reports a write that
// failed on a connection the server may have closed while it was idle, so that the
// request did not get through: not when ctx or the deadline ended it, nor for a
// connection closed under the write by its owner (that request was abandoned).
func (e *Endpoint) exchange(x *attempt, c *Conn, req *wireRequest) (r Response, retry bool, err error) {
	hasDeadline := !x.deadline.IsZero()
	if !x.tr.Track(c, x.owner, true) {
		c.nc.Close()
		return Response{}, false, ErrUntracked
	}
	if hasDeadline {
		_ = c.nc.SetDeadline(x.deadline)
	}
	if err := x.ctx.Err(); err != nil {
		e.drop(x.tr, c)
		return Response{}, false, err
	}
	_, err = c.nc.Write(req.head)
	if err == nil && !req.inline {
		_, err = c.nc.Write(req.body)
	}
	if err != nil {
		e.drop(x.tr, c)
		if cerr := ctxErr(x.ctx, hasDeadline, err); cerr != nil {
			return Response{}, false, cerr
		}
		return Response{}, !errors.Is(err, net.ErrClosed) && !x.tr.Abandoned(x.owner), err
	}
	r = Response{ep: e, c: c, deadline: hasDeadline, tr: x.tr, ctx: x.ctx, length: -1}
	if e.busy != nil {
		e.busy.AwaitAnswer(c)
	}
	err = r.readHead(x.keep, x.known)
	if e.busy != nil {
		e.busy.Answered()
	}
	if err != nil {
		r.fail()
		return Response{}, false, orCtxErr(x.ctx, hasDeadline, err)
	}
	return r, false, nil
}

// ctxErr says whether err came from ctx or the deadline: ctx's error once it has ended,
// and context.DeadlineExceeded for a connection that hit the exchange's deadline.
func ctxErr(ctx context.Context, hasDeadline bool, err error) error {
	if e := ctx.Err(); e != nil {
		return e
	}
	if hasDeadline && errors.Is(err, os.ErrDeadlineExceeded) {
		return context.DeadlineExceeded
	}
	return nil
}

// orCtxErr is ctxErr when err came from ctx or the deadline, err otherwise.
func orCtxErr(ctx context.Context, hasDeadline bool, err error) error {
	if cerr := ctxErr(ctx, hasDeadline, err); cerr != nil {
		return cerr
	}
	return err
}

func (e *Endpoint) drop(tr Tracker, c *Conn) {
	tr.Track(c, nil, false)
	c.nc.Close()
}

// fail closes the connection: the exchange is broken or was cut short.
func (r *Response) fail() {
	if r.c != nil {
		r.ep.drop(r.tr, r.c)
		r.c = nil
	}
}

// done hands the connection back to the pool, or closes it when it cannot carry another
// request.
func (r *Response) done() {
	if r.c == nil {
		return
	}
	c := r.c
	r.c = nil
	if !r.tr.Track(c, nil, false) {
		c.nc.Close() // die or interrupt took it: it is closed, or about to be
		return
	}
	if !r.reusable || c.br.Buffered() > 0 {
		c.nc.Close()
		return
	}
	if r.deadline && c.nc.SetDeadline(time.Time{}) != nil {
		c.nc.Close()
		return
	}
	r.ep.pool.put(c)
}
