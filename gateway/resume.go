package gateway

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpgw/mcpgw/internal/wire"
)

// Resumable POST event streams (docs/protocol.md, "Resuming a stream").
//
// A POST answered as an event stream on a 2025-11-25 session gets a stream id, "s<n>"
// (n unique in the process), and its events the ids "s<n>-<k>" (k = 0 for the priming
// event, then 1, 2, …). Every event written on such a stream is also kept in the stream's
// resumeBuf. A client whose connection dropped sends GET with Last-Event-ID "s<n>-<k>" on
// the same session: the events after k are written again, and while the call runs its
// later events follow live on that GET. The call itself goes on when the POST's connection
// drops once the stream has an id (a dropped connection is not a cancellation); a call
// whose client never saw an id is abandoned as before.
//
// Memory: one buffer holds at most http.resume_buffer_bytes (oldest events dropped past
// it), a session keeps at most resumeMaxStreams buffers (the oldest discarded), all
// buffers together at most http.resume_max_bytes (new events not kept past it), and a
// buffer is discarded http.resume_for after its stream ended, or with its session.
// Buffers live in this process only: a restarted gateway or another replica answers a
// Last-Event-ID it does not hold as unknown.

// resumeMaxStreams is how many replay buffers one session keeps.
const resumeMaxStreams = 32

type resumeEvent struct {
	seq  int
	data []byte // the whole SSE event as written
}

// resumeBuf holds the events of one POST event stream for replay.
type resumeBuf struct {
	g  *Gateway
	s  *Session
	id string // "s<n>"

	mu        sync.Mutex
	events    []resumeEvent
	bytes     int
	lastSeq   int  // the last event's seq (kept or not)
	gapTo     int  // events up to this seq were dropped (-1: none)
	lostFinal bool // the response itself could not be kept
	counted   bool // the size drop was counted in metrics
	done      bool // the stream has ended (response written, or none will come)
	gone      bool // discarded: keeps nothing more
	reader    int  // generation of the GET that has the stream now (0: the POST's own)
	wake      chan struct{}
	timer     *time.Timer
}

// newResume makes and registers the replay buffer of stream id on s.
func (s *Session) newResume(id string) *resumeBuf {
	b := &resumeBuf{g: s.g, s: s, id: id, gapTo: -1}
	var evict *resumeBuf
	s.mu.Lock()
	if s.closed {
		b.gone = true
		s.mu.Unlock()
		return b
	}
	if s.resumes == nil {
		s.resumes = map[string]*resumeBuf{}
	}
	if len(s.resumeOrder) >= resumeMaxStreams {
		evict = s.resumes[s.resumeOrder[0]]
		delete(s.resumes, s.resumeOrder[0])
		s.resumeOrder = s.resumeOrder[1:]
	}
	s.resumes[id] = b
	s.resumeOrder = append(s.resumeOrder, id)
	s.mu.Unlock()
	if evict != nil {
		evict.discard("streams")
	}
	return b
}

// resume finds a replay buffer of the session.
func (s *Session) resume(id string) *resumeBuf {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resumes[id]
}

// dropResumes discards every replay buffer of a session that ended.
func (s *Session) dropResumes() {
	s.mu.Lock()
	bufs := s.resumes
	s.resumes, s.resumeOrder = nil, nil
	s.mu.Unlock()
	for _, b := range bufs {
		b.discard("")
	}
}

// add keeps one written event (ev is copied). final marks the call's response.
func (b *resumeBuf) add(seq int, ev []byte, final bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lastSeq = seq
	if b.gone {
		return
	}
	limit := b.g.cfg.HTTP.ResumeBufferBytes
	if len(ev) > limit || b.g.resumeBytes.Add(int64(len(ev))) > b.g.cfg.HTTP.ResumeMaxBytes {
		if len(ev) <= limit {
			b.g.resumeBytes.Add(-int64(len(ev)))
			b.g.metrics.ResumeDropped("memory")
		} else if !b.counted {
			b.counted = true
			b.g.metrics.ResumeDropped("size")
		}
		// Nothing before it can be replayed in order either.
		b.release()
		b.gapTo = seq
		b.lostFinal = b.lostFinal || final
		b.signal()
		return
	}
	b.events = append(b.events, resumeEvent{seq: seq, data: append([]byte(nil), ev...)})
	b.bytes += len(ev)
	for b.bytes > limit {
		old := b.events[0]
		b.events[0] = resumeEvent{}
		b.events = b.events[1:]
		b.bytes -= len(old.data)
		b.g.resumeBytes.Add(-int64(len(old.data)))
		b.gapTo = old.seq
		if !b.counted {
			b.counted = true
			b.g.metrics.ResumeDropped("size")
		}
	}
	b.signal()
}

// release lets go of every kept event. Callers hold b.mu.
func (b *resumeBuf) release() {
	if n := len(b.events); n > 0 {
		b.gapTo = max(b.gapTo, b.events[n-1].seq)
	}
	b.g.resumeBytes.Add(-int64(b.bytes))
	b.events, b.bytes = nil, 0
}

// signal wakes a resumed GET waiting for events. Callers hold b.mu.
func (b *resumeBuf) signal() {
	if b.wake != nil {
		close(b.wake)
		b.wake = nil
	}
}

// finish marks the stream ended: its events stay replayable for http.resume_for.
func (b *resumeBuf) finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return
	}
	b.done = true
	b.signal()
	if !b.gone {
		b.timer = time.AfterFunc(b.g.cfg.HTTP.ResumeFor, b.expire)
	}
}

func (b *resumeBuf) expire() {
	b.s.mu.Lock()
	if b.s.resumes[b.id] == b {
		delete(b.s.resumes, b.id)
		if i := slicesIndex(b.s.resumeOrder, b.id); i >= 0 {
			b.s.resumeOrder = append(b.s.resumeOrder[:i], b.s.resumeOrder[i+1:]...)
		}
	}
	b.s.mu.Unlock()
	b.discard("age")
}

func slicesIndex(ss []string, v string) int {
	for i, s := range ss {
		if s == v {
			return i
		}
	}
	return -1
}

// discard drops the buffer's events; reason ("" for none) is counted in metrics.
func (b *resumeBuf) discard(reason string) {
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
		b.g.metrics.ResumeDropped(reason)
	}
}

// takenOver reports whether a resumed GET has the stream now: the POST's connection is no
// longer written to (a message goes on one stream only).
func (b *resumeBuf) takenOver() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.reader != 0
}

// parseEventID splits "s<n>-<k>" into the stream id "s<n>" and k.
func parseEventID(id string) (stream string, seq int, ok bool) {
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

// serveResume answers a GET with Last-Event-ID naming a POST event stream of s: the
// events after it, then, while the call runs, its later events as they come.
func (sf *streamableFront) serveResume(w http.ResponseWriter, r *http.Request, s *Session, last string) {
	g := sf.g
	stream, seq, ok := parseEventID(last)
	var b *resumeBuf
	if ok {
		b = s.resume(stream)
	}
	if b == nil {
		writeHTTPError(w, http.StatusBadRequest, wire.CodeInvalidRequest,
			"Bad Request: Last-Event-ID "+strconv.Quote(last)+" names no event stream this session can resume (never issued to it, or its events expired after http.resume_for); nothing to replay")
		return
	}
	b.mu.Lock()
	switch {
	case b.gone || seq > b.lastSeq:
		b.mu.Unlock()
		writeHTTPError(w, http.StatusBadRequest, wire.CodeInvalidRequest,
			"Bad Request: Last-Event-ID "+strconv.Quote(last)+" names no event stream this session can resume (never issued to it, or its events expired after http.resume_for); nothing to replay")
		return
	case b.lostFinal && b.gapTo > seq:
		b.mu.Unlock()
		writeHTTPError(w, http.StatusBadRequest, wire.CodeInvalidRequest,
			"Bad Request: the events after Last-Event-ID "+strconv.Quote(last)+" were not all kept (over http.resume_buffer_bytes or http.resume_max_bytes), the response among them; the call's result cannot be replayed")
		return
	}
	b.reader++
	gen := b.reader
	b.signal() // an earlier resume of this stream ends
	gap := b.gapTo > seq
	b.mu.Unlock()
	s.touch()

	h := w.Header()
	h["Content-Type"] = ctSSE
	h["Cache-Control"] = hdrNoCache
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	rc := http.NewResponseController(w)
	var buf []byte
	if gap {
		// Said in band, as a log message the client can show: events were lost here.
		buf = wire.AppendEvent(buf, "", "message", wire.Notification("notifications/message",
			[]byte(`{"level":"warning","logger":"mcpgw","data":"some events of this stream after `+last+` were dropped (http.resume_buffer_bytes); replaying those kept"}`)))
	}
	cursor := seq
	for {
		b.mu.Lock()
		if b.reader != gen {
			b.mu.Unlock()
			return // a newer resume has the stream
		}
		n := 0
		for _, ev := range b.events {
			if ev.seq > cursor {
				buf = append(buf, ev.data...)
				cursor = ev.seq
				n++
			}
		}
		if b.lastSeq > cursor {
			cursor = b.lastSeq // dropped while we waited: not replayable
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
			_ = rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
			if _, err := w.Write(buf); err != nil {
				return
			}
			if fl != nil {
				fl.Flush()
			}
			g.metrics.ResumeReplayed(n)
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
