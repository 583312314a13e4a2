package stateless

import (
	"encoding/json"
	"net/http"
	"sync"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/reply"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/reqparams"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// Out writes one stateless response: a JSON body when the response is all there
// is, an event stream once a notification must go first or when the client prefers one
// (sseWanted, from its Accept header).
type Out struct {
	w         http.ResponseWriter
	mu        sync.Mutex
	sse       bool
	sseWanted bool
	buf       []byte
}

// NewOut is the writer of one response to w; sseWanted says the client prefers an event
// stream (its Accept header).
func NewOut(w http.ResponseWriter, sseWanted bool) *Out {
	return &Out{w: w, sseWanted: sseWanted}
}

// Streaming reports whether the answer has become an event stream.
func (o *Out) Streaming() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.sse
}

// Header values of an event stream's answer (net/http does not modify them).
var (
	ctSSE      = []string{"text/event-stream"}
	hdrNoCache = []string{"no-cache"}
)

func (o *Out) startSSE() {
	if o.sse {
		return
	}
	h := o.w.Header()
	h["Content-Type"] = ctSSE
	h["Cache-Control"] = hdrNoCache
	h.Set("X-Accel-Buffering", "no")
	o.w.WriteHeader(http.StatusOK)
	o.sse = true
}

// Notify writes a notification as an event, starting the stream.
func (o *Out) Notify(msg []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.startSSE()
	o.buf = wire.AppendEvent(o.buf[:0], "", "message", msg)
	if _, err := o.w.Write(o.buf); err != nil {
		return err
	}
	if fl, ok := o.w.(http.Flusher); ok {
		fl.Flush()
	}
	return nil
}

// Final writes the response.
func (o *Out) Final(msg []byte, status int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.sseWanted && status == http.StatusOK {
		o.startSSE()
	}
	if o.sse {
		o.buf = wire.AppendEvent(o.buf[:0], "", "message", msg)
		_, _ = o.w.Write(o.buf)
		return
	}
	reply.JSON(o.w, status, msg)
}

// WantsLog reports whether a log notification goes to a request that asked for level.
func WantsLog(level string, p json.RawMessage) bool {
	return level != "" && reqparams.LevelAllowed(level, p)
}
