package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/mcptask"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/upstream"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// Where a task's requests go (docs/tasks.md, "Tasks across restarts and replicas"). An
// upstream of a session revision keeps its tasks per instance: its stdio process, its
// streamable HTTP session. A task's route names the instance that created it and, for a
// streamable HTTP one, its session; tasks/get, tasks/result, tasks/cancel and tasks/list
// go to that instance while it lives in this process, else to its session, reattached to
// without an initialize (the gateway restarted, or another replica created the task). A
// task whose instance is gone and cannot be reattached to is lost, and its owner is told
// so (-32602 "task lost"), never sent to an instance that does not know it.

// taskVia is the connection chosen for a request about one task (upstreamCall.via).
type taskVia struct {
	conn *upstream.Conn
	done func()
	// lost forgets the task when the upstream turns out not to know the reattached
	// session (upstream.ErrSessionGone), and says why for the answer. It is not given the
	// call: a call passed to a func value would escape to the heap on every path.
	lost func() string
}

// noDone is the done of a live instance's connection: nothing to stop.
func noDone() {}

// acquire is the connection c goes on and what to run when it is done: the one chosen
// for its task, else the session's instance of its server (one nil check on the common
// path).
func (c *upstreamCall) acquire(ctx context.Context) (*upstream.Conn, func(), error) {
	if c.via != nil {
		return c.via.conn, c.via.done, nil
	}
	return c.s.Upstreams.Acquire(ctx, c.server)
}

// chooseTaskVia chooses the connection the requests about owner's task id (route r) go
// on, for s. nil, "" for a route that names no instance (a stateless upstream's tasks are
// the server's; routes recorded before instances were): the session's instance of the
// server serves it, as any request. lost is set (and via nil) when the instance that ran
// the task is gone and its session cannot be reattached to: the caller answers it (and
// forgets the route) or leaves the task out of a list. A reattached session the upstream
// turns out not to know is answered by via.lost, which forgets the route.
func chooseTaskVia(tasks *mcptask.Table, log *slog.Logger, s *session.Session, owner, id string, r mcptask.Route) (via *taskVia, lost string) {
	if r.Instance == "" && r.UpSession == "" {
		return nil, ""
	}
	gone := func(why string) string {
		log.Debug("MCP task lost", "session", s.ID, "server", r.Server, "task", id, "why", why)
		return "task lost: " + why
	}
	if c := tasks.Live(r.Instance); c != nil {
		return &taskVia{conn: c, done: noDone}, ""
	}
	if r.UpSession == "" {
		return nil, gone(fmt.Sprintf("the instance of server %q that ran it has ended, and its tasks with it (a stdio server's process ends with the gateway; another replica's instance is not reachable from this one)", r.Server))
	}
	c, err := s.Upstreams.Reattach(r.Server, r.UpSession, r.UpVersion)
	if err != nil {
		return nil, gone(fmt.Sprintf("server %q cannot reach the upstream session that ran it: %v", r.Server, err))
	}
	lostFn := func() string {
		_ = tasks.Delete(owner, id)
		return gone(fmt.Sprintf("server %q no longer knows the upstream session that ran it (the server restarted, or ended or expired the session)", r.Server))
	}
	return &taskVia{conn: c, done: func() { _ = c.Close() }, lost: lostFn}, ""
}

// taskLost reports whether err is the end of a reattached session a task ran in, and then
// answers c (upstreamCall.failUpstream).
func (c *upstreamCall) taskLost(err error) (string, bool) {
	if c.via == nil || c.via.lost == nil || !errors.Is(err, upstream.ErrSessionGone) {
		return "", false
	}
	_ = c.out.Reply(errTaskLost(c.m.ID, c.via.lost()))
	return "error", true
}

// errTaskLost answers a request about a task that is lost: to its owner only (anyone
// else gets errUnknownTask), with why.
func errTaskLost(id json.RawMessage, why string) []byte {
	return wire.Error(id, wire.CodeInvalidParams, "Invalid params: "+why, nil)
}

// taskWhere completes a new task's route with the instance that created it (conn, nil
// when unknown): its id in this process and, for a streamable HTTP session, the session,
// which the instance keeps past its own end until the task's ttl (no DELETE), so that the
// task can still be reattached to after a restart or from another replica. A stateless
// upstream's tasks are the server's: its routes name no instance.
func taskWhere(tasks *mcptask.Table, r *mcptask.Route, conn *upstream.Conn, ttl time.Duration) {
	if conn == nil || conn.Stateless {
		return
	}
	r.Instance = tasks.Instance(conn)
	r.UpSession, r.UpVersion = conn.SessionRef()
	if r.UpSession != "" {
		conn.KeepSession(time.Now().Add(mcptask.Life(ttl)))
	}
}
