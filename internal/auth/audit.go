package auth

import (
	"bufio"
	"encoding/json"
	"github.com/mcpgw/mcpgw/internal/statedir"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// AuditEvent is one line of the audit log: a tool call, a denial, or a write through the
// admin API (kind admin: who, what, and hashes of the entity before and after).
type AuditEvent struct {
	Time         time.Time `json:"time"`
	Kind         string    `json:"kind"` // call | denial | admin
	Agent        string    `json:"agent"`
	Conversation string    `json:"conversation,omitempty"`
	Task         string    `json:"task,omitempty"`
	Session      string    `json:"session,omitempty"`
	Tool         string    `json:"tool,omitempty"`
	Upstream     string    `json:"upstream,omitempty"`
	Outcome      string    `json:"outcome"`
	Rule         string    `json:"rule,omitempty"`
	DurationMS   float64   `json:"duration_ms"`
	// Admin writes: the caller (admin_token, or loopback:<ip>), the request (POST
	// /api/servers), the entity (server/web), and SHA-256 prefixes of its JSON before and
	// after ("" when it did not exist, or no longer does).
	Actor  string `json:"actor,omitempty"`
	Action string `json:"action,omitempty"`
	Object string `json:"object,omitempty"`
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
}

// Audit writes events as JSON lines without blocking the request path: events are
// appended to an in-memory batch and one goroutine writes the batch every 200 ms (or when
// it grows large), so a call costs an append, not a goroutine wake-up. Past maxQueued
// unwritten events, an event is dropped and counted rather than waited for.
type Audit struct {
	mu      sync.Mutex
	batch   []AuditEvent
	dropped int64
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	log     *slog.Logger
}

const maxQueued = 1 << 16

// OpenAudit appends to the file at path (created 0600 with its directory).
func OpenAudit(path string, log *slog.Logger) (*Audit, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	// No link is followed: one in the state dir would append audit lines wherever it points.
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY|statedir.NoFollow, 0o600)
	if err != nil {
		return nil, err
	}
	a := &Audit{kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}), log: log}
	go a.run(f)
	return a, nil
}

func (a *Audit) run(f *os.File) {
	defer close(a.done)
	w := bufio.NewWriterSize(f, 64<<10)
	enc := json.NewEncoder(w)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var spare []AuditEvent
	flush := func() {
		a.mu.Lock()
		batch := a.batch
		a.batch = spare[:0]
		a.mu.Unlock()
		for _, ev := range batch {
			if err := enc.Encode(ev); err != nil {
				a.log.Error("audit log write failed", "err", err)
				break
			}
		}
		_ = w.Flush()
		spare = batch
	}
	for {
		select {
		case <-tick.C:
			flush()
		case <-a.kick:
			flush()
		case <-a.stop:
			flush()
			_ = f.Close()
			return
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
	a.mu.Lock()
	if len(a.batch) >= maxQueued {
		a.dropped++
		n := a.dropped
		a.mu.Unlock()
		if n == 1 || n%1000 == 0 {
			a.log.Warn("audit queue full; events dropped", "dropped", n)
		}
		return
	}
	a.batch = append(a.batch, ev)
	big := len(a.batch) == 4096
	a.mu.Unlock()
	if big {
		select {
		case a.kick <- struct{}{}:
		default:
		}
	}
}

// Close writes what is queued and closes the log.
func (a *Audit) Close() {
	if a == nil {
		return
	}
	close(a.stop)
	<-a.done
}
