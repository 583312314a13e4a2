package dispatch

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/mcptask"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/reqparams"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// taskListPage is how many tasks one tasks/list page holds: each is asked of its server.
const taskListPage = 50

// taskList answers tasks/list with the caller's own tasks (never an upstream's list, which
// on a shared instance holds other callers' tasks): each is asked of its server with
// tasks/get, under the client's id. A task its server no longer knows is forgotten.
func (dp *Dispatcher) taskList(ctx context.Context, s *session.Session, m *wire.Msg, out Outbox) {
	p, err := reqparams.Read(m.Params)
	if err != nil {
		_ = out.Reply(wire.Error(m.ID, wire.CodeInvalidParams, "Invalid params: "+err.Error(), nil))
		return
	}
	owner := taskOwner(s)
	all, err := dp.tasks.List(owner)
	if err != nil {
		_ = out.Reply(wire.Error(m.ID, wire.CodeInternalError, "mcpgw could not read its task routes: "+err.Error(), nil))
		return
	}
	start := 0
	if p.Cursor != "" {
		start = slices.IndexFunc(all, func(e mcptask.Entry) bool { return e.ID == p.Cursor })
		if start < 0 {
			_ = out.Reply(wire.Error(m.ID, wire.CodeInvalidParams, "Invalid params: unknown cursor", nil))
			return
		}
	}
	page := all[start:min(len(all), start+taskListPage)]
	tasks := make([]json.RawMessage, 0, len(page))
	for _, e := range page {
		if t, ok := dp.taskStatus(ctx, s, m, e, owner); ok {
			tasks = append(tasks, t)
		}
	}
	res := map[string]any{"tasks": tasks}
	if start+taskListPage < len(all) {
		res["nextCursor"] = all[start+taskListPage].ID
	}
	b, _ := json.Marshal(res)
	_ = out.Reply(wire.Result(m.ID, b))
}

// taskStatus is one task's tasks/get result under the client's id (its _meta left out);
// ok is false when its server failed to answer. A server that answers an error no longer
// has the task: its route is forgotten.
func (dp *Dispatcher) taskStatus(ctx context.Context, s *session.Session, m *wire.Msg, e mcptask.Entry, owner string) (json.RawMessage, bool) {
	via, lost := chooseTaskVia(dp.tasks, dp.Log, s, owner, e.ID, e.Route)
	if lost != "" {
		return nil, false // left out; a request about it says why
	}
	var got collectOutbox
	params := append(append([]byte(`{"taskId":`), wire.Quote(e.UpstreamID)...), '}')
	dp.forward(ctx, &upstreamCall{s: s, m: m, server: e.Server, method: "tasks/get", params: params, out: &got, via: via})
	var r wire.Msg
	if got.msg == nil || wire.ParseInto(got.msg, &r) != nil {
		return nil, false
	}
	if r.Error != nil {
		if wire.ParseError(r.Error).Code == wire.CodeInvalidParams {
			_ = dp.tasks.Delete(owner, e.ID)
		}
		return nil, false
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(r.Result, &fields) != nil {
		return nil, false
	}
	delete(fields, "_meta")
	fields["taskId"] = wire.Quote(e.ID)
	b, _ := json.Marshal(fields)
	return b, true
}

// collectOutbox keeps a request's response; its related messages are dropped.
type collectOutbox struct{ msg []byte }

func (c *collectOutbox) Related([]byte) error   { return nil }
func (c *collectOutbox) Reply(msg []byte) error { c.msg = msg; return nil }
