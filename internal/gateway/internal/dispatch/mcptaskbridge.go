package dispatch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/mcptask"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/stateless"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// The Tasks extension over SEP-1686 (docs/tasks.md, "Tasks of a session-revision
// upstream for a stateless caller"): a stateless caller that declares the extension
// calls a tool whose definition declares execution.taskSupport "optional" or "required"
// on an upstream of a session revision (2025-11-25). mcpgw makes the call task-augmented
// ("task": {"ttl": bridgeTTL}), records the upstream's {"task": {…}} under an opaque id
// (a route marked Bridge) and answers the extension's flat shape; tasks/get is the
// upstream's tasks/get and, once the task has ended, its tasks/result inline; tasks/cancel
// is the upstream's tasks/cancel. tasks/update cannot be mapped (a SEP-1686 task asks for
// its input while its requestor waits on tasks/result) and is refused with -32602.

// bridgeTTL is the ttl mcpgw asks for a task it makes for a stateless caller.
const bridgeTTL = 10 * time.Minute

// taskSupport is a tool definition's execution.taskSupport ("" when it has none, or the
// definition cannot be read). Member names are matched exactly and may not repeat
// (encoding/json would take "TaskSupport", or the last of two).
func taskSupport(def json.RawMessage) string {
	if !bytes.Contains(def, []byte(`"taskSupport"`)) {
		return ""
	}
	var exec []byte
	if wire.StrictMembers(def, func(k, v []byte) error {
		if string(k) == "execution" {
			exec = v
		}
		return nil
	}) != nil || exec == nil {
		return ""
	}
	var support string
	if wire.StrictMembers(exec, func(k, v []byte) error {
		if string(k) != "taskSupport" {
			return nil
		}
		var err error
		support, err = wire.StrictString(v)
		return err
	}) != nil {
		return ""
	}
	return support
}

// bridgeCall runs before a stateless caller's tools/call goes to conn, a session-revision
// upstream (forwardCall): a tool that supports tasks is called as a task for a caller that
// declares the extension; a tool that requires one is refused, -32021, for a caller that
// does not. done reports that c was answered (outcome says how).
func (o *taskCreateOutbox) bridgeCall(c *upstreamCall) (outcome string, done bool) {
	support := taskSupport(o.def)
	o.def = nil // decided once, whatever a retry does
	if support != "optional" && support != "required" {
		return "", false
	}
	if !declaresTasks(o.s.Rec.ClientCaps) {
		if support != "required" {
			return "", false
		}
		_ = o.Outbox.Reply(wire.Error(c.m.ID, stateless.CodeMissingClientCapabilities,
			"Missing required client capability: "+TasksExtension+" (the tool runs only as a task)",
			map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{TasksExtension: map[string]any{}}}}))
		return "error", true
	}
	if n := len(c.params); n > 0 && c.params[n-1] == '}' {
		p := make([]byte, 0, n+32)
		p = append(p, c.params[:n-1]...)
		p = append(p, `,"task":{"ttl":`...)
		p = strconv.AppendInt(p, bridgeTTL.Milliseconds(), 10)
		c.params = append(p, "}}"...)
		o.bridge, o.ttl = true, bridgeTTL
	}
	return "", false
}

// upTask is a SEP-1686 Task as an upstream answered it.
type upTask struct {
	id, status                   string
	message, created, updated    string
	ttl, poll                    float64
	hasTTL, hasPoll, hasMessage  bool
	hasCreated, hasUpdated, seen bool
}

// readUpTask reads a SEP-1686 Task object strictly: no member twice, taskId and status
// non-empty strings, the timestamps and message strings, ttl and pollInterval numbers
// (ttl may be null). Other members are ignored.
func readUpTask(raw []byte) (upTask, error) {
	var t upTask
	str := func(name string, v []byte, dst *string, has *bool) error {
		s, err := wire.StrictString(v)
		if err != nil {
			return fmt.Errorf("%s %v", name, err)
		}
		*dst, *has = s, true
		return nil
	}
	num := func(name string, v []byte, dst *float64, has *bool) error {
		if string(v) == "null" {
			return nil
		}
		var f float64
		if json.Unmarshal(v, &f) != nil || f < 0 || math.IsInf(f, 0) {
			return fmt.Errorf("%s is not a number of milliseconds", name)
		}
		*dst, *has = f, true
		return nil
	}
	var ignored bool
	err := wire.StrictMembers(raw, func(k, v []byte) error {
		switch string(k) {
		case "taskId":
			return str("taskId", v, &t.id, &t.seen)
		case "status":
			return str("status", v, &t.status, &ignored)
		case "statusMessage":
			return str("statusMessage", v, &t.message, &t.hasMessage)
		case "createdAt":
			return str("createdAt", v, &t.created, &t.hasCreated)
		case "lastUpdatedAt":
			return str("lastUpdatedAt", v, &t.updated, &t.hasUpdated)
		case "ttl":
			return num("ttl", v, &t.ttl, &t.hasTTL)
		case "pollInterval":
			return num("pollInterval", v, &t.poll, &t.hasPoll)
		}
		return nil
	})
	switch {
	case errors.Is(err, wire.ErrNotObject):
		return t, errors.New("the task is not an object")
	case err != nil:
		return t, err
	case t.id == "":
		return t, errors.New("the task has no taskId")
	case t.status == "":
		return t, errors.New("the task has no status")
	}
	return t, nil
}

// flat is the task in the extension's shape under the client's id: resultType, taskId,
// status and, as the upstream gave them, statusMessage, createdAt, lastUpdatedAt, ttlMs
// and pollIntervalMs. The object is left open for the members the caller adds.
func (t *upTask) flat(resultType, id string) *wire.Object {
	var o wire.Object
	o.Str("resultType", resultType)
	o.Str("taskId", id)
	o.Str("status", t.status)
	if t.hasMessage {
		o.Str("statusMessage", t.message)
	}
	if t.hasCreated {
		o.Str("createdAt", t.created)
	}
	if t.hasUpdated {
		o.Str("lastUpdatedAt", t.updated)
	}
	if t.hasTTL {
		o.Raw("ttlMs", jsonInt(int64(t.ttl)))
	}
	if t.hasPoll {
		o.Raw("pollIntervalMs", jsonInt(int64(t.poll)))
	}
	return &o
}

// readCreated reads a SEP-1686 CreateTaskResult ({"task": {…}, "_meta"?}) strictly.
func readCreated(res []byte) (upTask, error) {
	var task []byte
	err := wire.StrictMembers(res, func(k, v []byte) error {
		if string(k) == "task" {
			task = v
		}
		return nil
	})
	if err != nil {
		return upTask{}, err
	}
	if task == nil {
		return upTask{}, errors.New("it has no task member")
	}
	return readUpTask(task)
}

// bridgeReply answers a task-augmented call mcpgw made for a stateless caller: the
// upstream's CreateTaskResult is recorded and answered flat; anything else that is not an
// error is a malformed answer, -32603 saying so.
func (o *taskCreateOutbox) bridgeReply(m *wire.Msg) error {
	t, err := readCreated(m.Result)
	if err != nil {
		return o.Outbox.Reply(wire.Error(m.ID, wire.CodeInternalError,
			fmt.Sprintf("upstream %q answered a task-augmented tools/call with no valid CreateTaskResult: %v", o.server, err), nil))
	}
	ttl := o.ttl
	if t.hasTTL && t.ttl > 0 {
		ttl = time.Duration(min(t.ttl, float64(mcptask.MaxTTL/time.Millisecond))) * time.Millisecond
	}
	r := mcptask.Route{Server: o.server, UpstreamID: t.id, Session: o.s.ID, Bridge: true}
	id, msg := o.record(m, r, ttl)
	if msg != nil {
		return o.Outbox.Reply(msg)
	}
	// A statusMessage may name the upstream's id.
	return o.Outbox.Reply(swapID(wire.Result(m.ID, t.flat("task", id).Bytes()), t.id, id))
}

// bridgedTask is a request about a task mcpgw made for a stateless caller on a
// session-revision upstream: route r, the client's id id, its owner.
type bridgedTask struct {
	dp        *Dispatcher
	s         *session.Session
	m         *wire.Msg
	owner, id string
	r         mcptask.Route
}

// answer answers tasks/get, tasks/cancel and tasks/update about the task.
func (b *bridgedTask) answer(ctx context.Context, out Outbox) {
	m, id, r := b.m, b.id, b.r
	if m.Method == "tasks/update" {
		_ = out.Reply(wire.Error(m.ID, wire.CodeInvalidParams, "Invalid params: this task runs on server "+strconv.Quote(r.Server)+
			", of a session revision (SEP-1686 tasks), which takes a task's input while its result is awaited, not with tasks/update", nil))
		return
	}
	ans, fail := b.ask(ctx, m.Method)
	if fail != nil {
		_ = out.Reply(fail)
		return
	}
	t, err := readUpTask(ans.Result)
	if err != nil {
		_ = out.Reply(malformedTask(m, r, err))
		return
	}
	o := t.flat("complete", id)
	if m.Method == "tasks/get" && (t.status == "completed" || t.status == "failed") {
		res, fail := b.ask(ctx, "tasks/result")
		if fail != nil {
			_ = out.Reply(fail)
			return
		}
		if res.Error != nil {
			o.Raw("error", res.Error)
		} else {
			o.Raw("result", res.Result)
		}
	}
	_ = out.Reply(swapID(wire.Result(m.ID, o.Bytes()), r.UpstreamID, id))
}

// ask sends method about r's task to its upstream (on the instance chosen for it)
// and returns the answer; fail is the client's answer instead when the
// task is lost, the request failed, or the upstream answered an error to a request other
// than tasks/result (relayed with the client's id in it).
func (b *bridgedTask) ask(ctx context.Context, method string) (*wire.Msg, []byte) {
	dp, s, m, owner, id, r := b.dp, b.s, b.m, b.owner, b.id, b.r
	via, lost := chooseTaskVia(dp.tasks, dp.Log, s, owner, id, r)
	if lost != "" {
		_ = dp.tasks.Delete(owner, id)
		return nil, errTaskLost(m.ID, lost)
	}
	var got collectOutbox
	params := append(append([]byte(`{"taskId":`), wire.Quote(r.UpstreamID)...), '}')
	dp.forward(ctx, &upstreamCall{s: s, m: m, server: r.Server, method: method, params: params, out: &got, via: via})
	var a wire.Msg
	if got.msg == nil {
		return nil, wire.Error(m.ID, wire.CodeInternalError, "upstream "+strconv.Quote(r.Server)+" gave no answer to "+method, nil)
	}
	if wire.ParseInto(got.msg, &a) != nil || (a.Result == nil && a.Error == nil) {
		return nil, wire.Error(m.ID, wire.CodeInternalError, "upstream "+strconv.Quote(r.Server)+" answered "+method+" with a malformed message", nil)
	}
	if a.Error != nil && method != "tasks/result" {
		return nil, swapID(got.msg, r.UpstreamID, id)
	}
	return &a, nil
}

// malformedTask answers an upstream's tasks/get or tasks/cancel that holds no valid Task.
func malformedTask(m *wire.Msg, r mcptask.Route, err error) []byte {
	return wire.Error(m.ID, wire.CodeInternalError,
		fmt.Sprintf("upstream %q answered %s with no valid task: %v", r.Server, m.Method, err), nil)
}
