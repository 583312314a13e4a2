package runnerlink

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// Process is one server a runner started: Write gives it one message (a line on its
// stdin), Stop ends it.
type Process interface {
	Write(msg []byte) error
	Stop()
}

// Outputs are where a started process's output goes: each message it writes, each stderr
// line, and its end (called once, after its last message).
type Outputs struct {
	Message func([]byte)
	Stderr  func(string)
	Exited  func(error)
}

// Starter starts the server of spec on the runner's host.
type Starter func(spec Spec, out Outputs) (Process, error)

// inputQueue bounds the messages waiting for one process's stdin: a process that stops
// reading is ended rather than let the link's reader (and every other stream) wait.
const inputQueue = 256

// MaxStreams bounds the servers one runner runs at once for the gateway.
const MaxStreams = 1024

// hosted is one process the runner runs for a stream.
type hosted struct {
	mu      sync.Mutex
	p       Process // nil until started, under mu
	stopped bool    // under mu
	in      chan []byte
	gone    chan struct{}
}

func (h *hosted) stop() {
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		return
	}
	h.stopped = true
	close(h.gone)
	p := h.p
	h.mu.Unlock()
	if p != nil {
		p.Stop()
	}
}

// started records p as h's process; a stream stopped while p started stops p now.
func (h *hosted) started(p Process) {
	h.mu.Lock()
	h.p = p
	stopped := h.stopped
	h.mu.Unlock()
	if stopped {
		p.Stop()
	}
}

// runnerSide is the runner's end of a link.
type runnerSide struct {
	w     writer
	start Starter
	mu    sync.Mutex
	procs map[uint32]*hosted
}

// Serve runs the runner's end of a link on rwc until it ends: it starts what the gateway
// opens with start, relays each stream's messages both ways, and stops every process it
// started when the link ends. maxMessage bounds one frame (0: DefaultMaxMessage).
func Serve(rwc io.ReadWriteCloser, start Starter, maxMessage int) error {
	if maxMessage <= 0 {
		maxMessage = DefaultMaxMessage
	}
	r := &runnerSide{w: writer{w: rwc}, start: start, procs: map[uint32]*hosted{}}
	defer r.stopAll()
	defer rwc.Close()
	fr := frameReader{r: rwc, max: maxMessage}
	for {
		if d, ok := rwc.(deadliner); ok {
			_ = d.SetReadDeadline(time.Now().Add(3 * PingInterval))
		}
		f, err := fr.next()
		if err != nil {
			return fmt.Errorf("gateway connection lost: %w", err)
		}
		if err := r.handle(f); err != nil {
			return err
		}
	}
}

func (r *runnerSide) handle(f frame) error {
	switch f.typ {
	case framePing:
		return r.w.write(framePong, 0, nil)
	case frameOpen:
		r.open(f.stream, f.payload)
	case frameData:
		r.mu.Lock()
		h := r.procs[f.stream]
		r.mu.Unlock()
		if h == nil {
			return nil
		}
		msg := append([]byte(nil), f.payload...)
		select {
		case h.in <- msg:
		default:
			r.closeStream(f.stream, h, "the server is not reading its input (runner queue full); stopped")
		}
	case frameClose:
		r.mu.Lock()
		h := r.procs[f.stream]
		delete(r.procs, f.stream)
		r.mu.Unlock()
		if h != nil {
			h.stop()
		}
	}
	return nil
}

// open starts one server for stream id and answers opened, or close with why it failed.
func (r *runnerSide) open(id uint32, payload []byte) {
	var spec Spec
	if err := json.Unmarshal(payload, &spec); err != nil || spec.Command == "" {
		_ = r.w.write(frameClose, id, []byte("runner: bad open request (no command)"))
		return
	}
	r.mu.Lock()
	if _, dup := r.procs[id]; dup || len(r.procs) >= MaxStreams {
		r.mu.Unlock()
		_ = r.w.write(frameClose, id, []byte(fmt.Sprintf("runner: stream %d refused (duplicate, or %d servers already run)", id, MaxStreams)))
		return
	}
	h := &hosted{in: make(chan []byte, inputQueue), gone: make(chan struct{})}
	r.procs[id] = h
	r.mu.Unlock()
	out := Outputs{
		Message: func(m []byte) { _ = r.w.write(frameData, id, m) },
		Stderr:  func(s string) { _ = r.w.write(frameStderr, id, []byte(s)) },
		Exited: func(err error) {
			reason := "the server exited"
			if err != nil {
				reason = "the server exited: " + err.Error()
			}
			r.closeStream(id, h, reason)
		},
	}
	p, err := r.start(spec, out)
	if err != nil {
		r.mu.Lock()
		delete(r.procs, id)
		r.mu.Unlock()
		_ = r.w.write(frameClose, id, []byte("runner could not start "+spec.Name+": "+err.Error()))
		return
	}
	h.started(p)
	_ = r.w.write(frameOpened, id, nil)
	go feed(h, p)
}

// feed writes the stream's queued messages to its process's stdin.
func feed(h *hosted, p Process) {
	for {
		select {
		case <-h.gone:
			return
		case m := <-h.in:
			if err := p.Write(m); err != nil {
				return // the process is ending: Exited says why
			}
		}
	}
}

// closeStream ends stream id's process (if it is still h) and tells the gateway why.
func (r *runnerSide) closeStream(id uint32, h *hosted, reason string) {
	r.mu.Lock()
	cur := r.procs[id]
	if cur == h {
		delete(r.procs, id)
	}
	r.mu.Unlock()
	h.stop()
	if cur == h {
		_ = r.w.write(frameClose, id, []byte(reason))
	}
}

func (r *runnerSide) stopAll() {
	r.mu.Lock()
	procs := r.procs
	r.procs = map[uint32]*hosted{}
	r.mu.Unlock()
	for _, h := range procs {
		h.stop()
	}
}

// ErrRefused is a gateway's refusal of the runner's credential or executor: the runner
// stops instead of retrying.
var ErrRefused = errors.New("the gateway refused the runner")
