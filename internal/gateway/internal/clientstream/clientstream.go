// Package clientstream is a client session's server-to-client event stream (a streamable
// GET stream or a legacy SSE stream): its bounded queue and the pump that writes it, and
// the Slot that holds a session's one open stream and the messages waiting for the next.
package clientstream

import (
	"errors"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgw/mcpgw/internal/wire"
)

// ErrNoStream is what a send answers when no stream is open (the message waits, bounded,
// for the next one) or the stream closed.
var ErrNoStream = errors.New("no stream open for the session")

// ErrSlow: a stream closed because its client did not keep up.
var ErrSlow = errors.New("client stream closed: the client is not reading (http.stream_queue)")

// errFull is TrySend's answer for a full queue.
var errFull = errors.New("stream full")

// WriteTimeout bounds one write to a client stream: a client that stops reading its GET
// stream cannot hold the pump (and the connection) for ever.
const WriteTimeout = 30 * time.Second

// Stream is an open event stream to a client (GET or legacy SSE).
type Stream struct {
	ch     chan []byte
	done   chan struct{}
	once   sync.Once
	nextID atomic.Int64
	prefix string
}

// New makes a stream on which up to queue messages (0: 1024) may wait for the client; its
// events carry ids prefix-1, prefix-2, … (prefix "": no ids).
func New(prefix string, queue int) *Stream {
	if queue <= 0 {
		queue = 1024
	}
	return &Stream{ch: make(chan []byte, queue), done: make(chan struct{}), prefix: prefix}
}

// Close ends the stream: its pump returns.
func (st *Stream) Close() { st.once.Do(func() { close(st.done) }) }

// Closed reports whether the stream ended.
func (st *Stream) Closed() bool {
	select {
	case <-st.done:
		return true
	default:
		return false
	}
}

// Send queues msg without waiting. Its callers include an upstream's reader, which must
// never wait on a client (every session on that upstream would wait with it): a stream
// whose queue is full is closed instead (ErrSlow), and the client reconnects it.
func (st *Stream) Send(msg []byte) error {
	select {
	case st.ch <- msg:
		return nil
	case <-st.done:
		return ErrNoStream
	default:
	}
	st.Close()
	return ErrSlow
}

// TrySend queues msg if there is room, and never closes the stream.
func (st *Stream) TrySend(msg []byte) error {
	select {
	case st.ch <- msg:
		return nil
	default:
		return errFull
	}
}

// Pump writes queued messages as events until the client goes away or the stream closes,
// with a keep-alive comment every 25 s.
func (st *Stream) Pump(w http.ResponseWriter, r *http.Request) {
	fl, _ := w.(http.Flusher)
	rc := http.NewResponseController(w)
	keep := time.NewTicker(25 * time.Second)
	defer keep.Stop()
	var buf []byte
	for {
		select {
		case msg := <-st.ch:
			buf = st.appendEvent(buf[:0], msg)
			// Drain what else is queued into the same write.
			for more := true; more; {
				select {
				case m := <-st.ch:
					buf = st.appendEvent(buf, m)
				default:
					more = false
				}
			}
			if !write(w, rc, fl, buf) {
				return
			}
			if cap(buf) > 1<<20 {
				buf = nil // one burst's buffer is not kept for the stream's life
			}
		case <-keep.C:
			if !write(w, rc, fl, []byte(": keep-alive\n\n")) {
				return
			}
		case <-st.done:
			return
		case <-r.Context().Done():
			return
		}
	}
}

// Relay hands each queued message to write, one at a time, until a write fails (false)
// or the stream closes (true): a stream carried as lines rather than events.
func (st *Stream) Relay(write func([]byte) error) bool {
	for {
		select {
		case msg := <-st.ch:
			if write(msg) != nil {
				return false
			}
		case <-st.done:
			return true
		}
	}
}

func (st *Stream) appendEvent(buf, msg []byte) []byte {
	id := ""
	if st.prefix != "" {
		id = st.prefix + "-" + strconv.FormatInt(st.nextID.Add(1), 10)
	}
	return wire.AppendEvent(buf, id, "message", msg)
}

func write(w http.ResponseWriter, rc *http.ResponseController, fl http.Flusher, b []byte) bool {
	_ = rc.SetWriteDeadline(time.Now().Add(WriteTimeout))
	if _, err := w.Write(b); err != nil {
		return false
	}
	if fl != nil {
		fl.Flush()
	}
	return true
}

// PendingMax bounds the bytes of messages waiting in a Slot for its next stream.
const PendingMax = 256 << 10

// Slot is a session's one open stream and, while none is open, the messages waiting for
// the next (PendingMax bytes at most, each kept whole). The zero value is an empty slot.
type Slot struct {
	mu       sync.Mutex
	st       *Stream
	pending  [][]byte
	pendingN int
}

// Send delivers msg on the open stream, or keeps it for the next one (ErrNoStream).
func (sl *Slot) Send(msg []byte) error {
	sl.mu.Lock()
	st := sl.st
	if st == nil {
		if sl.pendingN+len(msg) <= PendingMax {
			sl.pending = append(sl.pending, msg)
			sl.pendingN += len(msg)
		}
		sl.mu.Unlock()
		return ErrNoStream
	}
	sl.mu.Unlock()
	return st.Send(msg)
}

// Attach makes st the slot's stream and hands it what waited; it fails while another is
// open.
func (sl *Slot) Attach(st *Stream) bool {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.st != nil && !sl.st.Closed() {
		return false
	}
	sl.st = st
	for _, msg := range sl.pending {
		_ = st.TrySend(msg)
	}
	sl.pending, sl.pendingN = nil, 0
	return true
}

// Detach empties the slot if st is its stream.
func (sl *Slot) Detach(st *Stream) {
	sl.mu.Lock()
	if sl.st == st {
		sl.st = nil
	}
	sl.mu.Unlock()
}

// Open reports whether a stream is open in the slot.
func (sl *Slot) Open() bool {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	return sl.st != nil && !sl.st.Closed()
}

// Close closes the slot's stream, if any.
func (sl *Slot) Close() {
	sl.mu.Lock()
	st := sl.st
	sl.mu.Unlock()
	if st != nil {
		st.Close()
	}
}
