package runnerlink

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// DefaultMaxMessage bounds one frame's payload when a side sets none: the gateway's
// upstream.max_message_bytes default.
const DefaultMaxMessage = 32 << 20

// PingInterval is how often the gateway pings its runners; a side that hears nothing for
// three intervals takes the link for dead.
const PingInterval = 10 * time.Second

// writeTimeout bounds writing one frame: a peer that stops reading must not hold the
// writer, and so every stream on the link, for ever.
const writeTimeout = 30 * time.Second

// deadliner is what a net.Conn adds to a ReadWriteCloser: deadlines.
type deadliner interface {
	SetReadDeadline(time.Time) error
	SetWriteDeadline(time.Time) error
}

// writer writes frames one at a time on the link's connection.
type writer struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

func (w *writer) write(typ byte, stream uint32, payload []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = appendFrame(w.buf[:0], typ, stream, payload)
	if d, ok := w.w.(deadliner); ok {
		_ = d.SetWriteDeadline(time.Now().Add(writeTimeout))
	}
	_, err := w.w.Write(w.buf)
	if cap(w.buf) > 1<<20 {
		w.buf = nil
	}
	return err
}

// ErrLinkClosed is what a stream of a link that ended reports, wrapped with why.
var ErrLinkClosed = errors.New("runner link closed")

// Link is the gateway's side of one runner's connection: it opens streams (one per server
// instance the runner hosts) and delivers what each sends.
type Link struct {
	rwc  io.ReadWriteCloser
	w    writer
	max  int
	done chan struct{}

	mu      sync.Mutex
	streams map[uint32]*Stream
	next    uint32
	err     error // why the link ended, once done is closed
}

// NewLink makes the gateway's side of a runner connection; maxMessage bounds one frame
// (0: DefaultMaxMessage). Run reads it.
func NewLink(rwc io.ReadWriteCloser, maxMessage int) *Link {
	if maxMessage <= 0 {
		maxMessage = DefaultMaxMessage
	}
	return &Link{rwc: rwc, w: writer{w: rwc}, max: maxMessage, done: make(chan struct{}), streams: map[uint32]*Stream{}}
}

// Done is closed when the link has ended.
func (l *Link) Done() <-chan struct{} { return l.done }

// Err is why the link ended (nil while it runs).
func (l *Link) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Close ends the link and every stream on it with reason.
func (l *Link) Close(reason error) {
	l.end(reason)
}

func (l *Link) end(reason error) {
	l.mu.Lock()
	if l.err != nil {
		l.mu.Unlock()
		return
	}
	if reason == nil {
		reason = errors.New("closed")
	}
	l.err = reason
	streams := l.streams
	l.streams = map[uint32]*Stream{}
	l.mu.Unlock()
	_ = l.rwc.Close()
	for _, s := range streams {
		s.finish(fmt.Errorf("%w: %v", ErrLinkClosed, reason))
	}
	close(l.done)
}

// Streams are the names of the servers the link's streams run, one per open stream.
func (l *Link) Streams() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.streams))
	for _, s := range l.streams {
		out = append(out, s.name)
	}
	return out
}

// Run reads the link until it ends, pinging the runner every PingInterval; it returns why
// it ended.
func (l *Link) Run() error {
	go l.ping()
	fr := frameReader{r: l.rwc, max: l.max}
	for {
		if d, ok := l.rwc.(deadliner); ok {
			_ = d.SetReadDeadline(time.Now().Add(3 * PingInterval))
		}
		f, err := fr.next()
		if err != nil {
			l.end(fmt.Errorf("runner connection lost: %v", err))
			return l.Err()
		}
		if f.typ == framePong {
			continue
		}
		l.mu.Lock()
		s := l.streams[f.stream]
		l.mu.Unlock()
		if s == nil {
			continue // a stream the gateway closed already
		}
		switch f.typ {
		case frameOpened:
			s.opened(nil)
		case frameData:
			s.deliver(f.payload)
		case frameStderr:
			if s.stderr != nil {
				s.stderr(string(f.payload))
			}
		case frameClose:
			l.drop(s.id)
			reason := string(f.payload)
			if reason == "" {
				reason = "the server exited"
			}
			err := errors.New(reason)
			s.opened(err)
			s.finish(err)
		}
	}
}

func (l *Link) ping() {
	t := time.NewTicker(PingInterval)
	defer t.Stop()
	for {
		select {
		case <-l.done:
			return
		case <-t.C:
			if err := l.w.write(framePing, 0, nil); err != nil {
				l.end(fmt.Errorf("runner connection lost: %v", err))
				return
			}
		}
	}
}

func (l *Link) drop(id uint32) {
	l.mu.Lock()
	delete(l.streams, id)
	l.mu.Unlock()
}

// Open asks the runner to start spec and waits (until ctx ends) for it to say so. deliver
// gets each message the server writes, on the link's reader (it must not block); stderr,
// if not nil, each line of its stderr.
func (l *Link) Open(ctx context.Context, spec Spec, deliver func([]byte), stderr func(string)) (*Stream, error) {
	payload, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	if l.err != nil {
		err := l.err
		l.mu.Unlock()
		return nil, fmt.Errorf("%w: %v", ErrLinkClosed, err)
	}
	l.next++
	s := &Stream{l: l, id: l.next, name: spec.Name, deliverFn: deliver, stderr: stderr, openCh: make(chan error, 1), done: make(chan struct{})}
	l.streams[s.id] = s
	l.mu.Unlock()
	if err := l.w.write(frameOpen, s.id, payload); err != nil {
		l.end(fmt.Errorf("runner connection lost: %v", err))
		return nil, fmt.Errorf("%w: %v", ErrLinkClosed, err)
	}
	select {
	case err := <-s.openCh:
		if err != nil {
			return nil, err
		}
		return s, nil
	case <-ctx.Done():
		_ = s.Close()
		return nil, ctx.Err()
	}
}

// Stream is one server process the runner hosts for the gateway.
type Stream struct {
	l         *Link
	id        uint32
	name      string
	deliverFn func([]byte)
	stderr    func(string)
	openOnce  sync.Once
	openCh    chan error
	endOnce   sync.Once
	done      chan struct{}
	err       error // set before done is closed
}

func (s *Stream) opened(err error) {
	s.openOnce.Do(func() { s.openCh <- err })
}

func (s *Stream) deliver(p []byte) {
	select {
	case <-s.done:
		return
	default:
	}
	s.deliverFn(p)
}

func (s *Stream) finish(err error) {
	s.endOnce.Do(func() {
		s.err = err
		s.opened(err)
		close(s.done)
	})
}

// Send writes one message to the server's stdin.
func (s *Stream) Send(ctx context.Context, msg []byte) error {
	select {
	case <-s.done:
		return s.err
	default:
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.l.w.write(frameData, s.id, msg); err != nil {
		s.l.end(fmt.Errorf("runner connection lost: %v", err))
		return fmt.Errorf("%w: %v", ErrLinkClosed, err)
	}
	return nil
}

// Close asks the runner to stop the server and ends the stream.
func (s *Stream) Close() error {
	s.l.drop(s.id)
	select {
	case <-s.done:
		return nil
	default:
	}
	_ = s.l.w.write(frameClose, s.id, nil)
	s.finish(errors.New("closed"))
	return nil
}

// Done is closed when the stream has ended.
func (s *Stream) Done() <-chan struct{} { return s.done }

// Err is why the stream ended (valid once Done is closed).
func (s *Stream) Err() error {
	select {
	case <-s.done:
		return s.err
	default:
		return nil
	}
}
