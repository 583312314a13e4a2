package dispatch

import (
	"errors"
	"weak"

	"github.com/mcpgw/mcpgw/internal/upstream"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// taskStatusNote relays an upstream's notifications/tasks/status to the session that
// created the task, under the client's id. The task is looked up by the connection the
// notification came on as well as the upstream's id (mcptask's back index): another
// instance of the server (another agent's, another session's) that names the same id,
// by chance or on purpose, names none of this session's tasks. One for a task this
// process did not create on that connection, or whose params are malformed, reaches
// nobody and is counted.
func (r *upstreamRelay) taskStatusNote(c *upstream.Conn, m *wire.Msg, raw []byte) {
	up, err := statusTaskID(m.Params)
	if err != nil {
		r.log.Debug("dropped a malformed notifications/tasks/status", "server", c.Name, "err", err)
		r.unroutable(c, "notification")
		return
	}
	// The connection and the id name the task, and so its session: on a session's own
	// instance that is the session; on an agent's, owner is only a guess (the session
	// whose call is in flight), which must not take a note from the task's session.
	id, sid, ok := r.tasks.Back(weak.Make(c), up)
	if !ok {
		r.unroutable(c, "notification")
		return
	}
	if s := r.host.Live(sid); s != nil {
		_ = s.Send(swapID(raw, up, id))
	}
}

// statusTaskID reads the taskId of a notifications/tasks/status: params an object naming
// each member once, taskId a non-empty string.
func statusTaskID(params []byte) (string, error) {
	var id string
	err := wire.StrictMembers(params, func(k, v []byte) error {
		if string(k) != "taskId" {
			return nil
		}
		var e error
		id, e = wire.StrictString(v)
		return e
	})
	if err == nil && id == "" {
		err = errors.New("taskId is required")
	}
	return id, err
}
