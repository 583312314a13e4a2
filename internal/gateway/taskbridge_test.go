package gateway_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// A stateless caller of the Tasks extension over a session-revision upstream that lies
// (docs/tasks.md, "Tasks of a session-revision upstream for a stateless caller"): each
// malformed answer is a clear -32603, nothing is recorded from it, and the gateway goes on.

// lyingTaskUpstream is a 2025-11-25 streamable HTTP upstream whose tool "t" declares
// taskSupport "optional"; it answers tools/call, tasks/get and tasks/result with what the
// test sets, and records the params of the tools/call it got.
type lyingTaskUpstream struct {
	mu                sync.Mutex
	call, get, result string
	gotCall           string
}

func (u *lyingTaskUpstream) set(call, get, result string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.call, u.get, u.result = call, get, result
}

func (u *lyingTaskUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil || m.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	u.mu.Lock()
	result := `{}`
	switch m.Method {
	case "initialize":
		result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"tasks":{"cancel":{},"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"liar","version":"1"}}`
	case "tools/list":
		result = `{"tools":[{"name":"t","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}}]}`
	case "tools/call":
		u.gotCall, result = string(m.Params), u.call
	case "tasks/get", "tasks/cancel":
		result = u.get
	case "tasks/result":
		result = u.result
	}
	u.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + result + `}`))
}

const extMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`

func TestTaskBridgeAgainstALyingUpstream(t *testing.T) {
	up := &lyingTaskUpstream{}
	srv := httptest.NewServer(up)
	t.Cleanup(srv.Close)
	g := gatewaytest.Start(t, `
listen: {{listen}}
state_dir: {{state_dir}}
store: memory
naming: {prefix: never}
servers:
  liar: {type: streamable_http, url: `+srv.URL+`}
`)
	call := func() gatewaytest.Resp {
		return g.Do(t, gatewaytest.StatelessReq("tools/call", `{"name":"t","arguments":{},`+extMeta+`}`, map[string]string{"Mcp-Name": "t"}))
	}
	task := func(method, id string) gatewaytest.Resp {
		return g.Do(t, gatewaytest.StatelessReq(method, `{"taskId":"`+id+`",`+extMeta+`}`, map[string]string{"Mcp-Name": id}))
	}
	for _, bad := range []string{
		`{"content":[{"type":"text","text":"ran it anyway"}]}`,
		`{"task":"x"}`,
		`{"task":{"taskId":"a","taskId":"b","status":"working"}}`,
		`{"task":{"taskId":"a","status":"working"},"task":{"taskId":"b","status":"working"}}`,
		`{"task":{"taskId":7,"status":"working"}}`,
		`{"task":{"TASKID":"a","status":"working"}}`,
		`{"task":{"taskId":"a","status":"working","ttl":"soon"}}`,
	} {
		up.set(bad, `{}`, `{}`)
		e := call().RPCError(t, wire.CodeInternalError)
		if !strings.Contains(e.Message, "no valid CreateTaskResult") {
			t.Errorf("tools/call answered %s: %q, want a -32603 saying the CreateTaskResult is not valid", bad, e.Message)
		}
	}
	if !strings.Contains(up.gotCall, `"task":{"ttl":600000}`) {
		t.Errorf("the upstream's tools/call had params %s, want a task of 600000 ms", up.gotCall)
	}

	up.set(`{"task":{"taskId":"up-1","status":"working","ttl":60000}}`, `{"taskId":"up-1","status":"working"}`, `{}`)
	res := gatewaytest.StatelessResult(t, call())
	var id string
	_ = json.Unmarshal(res["taskId"], &id)
	if string(res["resultType"]) != `"task"` || !strings.HasPrefix(id, "mcpgw-task-") || string(res["ttlMs"]) != "60000" {
		t.Fatalf("created %v", res)
	}
	for _, bad := range []string{`[]`, `{"status":"working"}`, `{"taskId":"up-1","status":"working","status":"completed"}`, `{"taskId":"up-1","status":1}`} {
		up.set("", bad, `{}`)
		for _, m := range []string{"tasks/get", "tasks/cancel"} {
			if e := task(m, id).RPCError(t, wire.CodeInternalError); !strings.Contains(e.Message, "no valid task") {
				t.Errorf("%s answered %s: %q", m, bad, e.Message)
			}
		}
	}
	// Completed: the upstream's tasks/result inline, its id nowhere.
	up.set("", `{"taskId":"up-1","status":"completed"}`, `{"content":[{"type":"text","text":"42"}],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"up-1"}}}`)
	res = gatewaytest.StatelessResult(t, task("tasks/get", id))
	if string(res["status"]) != `"completed"` || !strings.Contains(string(res["result"]), `"42"`) || !strings.Contains(string(res["result"]), id) || strings.Contains(string(res["result"]), `"up-1"`) {
		t.Errorf("tasks/get of the completed task: %v", res)
	}
	// tasks/update cannot be mapped.
	r := g.Do(t, gatewaytest.StatelessReq("tasks/update", `{"taskId":"`+id+`","inputResponses":{},`+extMeta+`}`, map[string]string{"Mcp-Name": id}))
	r.RPCError(t, wire.CodeInvalidParams)
}
