package dispatch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"time"
	"weak"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/mcptask"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/reqparams"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/upstream"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// MCP tasks (SEP-1686, docs/tasks.md): a task-augmented tools/call returns a task whose
// id the gateway replaces by an opaque one of its own (mcptask), routed to the server,
// and owned by the identity and session that created it; tasks/get, tasks/result and
// tasks/cancel go to the server that owns the task under its own id, and tasks/list is
// the gateway's list of the caller's tasks, each asked of its server.

// taskOwner is the owner key of a session's MCP tasks: its principal, agent and session
// (a stateless caller's gateway-side session is not the client's: its tasks belong to
// its identity).
func taskOwner(s *session.Session) string {
	sid := s.ID
	if s.Transport == "stateless" {
		sid = ""
	}
	return mcptask.Owner(s.Rec.Principal, s.Rec.Agent, sid)
}

// errUnknownTask answers a task id the caller does not own: unknown, expired and another
// caller's read the same, so that an answer reveals nothing.
func errUnknownTask(id json.RawMessage) []byte {
	return wire.Error(id, wire.CodeInvalidParams, "Invalid params: unknown task", nil)
}

// taskParam reads a tools/call's "task" member ({"ttl": ms}, SEP-1686) and rebuilds it
// with the ttl cut to mcptask.MaxTTL; ttl is the one it asks (0: none).
func taskParam(raw json.RawMessage) (json.RawMessage, time.Duration, error) {
	var out wire.Object
	var ttl time.Duration
	err := wire.StrictMembers(raw, func(k, v []byte) error {
		if string(k) != "ttl" {
			out.Raw(string(k), v)
			return nil
		}
		var ms float64
		if string(v) == "null" {
			return nil
		}
		if json.Unmarshal(v, &ms) != nil || ms < 0 || math.IsInf(ms, 0) {
			return errors.New("task.ttl must be a number of milliseconds")
		}
		max := float64(mcptask.MaxTTL / time.Millisecond)
		ms = min(ms, max)
		ttl = time.Duration(ms) * time.Millisecond
		out.Raw("ttl", json.RawMessage(jsonInt(int64(ms))))
		return nil
	})
	if errors.Is(err, wire.ErrNotObject) {
		err = errors.New("task must be an object")
	}
	if err != nil {
		return nil, 0, err
	}
	if out.Empty() {
		return json.RawMessage(`{}`), 0, nil
	}
	return out.Bytes(), ttl, nil
}

func jsonInt(n int64) []byte { b, _ := json.Marshal(n); return b }

// taskCreateOutbox is the outbox of a task-augmented tools/call: a CreateTaskResult in
// the answer is recorded as the caller's task and its id replaced by the gateway's.
type taskCreateOutbox struct {
	Outbox
	dp     *Dispatcher
	s      *session.Session
	server string
	ttl    time.Duration
	// conn is the instance the call went to (forwardCall; mcptaskroute.go) and the
	// connection that answered (answer): the task's route names it, and its status
	// notifications are taken from it only (mcptasknotes.go).
	conn *upstream.Conn
	// def is the tool's definition, for a stateless caller's call made with no task
	// param: bridgeCall reads its execution.taskSupport once the upstream is known, and
	// sets bridge when it makes the call a task (mcptaskbridge.go).
	def    json.RawMessage
	bridge bool
}

func (o *taskCreateOutbox) Reply(msg []byte) error {
	if msg == nil {
		return o.Outbox.Reply(nil)
	}
	var m wire.Msg
	if wire.ParseInto(msg, &m) != nil || m.Result == nil {
		return o.Outbox.Reply(msg)
	}
	if o.bridge {
		return o.bridgeReply(&m)
	}
	upID, ttl, ok := createdTask(m.Result)
	if !ok {
		return o.Outbox.Reply(msg)
	}
	if ttl <= 0 {
		ttl = o.ttl
	}
	id, fail := o.record(&m, mcptask.Route{Server: o.server, UpstreamID: upID, Session: o.s.ID}, ttl)
	if fail != nil {
		return o.Outbox.Reply(fail)
	}
	return o.Outbox.Reply(swapID(msg, upID, id))
}

// record records the task of route r that the upstream created, with the instance that
// did, for ttl; it returns the client's id, or the answer to give instead.
func (o *taskCreateOutbox) record(m *wire.Msg, r mcptask.Route, ttl time.Duration) (string, []byte) {
	taskWhere(o.dp.tasks, &r, o.conn, ttl)
	id, err := o.dp.tasks.Add(taskOwner(o.s), r, ttl)
	if err != nil {
		o.dp.Log.Warn("MCP task not recorded", "session", o.s.ID, "server", o.server, "err", err)
		text := "mcpgw could not record the task: " + err.Error()
		if errors.Is(err, mcptask.ErrTooMany) {
			text = err.Error()
		}
		return "", wire.Error(m.ID, wire.CodeInternalError, text, nil)
	}
	if o.conn != nil {
		o.dp.tasks.Bind(weak.Make(o.conn), r.UpstreamID, id, o.s.ID, ttl)
	}
	return id, nil
}

// createdTask reads a CreateTaskResult's task id and ttl; ok is false for any other result.
// Both shapes are read: SEP-1686's ({"task": {"taskId", "ttl"}}) and the Tasks
// extension's, flat ({"resultType": "task", "taskId", "ttlMs"}).
func createdTask(res json.RawMessage) (id string, ttl time.Duration, ok bool) {
	if !bytes.Contains(res, []byte(`"taskId"`)) {
		return "", 0, false
	}
	type created struct {
		TaskID string   `json:"taskId"`
		TTL    *float64 `json:"ttl"`
	}
	var r struct {
		Task       *created `json:"task"`
		ResultType string   `json:"resultType"`
		TaskID     string   `json:"taskId"`
		TTLMs      *float64 `json:"ttlMs"`
	}
	if json.Unmarshal(res, &r) != nil {
		return "", 0, false
	}
	t := r.Task
	if r.ResultType == "task" {
		t = &created{TaskID: r.TaskID, TTL: r.TTLMs}
	}
	if t == nil || t.TaskID == "" {
		return "", 0, false
	}
	if t.TTL != nil && *t.TTL > 0 && !math.IsInf(*t.TTL, 0) {
		ttl = time.Duration(min(*t.TTL, float64(mcptask.MaxTTL/time.Millisecond))) * time.Millisecond
	} else {
		ttl = mcptask.MaxTTL // null: the upstream keeps it; the route lives the longest
	}
	return t.TaskID, ttl, true
}

// swapID replaces the upstream's task id from by the gateway's to in msg: in the answer,
// in a result's related-task _meta, in the requests of the task's input. An id long and
// plain enough to be unmistakable (a UUID) is replaced wherever it appears, inside
// strings too, so that an upstream's "task 6f1c… not found" does not tell the client the
// upstream's id. A short or odd one ("1", "text", which an upstream that lies may pick)
// is replaced only as the value of a "taskId" member: replacing it everywhere would
// rewrite the result's own words.
func swapID(msg []byte, from, to string) []byte {
	if from == "" {
		return msg
	}
	if len(from) >= 16 && plainID(from) {
		return bytes.ReplaceAll(msg, []byte(from), []byte(to))
	}
	if !bytes.Contains(msg, wire.Quote(from)) {
		return msg
	}
	d := json.NewDecoder(bytes.NewReader(msg))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return msg
	}
	out, err := json.Marshal(swapTaskIDs(v, from, to))
	if err != nil {
		return msg
	}
	return out
}

// swapTaskIDs replaces the "taskId" members equal to from by to, at any depth.
func swapTaskIDs(v any, from, to string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "taskId" && s == from {
				x[k] = to
				continue
			}
			x[k] = swapTaskIDs(e, from, to)
		}
	case []any:
		for i, e := range x {
			x[i] = swapTaskIDs(e, from, to)
		}
	}
	return v
}

// plainID reports whether id holds only letters, digits and -_.: (the same bytes raw and
// inside a JSON string).
func plainID(id string) bool {
	for _, c := range []byte(id) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':') {
			return false
		}
	}
	return true
}

// taskIDOutbox relays the answer of a request about one task with the upstream's id of
// the task replaced by the client's.
type taskIDOutbox struct {
	Outbox
	upID, id string
}

func (o taskIDOutbox) Related(msg []byte) error { return o.Outbox.Related(swapID(msg, o.upID, o.id)) }
func (o taskIDOutbox) Reply(msg []byte) error {
	if msg == nil {
		return o.Outbox.Reply(nil)
	}
	return o.Outbox.Reply(swapID(msg, o.upID, o.id))
}

// taskRequest answers tasks/get, tasks/result and tasks/cancel: the task's server is asked
// under its own id, for the caller that owns it only.
func (dp *Dispatcher) taskRequest(ctx context.Context, s *session.Session, m *wire.Msg, out Outbox) {
	if msg := taskGate(s, m); msg != nil {
		_ = out.Reply(msg)
		return
	}
	id, meta, inputs, err := readTaskID(m.Params)
	if err != nil {
		_ = out.Reply(wire.Error(m.ID, wire.CodeInvalidParams, "Invalid params: "+err.Error(), nil))
		return
	}
	owner := taskOwner(s)
	r, ok, err := dp.tasks.Get(owner, id)
	if err != nil {
		_ = out.Reply(wire.Error(m.ID, wire.CodeInternalError, "mcpgw could not read its task routes: "+err.Error(), nil))
		return
	}
	if !ok {
		_ = out.Reply(errUnknownTask(m.ID))
		return
	}
	if r.Bridge {
		(&bridgedTask{dp: dp, s: s, m: m, owner: owner, id: id, r: r}).answer(ctx, out)
		return
	}
	b := append([]byte(`{"taskId":`), wire.Quote(r.UpstreamID)...)
	meta, prog, err := dp.rewriteMeta(meta)
	if err != nil {
		_ = out.Reply(wire.Error(m.ID, wire.CodeInvalidParams, "Invalid params: _meta "+err.Error(), nil))
		return
	}
	if meta != nil {
		b = append(append(b, `,"_meta":`...), meta...)
	}
	if m.Method == "tasks/update" && inputs != nil {
		b = append(append(b, `,"inputResponses":`...), inputs...)
	}
	b = append(b, '}')
	// Chosen last: a reattached connection is closed by forward, and nothing returns between.
	via, lost := chooseTaskVia(dp.tasks, dp.Log, s, owner, id, r)
	if lost != "" {
		_ = dp.tasks.Delete(owner, id)
		_ = out.Reply(errTaskLost(m.ID, lost))
		return
	}
	dp.forward(ctx, &upstreamCall{s: s, m: m, server: r.Server, method: m.Method, params: b, prog: prog, via: via,
		out: taskIDOutbox{Outbox: out, upID: r.UpstreamID, id: id}})
}

// readTaskID reads the params of a request about one task: taskId, _meta and (the Tasks
// extension's tasks/update) inputResponses.
func readTaskID(raw json.RawMessage) (id string, meta, inputs json.RawMessage, err error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil, nil, errors.New("taskId is required")
	}
	err = wire.StrictMembers(raw, func(k, v []byte) error {
		switch string(k) {
		case "taskId":
			var e error
			id, e = wire.StrictString(v)
			if e != nil {
				return errors.New("taskId " + e.Error())
			}
		case "_meta":
			meta = v
		case "inputResponses":
			inputs = v
		}
		return nil
	})
	if errors.Is(err, wire.ErrNotObject) {
		err = reqparams.ErrNotObject
	}
	if err == nil && id == "" {
		err = errors.New("taskId is required")
	}
	return id, meta, inputs, err
}
