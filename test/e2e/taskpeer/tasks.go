package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sync"
	"time"
)

const (
	// taskTTL is how long a task stays readable after its creation (ttlMs); after it the
	// task is discarded (cancelled first when still running).
	taskTTL = 10 * time.Minute
	// pollInterval is the pollIntervalMs the peer suggests.
	pollInterval = 250 * time.Millisecond
	// maxTasks bounds the tasks held at once (each running one has a goroutine).
	maxTasks = 1000

	statusWorking       = "working"
	statusInputRequired = "input_required"
	statusCompleted     = "completed"
	statusFailed        = "failed"
	statusCancelled     = "cancelled"
)

// task is one task's state. Every field is guarded by its store's mutex.
type task struct {
	id               string
	status, message  string
	created, updated time.Time
	result           map[string]any // completed: the CallToolResult
	err              *rpcError      // failed
	// pending are the outstanding input requests by key; answers the responses
	// delivered for keys the body has not taken yet; issued every key ever asked (a key
	// names one request over the task's life).
	pending, answers map[string]json.RawMessage
	issued           map[string]bool
	wake             chan struct{} // closed and replaced when answers arrive
	cancel           context.CancelFunc
}

func (t *task) terminal() bool {
	return t.status == statusCompleted || t.status == statusFailed || t.status == statusCancelled
}

// taskStore holds the tasks by id.
type taskStore struct {
	mu    sync.Mutex
	tasks map[string]*task
	ttl   time.Duration // taskTTL; tests set it short
	max   int           // maxTasks; tests set it small
}

func newTaskStore() *taskStore {
	return &taskStore{tasks: map[string]*task{}, ttl: taskTTL, max: maxTasks}
}

// start creates a task, registered before it is returned (a tasks/get for its id
// resolves from then on), and runs body for it in its own goroutine.
func (s *taskStore) start(body toolBody) (map[string]any, *rpcError) {
	id, err := newTaskID()
	if err != nil {
		return nil, errorf(codeInternal, "minting a task id: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	now := time.Now().UTC()
	t := &task{id: id, status: statusWorking, created: now, updated: now, cancel: cancel,
		pending: map[string]json.RawMessage{}, answers: map[string]json.RawMessage{},
		issued: map[string]bool{}, wake: make(chan struct{})}
	s.mu.Lock()
	s.reapLocked(now)
	if len(s.tasks) >= s.max {
		s.mu.Unlock()
		cancel()
		return nil, errorf(codeInternal, "the server holds %d tasks already; try again later", s.max)
	}
	s.tasks[id] = t
	created := s.viewLocked(t, false)
	s.mu.Unlock()
	created["resultType"] = "task"
	go s.run(ctx, t, body)
	return created, nil
}

func newTaskID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// run runs body and settles the task with what it returned: a result is completed (a
// tool error included), a JSON-RPC error or a panic is failed. A task cancelled meanwhile
// keeps its cancelled status.
func (s *taskStore) run(ctx context.Context, t *task, body toolBody) {
	var result map[string]any
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				err = errorf(codeInternal, "internal error: %v", r)
			}
		}()
		result, err = body(ctx, &taskAsker{store: s, task: t})
	}()
	s.mu.Lock()
	defer s.mu.Unlock()
	defer t.cancel()
	if t.terminal() {
		return
	}
	t.updated = time.Now().UTC()
	t.pending = map[string]json.RawMessage{}
	var rerr *rpcError
	switch {
	case err == nil:
		t.status, t.result = statusCompleted, result
	case errors.As(err, &rerr):
		t.status, t.err, t.message = statusFailed, rerr, "the request failed: "+rerr.Message
	default:
		t.status, t.err, t.message = statusFailed, errorf(codeInternal, "%v", err), "the request failed"
	}
}

// reapLocked discards the tasks whose TTL has passed, cancelling those still running.
func (s *taskStore) reapLocked(now time.Time) {
	for id, t := range s.tasks {
		if now.Sub(t.created) > s.ttl {
			t.cancel()
			delete(s.tasks, id)
		}
	}
}

// closeAll cancels every running task (at exit).
func (s *taskStore) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.tasks {
		t.cancel()
	}
}

// viewLocked is the task as the wire shows it: the Task fields, and with detail the
// status's payload (inputRequests, result or error) as tasks/get returns it.
func (s *taskStore) viewLocked(t *task, detail bool) map[string]any {
	v := map[string]any{
		"taskId":         t.id,
		"status":         t.status,
		"createdAt":      t.created.Format(time.RFC3339Nano),
		"lastUpdatedAt":  t.updated.Format(time.RFC3339Nano),
		"ttlMs":          s.ttl.Milliseconds(),
		"pollIntervalMs": pollInterval.Milliseconds(),
	}
	if t.message != "" {
		v["statusMessage"] = t.message
	}
	if !detail {
		return v
	}
	switch t.status {
	case statusInputRequired:
		reqs := make(map[string]json.RawMessage, len(t.pending))
		for k, r := range t.pending {
			reqs[k] = r
		}
		v["inputRequests"] = reqs
	case statusCompleted:
		v["result"] = t.result
	case statusFailed:
		v["error"] = t.err
	}
	return v
}

// lookupLocked finds a live task: -32602 for an id never issued or already discarded.
func (s *taskStore) lookupLocked(id string) (*task, *rpcError) {
	s.reapLocked(time.Now().UTC())
	t, ok := s.tasks[id]
	if !ok {
		return nil, errorf(codeInvalidParams, "Failed to retrieve task: task %q not found", id)
	}
	return t, nil
}

func (s *taskStore) get(id string) (map[string]any, *rpcError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, rerr := s.lookupLocked(id)
	if rerr != nil {
		return nil, rerr
	}
	v := s.viewLocked(t, true)
	v["resultType"] = "complete"
	return v, nil
}

// update delivers the responses whose keys are outstanding and ignores the others (never
// issued, already answered). The task stays input_required until every outstanding
// request has its answer.
func (s *taskStore) update(id string, responses map[string]json.RawMessage) *rpcError {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, rerr := s.lookupLocked(id)
	if rerr != nil {
		return rerr
	}
	delivered := false
	for k, r := range responses {
		if _, ok := t.pending[k]; !ok {
			continue
		}
		delete(t.pending, k)
		t.answers[k] = r
		delivered = true
	}
	if !delivered {
		return nil
	}
	t.updated = time.Now().UTC()
	if len(t.pending) == 0 && t.status == statusInputRequired {
		t.status = statusWorking
	}
	close(t.wake)
	t.wake = make(chan struct{})
	return nil
}

// cancel moves a task that is not terminal yet to cancelled and stops its body; on a
// terminal task it does nothing (the same acknowledgement either way).
func (s *taskStore) cancel(id string) *rpcError {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, rerr := s.lookupLocked(id)
	if rerr != nil {
		return rerr
	}
	if t.terminal() {
		return nil
	}
	t.status, t.message, t.updated = statusCancelled, "cancelled at the client's request", time.Now().UTC()
	t.pending = map[string]json.RawMessage{}
	t.cancel()
	return nil
}

// asker is how a tool's body asks the client for input: keys name the requests (each
// asked at most once per call), the answer is every key's response.
type asker interface {
	ask(ctx context.Context, reqs map[string]json.RawMessage) (map[string]json.RawMessage, error)
}

// taskAsker parks its task as input_required until every request has its answer.
type taskAsker struct {
	store *taskStore
	task  *task
}

func (a *taskAsker) ask(ctx context.Context, reqs map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	s, t := a.store, a.task
	s.mu.Lock()
	if t.terminal() {
		s.mu.Unlock()
		return nil, context.Canceled
	}
	for k := range reqs {
		if t.issued[k] {
			s.mu.Unlock()
			return nil, errorf(codeInternal, "input request key %q asked twice in one task", k)
		}
	}
	for k, r := range reqs {
		t.issued[k] = true
		t.pending[k] = r
	}
	t.status, t.updated = statusInputRequired, time.Now().UTC()
	s.mu.Unlock()
	for {
		s.mu.Lock()
		if got, ok := takeAnswers(t, reqs); ok {
			s.mu.Unlock()
			return got, nil
		}
		wake := t.wake
		s.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// takeAnswers takes the answers to reqs once all have come (called with the lock held).
func takeAnswers(t *task, reqs map[string]json.RawMessage) (map[string]json.RawMessage, bool) {
	for k := range reqs {
		if _, ok := t.answers[k]; !ok {
			return nil, false
		}
	}
	got := make(map[string]json.RawMessage, len(reqs))
	for k := range reqs {
		got[k] = t.answers[k]
		delete(t.answers, k)
	}
	return got, true
}

// taskMethod serves tasks/get, tasks/update and tasks/cancel, for callers that declared
// the extension on the request.
func (p *peer) taskMethod(req *request) (any, *rpcError) {
	if !req.caps.tasks {
		return nil, missingTasks()
	}
	var id string
	if json.Unmarshal(req.params["taskId"], &id) != nil || id == "" {
		return nil, errorf(codeInvalidParams, "params.taskId must be a non-empty string")
	}
	switch req.method {
	case "tasks/get":
		return p.tasks.get(id)
	case "tasks/update":
		raw, ok := req.params["inputResponses"]
		if !ok {
			return nil, errorf(codeInvalidParams, "params.inputResponses is required")
		}
		responses, rerr := object(raw)
		if rerr != nil {
			return nil, errorf(codeInvalidParams, "params.inputResponses: %s", rerr.Message)
		}
		if rerr := p.tasks.update(id, responses); rerr != nil {
			return nil, rerr
		}
	case "tasks/cancel":
		if rerr := p.tasks.cancel(id); rerr != nil {
			return nil, rerr
		}
	default:
		return nil, errorf(codeMethodNotFound, "method %q not found", req.method)
	}
	return map[string]any{"resultType": "complete"}, nil
}
