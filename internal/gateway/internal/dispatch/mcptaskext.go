package dispatch

import (
	"encoding/json"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/stateless"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// The Tasks extension (io.modelcontextprotocol/tasks, SEP-2663) of the stateless revision
// (2026-07-28, docs/tasks.md): the server decides to answer a tools/call with a task, as a
// flat CreateTaskResult ({"resultType": "task", "taskId", …}, read by createdTask), and
// the client follows it with tasks/get (the result inline), tasks/update (answers to the
// task's input requests) and tasks/cancel. The routes are those of SEP-1686's tasks
// (mcptask: opaque ids, the owner, the store); what differs is the gate: a caller that
// does not declare the extension on the request gets -32021 for tasks/*, whatever the id.

// TasksExtension is the Tasks extension's identifier.
const TasksExtension = "io.modelcontextprotocol/tasks"

// taskGate is the answer to a request about one task that the caller may not make (nil:
// it may): tasks/update exists only in the Tasks extension, and a stateless caller must
// declare the extension.
func taskGate(s *session.Session, m *wire.Msg) []byte {
	if s.Transport != "stateless" {
		if m.Method == "tasks/update" {
			return wire.Error(m.ID, wire.CodeMethodNotFound, "Method not found: "+m.Method, nil)
		}
		return nil
	}
	if declaresTasks(s.Rec.ClientCaps) {
		return nil
	}
	return wire.Error(m.ID, stateless.CodeMissingClientCapabilities, "Missing required client capability: "+TasksExtension,
		map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{TasksExtension: map[string]any{}}}})
}

// declaresTasks reports whether client capabilities declare the Tasks extension.
func declaresTasks(caps json.RawMessage) bool {
	var c struct {
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	if json.Unmarshal(caps, &c) != nil {
		return false
	}
	v, ok := c.Extensions[TasksExtension]
	return ok && string(v) != "null"
}
