package intake

import (
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// A request body is a client's to send at its pace, and while it sends the connection is
// held. BodyRules bound that on every route, before any handler runs: a body must arrive
// within http.body_timeout and keep up with http.body_min_rate, else the read fails and
// the route answers 408. And an answer written before the body has arrived (a refusal
// decided on the headers) closes the connection: net/http would otherwise read what is
// left of the body, up to 256 KiB and without a deadline, before it sends the answer, so
// a client that declares a body and sends one byte would never hear its 401.

// BodyRules bound the arrival of a request body (http.body_timeout, http.body_min_rate,
// http.body_rate_grace). The zero value bounds nothing.
type BodyRules struct {
	// Timeout bounds the whole body, from the request's headers (0: no bound).
	Timeout time.Duration
	// MinRate is the slowest a body may arrive, in bytes a second on average after
	// Grace (0: no rate).
	MinRate int64
	// Grace is the time the rate allows before the first byte.
	Grace time.Duration
}

// ErrBodyTimeout is the error a guarded body's read returns when the body did not arrive
// within the rules; it is also os.ErrDeadlineExceeded.
var ErrBodyTimeout = bodyTimeoutError{}

type bodyTimeoutError struct{}

func (bodyTimeoutError) Error() string {
	return "request body not received within http.body_timeout or slower than http.body_min_rate"
}
func (bodyTimeoutError) Is(target error) bool { return target == os.ErrDeadlineExceeded }

// readDeadliner is what net/http's ResponseWriter has to bound its connection's reads.
type readDeadliner interface{ SetReadDeadline(time.Time) error }

// guardedBody counts the body's bytes against Content-Length: net/http stops a body at
// its declared length without an EOF, and a reader that takes exactly that much (ReadBody)
// never sees one.
type guardedBody struct {
	io.ReadCloser
	h     http.Header
	w     http.ResponseWriter
	conn  readDeadliner
	rules BodyRules
	start time.Time
	want  int64 // Content-Length; -1 when chunked
	got   int64
	whole bool // the body has arrived
	// closeValue backs the Connection header's value, which then costs no allocation.
	closeValue [1]string
}

// GuardBody bounds the arrival of r's body by rules and makes an answer written before it
// has arrived close the connection. Call Release when the handler has returned. A request
// without a body costs nothing.
func GuardBody(w http.ResponseWriter, r *http.Request, rules BodyRules) *BodyGuard {
	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	conn, _ := w.(readDeadliner)
	g := &guardedBody{ReadCloser: r.Body, h: w.Header(), w: w, conn: conn, rules: rules, start: time.Now(), want: r.ContentLength}
	g.closeValue[0] = "close"
	g.h["Connection"] = g.closeValue[:]
	if conn != nil && rules.Timeout > 0 {
		_ = conn.SetReadDeadline(g.start.Add(g.firstDeadline()))
	}
	r.Body = g
	return (*BodyGuard)(g)
}

// BodyGuard is the guard of one request's body (GuardBody).
type BodyGuard guardedBody

// Release ends the guard when the handler has returned: a body not read to its end is not
// waited for (net/http would read its rest before it reuses the connection, which closes
// instead).
func (bg *BodyGuard) Release() {
	if bg == nil {
		return
	}
	g := (*guardedBody)(bg)
	if g.whole {
		return
	}
	// The answer went out before the body arrived: tell net/http the body was cut short
	// (what a MaxBytesReader over its limit tells it), so it closes the connection the
	// graceful way, its write side first and the rest a moment later. A plain close with
	// the client's bytes unread resets the connection, and a client still sending its
	// body (a 10 MB POST answered 413) would get the reset instead of the answer.
	_, _ = http.MaxBytesReader(g.w, io.NopCloser(strings.NewReader("x")), 0).Read(make([]byte, 1))
	if g.conn != nil {
		_ = g.conn.SetReadDeadline(time.Now())
	}
}

// firstDeadline is the time from the headers the body's first byte may take.
func (g *guardedBody) firstDeadline() time.Duration {
	d := g.rules.Timeout
	if g.rules.MinRate > 0 && g.rules.Grace < d {
		d = g.rules.Grace
	}
	return d
}

// deadline is when the body must have arrived by the rate, having got bytes so far, never
// past Timeout.
func (g *guardedBody) deadline() time.Time {
	d := g.rules.Timeout
	if g.rules.MinRate > 0 {
		// got bytes at MinRate take got/MinRate seconds, after the grace.
		byRate := g.rules.Grace + time.Duration(float64(g.got)/float64(g.rules.MinRate)*float64(time.Second))
		d = min(d, byRate)
	}
	return g.start.Add(d)
}

func (g *guardedBody) Read(p []byte) (int, error) {
	n, err := g.ReadCloser.Read(p)
	g.got += int64(n)
	switch {
	case g.whole:
	case err == io.EOF || (g.want >= 0 && g.got >= g.want):
		g.arrived()
	case err != nil && errors.Is(err, os.ErrDeadlineExceeded):
		return n, ErrBodyTimeout
	case n > 0 && g.rules.MinRate > 0 && g.conn != nil && g.rules.Timeout > 0:
		// Each byte buys the rate's time for the next, up to Timeout.
		_ = g.conn.SetReadDeadline(g.deadline())
	}
	return n, err
}

// arrived lifts the guard: the body is in, the connection may be reused, and a long call
// or an open stream is not cut by the body's deadline.
func (g *guardedBody) arrived() {
	g.whole = true
	delete(g.h, "Connection")
	if g.conn != nil && g.rules.Timeout > 0 {
		_ = g.conn.SetReadDeadline(time.Time{})
	}
}
