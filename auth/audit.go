package auth

import (
	"bufio"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// AuditEvent is one line of the audit log: a tool call or a denial.
type AuditEvent struct {
	Time         time.Time `json:"time"`
	Kind         string    `json:"kind"` // call | denial
	Agent        string    `json:"agent"`
	Conversation string    `json:"conversation,omitempty"`
	Task         string    `json:"task,omitempty"`
	Session      string    `json:"session,omitempty"`
	Tool         string    `json:"tool,omitempty"`
	Upstream     string    `json:"upstream,omitempty"`
	Outcome      string    `json:"outcome"`
	Rule         string    `json:"rule,omitempty"`
	DurationMS   float64   `json:"duration_ms"`
}

// Audit writes events as JSON lines without blocking the request path: events queue in
// memory and one goroutine writes them. If the queue is full an event is dropped and
// counted, never waited for.
type Audit struct {
	ch      chan AuditEvent
	done    chan struct{}
	dropped int64
	mu      sync.Mutex
	log     *slog.Logger
}

// OpenAudit appends to the file at path (created 0600 with its directory).
func OpenAudit(path string, log *slog.Logger) (*Audit, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	a := &Audit{ch: make(chan AuditEvent, 4096), done: make(chan struct{}), log: log}
	go a.run(f)
	return a, nil
}

func (a *Audit) run(f *os.File) {
	defer close(a.done)
	w := bufio.NewWriterSize(f, 64<<10)
	enc := json.NewEncoder(w)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case ev, ok := <-a.ch:
			if !ok {
				_ = w.Flush()
				_ = f.Close()
				return
			}
			if err := enc.Encode(ev); err != nil {
				a.log.Error("audit log write failed", "err", err)
			}
		case <-tick.C:
			if w.Buffered() > 0 {
				_ = w.Flush()
			}
		}
	}
}

// Record queues one event. A nil Audit records nothing.
func (a *Audit) Record(ev AuditEvent) {
	if a == nil {
		return
	}
	if ev.Time.IsZero() {
		ev.Time = time.Now().UTC()
	}
	select {
	case a.ch <- ev:
	default:
		a.mu.Lock()
		a.dropped++
		n := a.dropped
		a.mu.Unlock()
		if n == 1 || n%1000 == 0 {
			a.log.Warn("audit queue full; events dropped", "dropped", n)
		}
	}
}

// Close flushes and closes the log.
func (a *Audit) Close() {
	if a == nil {
		return
	}
	close(a.ch)
	<-a.done
}
