package dispatch

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/mcptask"
)

func TestTaskParamCutsTTLAndRefusesMalformed(t *testing.T) {
	maxMs := int64(mcptask.MaxTTL / time.Millisecond)
	for _, c := range []struct {
		in, want string
		ttl      time.Duration
	}{
		{`{"ttl":60000}`, `{"ttl":60000}`, time.Minute},
		{`{}`, `{}`, 0},
		{`{"ttl":null}`, `{}`, 0},
		{`{"ttl":1e300}`, `{"ttl":` + string(jsonInt(maxMs)) + `}`, mcptask.MaxTTL},
		{`{"ttl":99999999999999999999}`, `{"ttl":` + string(jsonInt(maxMs)) + `}`, mcptask.MaxTTL},
		{`{"ttl":1000,"x":true}`, `{"ttl":1000,"x":true}`, time.Second},
	} {
		got, ttl, err := taskParam(json.RawMessage(c.in))
		if err != nil || string(got) != c.want || ttl != c.ttl {
			t.Errorf("taskParam(%s) = %s, %v, %v; want %s, %v", c.in, got, ttl, err, c.want, c.ttl)
		}
	}
	for _, bad := range []string{`[]`, `"x"`, `7`, `{"ttl":-1}`, `{"ttl":"60000"}`, `{"ttl":1,"ttl":2}`, `{"ttl":{}}`, `{`} {
		if got, _, err := taskParam(json.RawMessage(bad)); err == nil {
			t.Errorf("taskParam(%s) = %s, accepted", bad, got)
		}
	}
}

func TestReadTaskID(t *testing.T) {
	id, meta, _, err := readTaskID(json.RawMessage(`{"taskId":"mcpgw-task-x","_meta":{"progressToken":1}}`))
	if err != nil || id != "mcpgw-task-x" || string(meta) != `{"progressToken":1}` {
		t.Errorf("readTaskID = %q %s %v", id, meta, err)
	}
	for _, bad := range []string{``, `null`, `{}`, `[]`, `{"taskId":7}`, `{"taskId":""}`, `{"taskId":"a","taskId":"b"}`, `{"TaskId":"a"}`} {
		if id, _, _, err := readTaskID(json.RawMessage(bad)); err == nil {
			t.Errorf("readTaskID(%s) = %q, accepted", bad, id)
		}
	}
}

func TestCreatedTask(t *testing.T) {
	id, ttl, ok := createdTask(json.RawMessage(`{"task":{"taskId":"u-1","status":"working","ttl":60000,"pollInterval":1000}}`))
	if !ok || id != "u-1" || ttl != time.Minute {
		t.Errorf("createdTask = %q %v %v", id, ttl, ok)
	}
	if _, ttl, ok := createdTask(json.RawMessage(`{"task":{"taskId":"u-2","status":"working","ttl":null}}`)); !ok || ttl != mcptask.MaxTTL {
		t.Errorf("a task the upstream keeps forever: ttl %v %v, want MaxTTL", ttl, ok)
	}
	if _, ttl, ok := createdTask(json.RawMessage(`{"task":{"taskId":"u-3","ttl":1e308}}`)); !ok || ttl != mcptask.MaxTTL {
		t.Errorf("a huge upstream ttl: %v %v, want MaxTTL", ttl, ok)
	}
	for _, not := range []string{`{"content":[]}`, `{"task":null}`, `{"task":{}}`, `{"task":{"taskId":7}}`, `{"task":"x"}`} {
		if id, _, ok := createdTask(json.RawMessage(not)); ok {
			t.Errorf("createdTask(%s) = %q, read as a task", not, id)
		}
	}
}

func TestSwapID(t *testing.T) {
	long := "6f1c2e4a-1b2c-4d5e-8f90-a1b2c3d4e5f6"
	msg := []byte(`{"result":{"taskId":"` + long + `","_meta":{"io.modelcontextprotocol/related-task":{"taskId":"` + long + `"}}}}`)
	if got := string(swapID(msg, long, "mcpgw-task-X")); strings.Contains(got, long) || strings.Count(got, `"mcpgw-task-X"`) != 2 {
		t.Errorf("swapID left the upstream id: %s", got)
	}
	got := string(swapID([]byte(`{"error":{"code":-32602,"message":"Task `+long+` not found"}}`), long, "mcpgw-task-X"))
	if strings.Contains(got, long) || !strings.Contains(got, "Task mcpgw-task-X not found") {
		t.Errorf("a long upstream id leaks through an error message: %s", got)
	}
	// An upstream that lies picks a short id that is also a word of its results: only
	// the taskId members change.
	lie := []byte(`{"result":{"taskId":"text","content":[{"type":"text","text":"text"}],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"text"}},"n":12345678901234567890}}`)
	got = string(swapID(lie, "text", "mcpgw-task-X"))
	if strings.Count(got, `"mcpgw-task-X"`) != 2 || !strings.Contains(got, `"type":"text"`) || !strings.Contains(got, `"text":"text"`) || !strings.Contains(got, "12345678901234567890") {
		t.Errorf("swapID of a short id changed more than the taskId members: %s", got)
	}
	if string(swapID(lie, "", "x")) != string(lie) {
		t.Error("an empty id replaced something")
	}
	if string(swapID(lie, "absent", "x")) != string(lie) {
		t.Error("an id that is not there changed the message")
	}
}

// TestCreatedTaskFlat: the Tasks extension's flat CreateTaskResult is a task; a complete
// result that merely mentions a taskId is not.
func TestCreatedTaskFlat(t *testing.T) {
	id, ttl, ok := createdTask(json.RawMessage(`{"resultType":"task","taskId":"u-2","status":"working","ttlMs":600000,"pollIntervalMs":250}`))
	if !ok || id != "u-2" || ttl != 10*time.Minute {
		t.Errorf("flat = %q %v %v", id, ttl, ok)
	}
	if id, _, ok := createdTask(json.RawMessage(`{"resultType":"complete","taskId":"u-3","content":[]}`)); ok {
		t.Errorf("a complete result read as task %q", id)
	}
	if _, ttl, ok := createdTask(json.RawMessage(`{"resultType":"task","taskId":"u-4","ttlMs":1e300}`)); !ok || ttl != mcptask.MaxTTL {
		t.Errorf("huge ttlMs: %v %v", ttl, ok)
	}
	if _, _, ok := createdTask(json.RawMessage(`{"resultType":"task","taskId":""}`)); ok {
		t.Error("an empty taskId read as a task")
	}
}

// TestDeclaresTasks: only an extensions member naming the Tasks extension declares it.
func TestDeclaresTasks(t *testing.T) {
	for caps, want := range map[string]bool{
		`{"extensions":{"io.modelcontextprotocol/tasks":{}}}`:   true,
		`{"extensions":{"io.modelcontextprotocol/tasks":null}}`: false,
		`{"extensions":{"io.modelcontextprotocol/TASKS":{}}}`:   false,
		`{"tasks":{}}`: false,
		`[]`:           false,
		``:             false,
	} {
		if got := declaresTasks(json.RawMessage(caps)); got != want {
			t.Errorf("declaresTasks(%s) = %v", caps, got)
		}
	}
}
