// Package resume keeps the events of POST event streams so that a client whose connection
// dropped resumes a stream with GET and Last-Event-ID and gets what it missed, bounded.
package resume

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgw/mcpgw/internal/wire"
)

// A POST answered as an event stream on a 2025-11-25 session gets a stream id, "s<n>"
// (n unique in the process), and its events the ids "s<n>-<k>" (k = 0 for the priming
// event, then 1, 2, …). Every event written on such a stream is also kept in the stream's
// Buf. A client whose connection dropped sends GET with Last-Event-ID "s<n>-<k>" on the
// same session: the events after k are written again, and while the call runs its later
// events follow live on that GET.
//
// Memory: one Buf holds at most Limits.BufferBytes (oldest events dropped past it), a
// session's Set at most MaxStreams buffers (the oldest discarded), all buffers of a Store
// together at most Limits.MaxBytes (new events not kept past it), and a buffer is
// discarded Limits.For after its stream ended, or with its session. Buffers live in this
// process only: a restarted gateway or another replica answers a Last-Event-ID it does not
// hold as unknown.

// MaxStreams is how many replay buffers one session keeps.
const MaxStreams = 32

// Limits bound what a Store keeps (http.resume_buffer_bytes, http.resume_max_bytes,
// http.resume_for).
type Limits struct {
	BufferBytes int
	MaxBytes    int64
	For         time.Duration
}

// Store is what the streams of one gateway share: the limits, the bytes kept in all of
// them, and the count of what was dropped.
type Store struct {
	limits  Limits
	dropped func(reason string)
	bytes   atomic.Int64
}

// NewStore is a store with limits l; dropped (nil: none) counts buffers that lost events
// (reason size, memory) or were discarded whole (age, streams).
func NewStore(l Limits, dropped func(reason string)) *Store {
	if dropped == nil {
		dropped = func(string) {}
	}
	return &Store{limits: l, dropped: dropped}
}

// Bytes is what every buffer of the store holds now.
func (st *Store) Bytes() int64 { return st.bytes.Load() }

// Set is one session's replay buffers. Its zero value is ready; Close ends it.
type Set struct {
	mu     sync.Mutex
	bufs   map[string]*Buf
	order  []string // ids, oldest first
	closed bool
}

type event struct {
	seq  int
	data []byte // the whole SSE event as written
}

// Buf holds the events of one POST event stream for replay.
type Buf struct {
	st  *Store
	set *Set
	id  string // "s<n>"

	mu        sync.Mutex
	events    []event
	bytes     int
	lastSeq   int  // the last event's seq (kept or not)
	gapTo     int  // events up to this seq were dropped (-1: none)
	lostFinal bool // the response itself could not be kept
	counted   bool // the size drop was counted
	done      bool // the stream has ended (response written, or none will come)
	gone      bool // discarded: keeps nothing more
	reader    int  // generation of the GET that has the stream now (0: the POST's own)
	wake      chan struct{}
	timer     *time.Timer
}

// New makes and registers the replay buffer of stream id in the set; the set's oldest
// goes past MaxStreams. A closed set's buffer keeps nothing.
func (s *Set) New(st *Store, id string) *Buf {
	b := &Buf{st: st, set: s, id: id, gapTo: -1}
	var evict *Buf
	s.mu.Lock()
	if s.closed {
		b.gone = true
		s.mu.Unlock()
		return b
	}
	if s.bufs == nil {
		s.bufs = map[string]*Buf{}
	}
	if len(s.order) >= MaxStreams {
		evict = s.bufs[s.order[0]]
		delete(s.bufs, s.order[0])
		s.order = s.order[1:]
	}
	s.bufs[id] = b
	s.order = append(s.order, id)
	s.mu.Unlock()
	if evict != nil {
		evict.discard("streams")
	}
	return b
}

// Get finds a replay buffer of the set (nil: none).
func (s *Set) Get(id string) *Buf {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bufs[id]
}

// Len is how many buffers the set holds.
func (s *Set) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.bufs)
}

// Close discards every buffer of a session that ended; later ones keep nothing.
func (s *Set) Close() {
	s.mu.Lock()
	bufs := s.bufs
	s.bufs, s.order, s.closed = nil, nil, true
	s.mu.Unlock()
	for _, b := range bufs {
		b.discard("")
	}
}

// Add keeps one written event (ev is copied). final marks the call's response.
func (b *Buf) Add(seq int, ev []byte, final bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lastSeq = seq
	if b.gone {
		return
	}
	limit := b.st.limits.BufferBytes
	if len(ev) > limit || b.st.bytes.Add(int64(len(ev))) > b.st.limits.MaxBytes {
		if len(ev) <= limit {
			b.st.bytes.Add(-int64(len(ev)))
			b.st.dropped("memory")
		} else if !b.counted {
			b.counted = true
			b.st.dropped("size")
		}
		// Nothing before it can be replayed in order either.
		b.release()
		b.gapTo = seq
		b.lostFinal = b.lostFinal || final
		b.signal()
		return
	}
	b.events = append(b.events, event{seq: seq, data: append([]byte(nil), ev...)})
	b.bytes += len(ev)
	for b.bytes > limit {
		old := b.events[0]
		b.events[0] = event{}
		b.events = b.events[1:]
		b.bytes -= len(old.data)
		b.st.bytes.Add(-int64(len(old.data)))
		b.gapTo = old.seq
		if !b.counted {
			b.counted = true
			b.st.dropped("size")
		}
	}
	b.signal()
}

// release lets go of every kept event. Callers hold b.mu.
func (b *Buf) release() {
	if n := len(b.events); n > 0 {
		b.gapTo = max(b.gapTo, b.events[n-1].seq)
	}
	b.st.bytes.Add(-int64(b.bytes))
	b.events, b.bytes = nil, 0
}

// signal wakes a resumed GET waiting for events. Callers hold b.mu.
func (b *Buf) signal() {
	if b.wake != nil {
		close(b.wake)
		b.wake = nil
	}
}

// Finish marks the stream ended: its events stay replayable for Limits.For.
func (b *Buf) Finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return
	}
	b.done = true
	b.signal()
	if !b.gone {
		b.timer = time.AfterFunc(b.st.limits.For, b.expire)
	}
}

func (b *Buf) expire() {
	s := b.set
	s.mu.Lock()
	if s.bufs[b.id] == b {
		delete(s.bufs, b.id)
		if i := slices.Index(s.order, b.id); i >= 0 {
			s.order = slices.Delete(s.order, i, i+1)
		}
	}
	s.mu.Unlock()
	b.discard("age")
}

// discard drops the buffer's events; reason ("" for none) is counted.
func (b *Buf) discard(reason string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.gone {
		return
	}
	b.gone = true
	if b.timer != nil {
		b.timer.Stop()
	}
	b.release()
	b.signal()
	if reason != "" {
		b.st.dropped(reason)
	}
}

// TakenOver reports whether a resumed GET has the stream now: the POST's connection is no
// longer written to (a message goes on one stream only).
func (b *Buf) TakenOver() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.reader != 0
}

// ParseEventID splits "s<n>-<k>" into the stream id "s<n>" and k.
func ParseEventID(id string) (stream string, seq int, ok bool) {
	i := strings.LastIndexByte(id, '-')
	if len(id) < 4 || id[0] != 's' || i < 2 {
		return "", 0, false
	}
	if _, err := strconv.ParseUint(id[1:i], 10, 63); err != nil {
		return "", 0, false
	}
	k, err := strconv.ParseUint(id[i+1:], 10, 31)
	if err != nil {
		return "", 0, false
	}
	return id[:i], int(k), true
}

// RefusedError is a Last-Event-ID the set cannot resume from; its text is the answer's.
type RefusedError struct{ Msg string }

func (e *RefusedError) Error() string { return e.Msg }

// Reader is a resumed GET's hold on a stream (Set.Resume).
type Reader struct {
	b      *Buf
	gen    int
	cursor int
	gap    bool
	last   string
}

// Resume takes the stream that last (a Last-Event-ID) names over for a GET: an earlier
// resume of it ends. A *RefusedError says why it cannot: the id names no stream the set
// holds, or the events after it, the response among them, were not all kept.
func (s *Set) Resume(last string) (*Reader, error) {
	stream, seq, ok := ParseEventID(last)
	var b *Buf
	if ok {
		b = s.Get(stream)
	}
	unknown := &RefusedError{"Bad Request: Last-Event-ID " + strconv.Quote(last) + " names no event stream this session can resume (never issued to it, or its events expired after http.resume_for); nothing to replay"}
	if b == nil {
		return nil, unknown
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.gone || seq > b.lastSeq:
		return nil, unknown
	case b.lostFinal && b.gapTo > seq:
		return nil, &RefusedError{"Bad Request: the events after Last-Event-ID " + strconv.Quote(last) + " were not all kept (over http.resume_buffer_bytes or http.resume_max_bytes), the response among them; the call's result cannot be replayed"}
	}
	b.reader++
	b.signal() // an earlier resume of this stream ends
	return &Reader{b: b, gen: b.reader, cursor: seq, gap: b.gapTo > seq, last: last}, nil
}

// Serve writes the events after the reader's Last-Event-ID as an event stream, then,
// while the call runs, its later events as they come, until the stream ends, a newer
// resume takes it, or the client goes. Each write is bounded by writeTimeout; replayed
// (nil: none) counts the events written.
func (rd *Reader) Serve(w http.ResponseWriter, r *http.Request, writeTimeout time.Duration, replayed func(n int)) {
	b := rd.b
	h := w.Header()
	h["Content-Type"] = []string{"text/event-stream"}
	h["Cache-Control"] = []string{"no-cache"}
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	rc := http.NewResponseController(w)
	var buf []byte
	if rd.gap {
		// Said in band, as a log message the client can show: events were lost here.
		buf = wire.AppendEvent(buf, "", "message", wire.Notification("notifications/message",
			[]byte(`{"level":"warning","logger":"mcpgw","data":"some events of this stream after `+rd.last+` were dropped (http.resume_buffer_bytes); replaying those kept"}`)))
	}
	for {
		b.mu.Lock()
		if b.reader != rd.gen {
			b.mu.Unlock()
			return // a newer resume has the stream
		}
		n := 0
		for _, ev := range b.events {
			if ev.seq > rd.cursor {
				buf = append(buf, ev.data...)
				rd.cursor = ev.seq
				n++
			}
		}
		if b.lastSeq > rd.cursor {
			rd.cursor = b.lastSeq // dropped while we waited: not replayable
		}
		end := b.done || b.gone
		var wake chan struct{}
		if !end {
			if b.wake == nil {
				b.wake = make(chan struct{})
			}
			wake = b.wake
		}
		b.mu.Unlock()
		if len(buf) > 0 {
			_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
			if _, err := w.Write(buf); err != nil {
				return
			}
			if fl != nil {
				fl.Flush()
			}
			if replayed != nil {
				replayed(n)
			}
			buf = buf[:0]
		}
		if end {
			return
		}
		select {
		case <-wake:
		case <-r.Context().Done():
			return
		}
	}
}
