// Package intake holds what the HTTP fronts share: the one admission question they ask
// the gateway (Admitter: origin, caller, session) with their own checks read in at their
// places (Reading), the bounded read of a request body, and the one parse of a client
// message.
package intake

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/reply"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// presizeBody is the largest declared body length that ReadBody allocates up front.
const presizeBody = 64 << 10

// ReadBody reads a request body of at most limit bytes; false means an error answer was
// written (413, 408 or 400). Its time is bounded by the guard (GuardBody) around every
// route, whose deadline error is answered 408 here.
func ReadBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, bool) {
	if r.ContentLength > limit {
		reply.Error(w, http.StatusRequestEntityTooLarge, wire.CodeInvalidRequest, "Request body is larger than the limit")
		return nil, false
	}
	var body []byte
	var err error
	if n := r.ContentLength; n >= 0 && n <= presizeBody {
		// net/http's body reader stops at Content-Length: one exact buffer, no growth.
		body = make([]byte, n)
		_, err = io.ReadFull(r.Body, body)
	} else if n > presizeBody {
		// A large declared length is not taken on trust: the buffer grows with the bytes
		// that really arrive, so a client that declares 4 MiB and sends nothing holds
		// nothing.
		var b bytes.Buffer
		b.Grow(presizeBody)
		_, err = b.ReadFrom(io.LimitReader(r.Body, n))
		if err == nil && int64(b.Len()) != n {
			err = io.ErrUnexpectedEOF
		}
		body = b.Bytes()
	} else {
		body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	}
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			reply.Error(w, http.StatusRequestEntityTooLarge, wire.CodeInvalidRequest, "Request body is larger than the limit")
			return nil, false
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			reply.Error(w, http.StatusRequestTimeout, wire.CodeInvalidRequest, "Request body not received within http.body_timeout, or slower than http.body_min_rate")
			return nil, false
		}
		reply.Error(w, http.StatusBadRequest, wire.CodeParseError, "Could not read the request body")
		return nil, false
	}
	return body, true
}

// ParseClient reads one client message into m; when it is not a valid JSON-RPC 2.0
// message it returns the error to answer with, the same on every front.
func ParseClient(b []byte, m *wire.Msg) []byte {
	if err := wire.ParseInto(b, m); err != nil {
		return wire.ParseFailure(err, m)
	}
	if !m.Valid() {
		return wire.Error(m.ID, wire.CodeInvalidRequest, "Invalid Request: not a JSON-RPC 2.0 message", nil)
	}
	return nil
}
