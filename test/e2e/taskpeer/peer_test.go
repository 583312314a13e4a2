package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// waitLimit bounds every poll of a task's status in these tests.
const waitLimit = 10 * time.Second

type testPeer struct {
	t   *testing.T
	p   *peer
	srv *httptest.Server
}

func newTestPeer(t *testing.T) *testPeer {
	t.Helper()
	p := newPeer(log.New(io.Discard, "", 0))
	srv := httptest.NewServer(p)
	t.Cleanup(func() {
		srv.Close()
		p.tasks.closeAll()
	})
	return &testPeer{t: t, p: p, srv: srv}
}

// Client capabilities the tests declare.
const (
	withTasks  = `{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	tasksOnly  = `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	elicitOnly = `{"elicitation":{}}`
	noCaps     = `{}`
)

// answer is one HTTP answer, decoded.
type answer struct {
	status int
	Result map[string]json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

func (a answer) code() int {
	if a.Error == nil {
		return 0
	}
	return a.Error.Code
}

func (a answer) str(name string) string {
	var s string
	_ = json.Unmarshal(a.Result[name], &s)
	return s
}

// post sends body with the revision's headers for method and name, overridden by hdr
// (an empty value removes a header).
func (tp *testPeer) post(method, name, body string, hdr map[string]string) answer {
	tp.t.Helper()
	req, err := http.NewRequest(http.MethodPost, tp.srv.URL+"/mcp", strings.NewReader(body))
	if err != nil {
		tp.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("MCP-Protocol-Version", protocolVersion)
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := tp.srv.Client().Do(req)
	if err != nil {
		tp.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode}
	if len(b) > 0 {
		if err := json.Unmarshal(b, &a); err != nil {
			tp.t.Fatalf("answer %q: %v", b, err)
		}
	}
	return a
}

// rpc sends a well-formed request of method with params (a JSON object's members) and
// the capabilities caps.
func (tp *testPeer) rpc(method, name, params, caps string) answer {
	tp.t.Helper()
	if params != "" {
		params += ","
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":%q,"params":{%s"_meta":{"io.modelcontextprotocol/protocolVersion":%q,"io.modelcontextprotocol/clientCapabilities":%s}}}`,
		method, params, protocolVersion, caps)
	return tp.post(method, name, body, nil)
}

func (tp *testPeer) call(tool, args, caps string) answer {
	tp.t.Helper()
	return tp.rpc("tools/call", tool, fmt.Sprintf(`"name":%q,"arguments":%s`, tool, args), caps)
}

func (tp *testPeer) get(id string) answer {
	tp.t.Helper()
	return tp.rpc("tasks/get", id, fmt.Sprintf(`"taskId":%q`, id), tasksOnly)
}

// waitStatus polls tasks/get until the task has status want (bounded).
func (tp *testPeer) waitStatus(id, want string) answer {
	tp.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		a := tp.get(id)
		if a.str("status") == want || time.Now().After(deadline) {
			if got := a.str("status"); got != want {
				tp.t.Fatalf("task %s: status %q after %s, want %q (%+v)", id, got, waitLimit, want, a)
			}
			return a
		}
		time.Sleep(10 * time.Millisecond) // a poll interval, not a wait for an event
	}
}

func TestAdmissionRefusals(t *testing.T) {
	tp := newTestPeer(t)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `}}`
	for _, c := range []struct {
		name, method, body string
		hdr                map[string]string
		status, code       int
	}{
		{"malformed JSON", "tools/list", `{"jsonrpc":`, nil, 400, codeParse},
		{"a batch", "tools/list", `[` + list + `]`, nil, 400, codeInvalidRequest},
		{"a member named twice", "tools/list", `{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tasks/get","params":{` + meta + `}}`, nil, 400, codeInvalidRequest},
		{"an oddly cased member", "tools/list", `{"jsonrpc":"2.0","id":1,"Method":"tools/list","params":{` + meta + `}}`, nil, 400, codeInvalidRequest},
		{"a null id", "tools/list", `{"jsonrpc":"2.0","id":null,"method":"tools/list","params":{` + meta + `}}`, nil, 400, codeInvalidRequest},
		{"no version header", "tools/list", list, map[string]string{"MCP-Protocol-Version": ""}, 400, codeHeaderMismatch},
		{"another version", "tools/list", list, map[string]string{"MCP-Protocol-Version": "2025-11-25"}, 400, codeUnsupportedVersion},
		{"Mcp-Method differs", "tools/list", list, map[string]string{"Mcp-Method": "tools/call"}, 400, codeHeaderMismatch},
		{"Mcp-Method in another case", "tools/list", list, map[string]string{"Mcp-Method": "Tools/List"}, 400, codeHeaderMismatch},
		{"no Mcp-Name on tools/call", "tools/call", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"name":"x"},` + meta + `}}`, nil, 400, codeHeaderMismatch},
		{"an unknown method", "tasks/list", `{"jsonrpc":"2.0","id":1,"method":"tasks/list","params":{` + meta + `}}`, nil, 404, codeMethodNotFound},
		{"no _meta", "tools/list", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil, 400, codeInvalidParams},
		{"_meta on another version", "tools/list", strings.Replace(list, `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`, `"io.modelcontextprotocol/protocolVersion":"2025-11-25"`, 1), nil, 400, codeHeaderMismatch},
		{"a body over the bound", "tools/list", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"` + strings.Repeat("x", maxBody) + `",` + meta + `}}`, nil, 413, codeInvalidRequest},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := tp.post(c.method, "", c.body, c.hdr)
			if a.status != c.status || a.code() != c.code {
				t.Errorf("HTTP %d, code %d; want HTTP %d, code %d (%+v)", a.status, a.code(), c.status, c.code, a.Error)
			}
		})
	}
	if a := tp.post("notifications/initialized", "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil); a.status != http.StatusAccepted {
		t.Errorf("a notification: HTTP %d, want 202", a.status)
	}
	resp, err := tp.srv.Client().Get(tp.srv.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: HTTP %d, want 405", resp.StatusCode)
	}
	// Mcp-Name may come with surrounding whitespace, or Base64 under the sentinel.
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"name":"ü"},` + meta + `}}`
	for _, name := range []string{" greet\t", "=?base64?Z3JlZXQ=?="} {
		if a := tp.post("tools/call", name, body, nil); a.Error != nil {
			t.Errorf("Mcp-Name %q: %+v", name, a.Error)
		}
	}
}

func TestTaskGating(t *testing.T) {
	tp := newTestPeer(t)
	a := tp.call("failing_job", `{}`, elicitOnly)
	if a.code() != codeMissingCapability || !bytes.Contains(a.Error.Data, []byte(`"io.modelcontextprotocol/tasks":{}`)) {
		t.Errorf("a required-task tool without the extension: %+v, want -32021 naming the extension", a.Error)
	}
	if a := tp.rpc("tasks/get", "x", `"taskId":"x"`, elicitOnly); a.code() != codeMissingCapability {
		t.Errorf("tasks/get without the extension: %+v, want -32021", a.Error)
	}
	if a := tp.call("confirm_delete", `{"filename":"f"}`, tasksOnly); a.code() != codeMissingCapability {
		t.Errorf("a task that would ask, for a caller without elicitation: %+v, want -32021", a.Error)
	}
	if a := tp.call("slow_compute", `{"seconds":0}`, noCaps); a.str("resultType") != "complete" || a.Result["taskId"] != nil {
		t.Errorf("slow_compute without the extension: %+v, want a result within the request", a)
	}
	if a := tp.call("slow_compute", `{"seconds":"a lot"}`, withTasks); a.code() != codeInvalidParams {
		t.Errorf("bad arguments: %+v, want -32602 before any task", a)
	}
	if a := tp.get("never-issued"); a.code() != codeInvalidParams {
		t.Errorf("an unknown task: %+v, want -32602", a.Error)
	}
}

func TestTaskInputPartialUpdates(t *testing.T) {
	tp := newTestPeer(t)
	created := tp.call("multi_input", `{}`, withTasks)
	id := created.str("taskId")
	if created.str("resultType") != "task" || id == "" || created.Result["inputRequests"] != nil {
		t.Fatalf("multi_input: %+v, want a CreateTaskResult without inputRequests", created)
	}
	var reqs map[string]json.RawMessage
	a := tp.waitStatus(id, statusInputRequired)
	if err := json.Unmarshal(a.Result["inputRequests"], &reqs); err != nil || len(reqs) != 2 {
		t.Fatalf("inputRequests %s, want 2", a.Result["inputRequests"])
	}
	update := func(responses string) answer {
		return tp.rpc("tasks/update", id, fmt.Sprintf(`"taskId":%q,"inputResponses":%s`, id, responses), withTasks)
	}
	if a := update(`{"never-asked":{"action":"accept"},"first":{"action":"accept","content":{"name":"a"}}}`); a.str("resultType") != "complete" || len(a.Result) != 1 {
		t.Fatalf("partial update: %+v, want an empty ack", a)
	}
	a = tp.get(id)
	reqs = nil
	_ = json.Unmarshal(a.Result["inputRequests"], &reqs)
	if a.str("status") != statusInputRequired || len(reqs) != 1 || reqs["second"] == nil {
		t.Fatalf("after the first answer: status %q, inputRequests %s; want input_required with second only", a.str("status"), a.Result["inputRequests"])
	}
	if a := update(`"not an object"`); a.code() != codeInvalidParams {
		t.Errorf("inputResponses not an object: %+v, want -32602", a.Error)
	}
	update(`{"second":{"action":"accept","content":{"name":"b"}},"first":{"action":"accept","content":{"name":"again"}}}`)
	a = tp.waitStatus(id, statusCompleted)
	if !bytes.Contains(a.Result["result"], []byte("got a and b")) {
		t.Errorf("result %s, want the two answers (the repeated one ignored)", a.Result["result"])
	}
}

func TestTaskCancelAndFailure(t *testing.T) {
	tp := newTestPeer(t)
	id := tp.call("slow_compute", `{"seconds":300}`, withTasks).str("taskId")
	for range 2 { // the second on a terminal task: the same ack
		if a := tp.rpc("tasks/cancel", id, fmt.Sprintf(`"taskId":%q`, id), tasksOnly); a.str("resultType") != "complete" || len(a.Result) != 1 {
			t.Fatalf("cancel: %+v, want an empty ack", a)
		}
		if got := tp.get(id).str("status"); got != statusCancelled {
			t.Fatalf("after cancel: status %q, want cancelled", got)
		}
	}
	failed := tp.waitStatus(tp.call("protocol_error_job", `{}`, withTasks).str("taskId"), statusFailed)
	if failed.Result["result"] != nil || !bytes.Contains(failed.Result["error"], []byte(`"code":-32603`)) {
		t.Errorf("a panicking body: %+v, want failed with a -32603 error and no result", failed.Result)
	}
}

func TestTaskBounds(t *testing.T) {
	tp := newTestPeer(t)
	tp.p.tasks.ttl = 50 * time.Millisecond
	id := tp.call("slow_compute", `{"seconds":0}`, withTasks).str("taskId")
	deadline := time.Now().Add(waitLimit)
	for tp.get(id).code() != codeInvalidParams {
		if time.Now().After(deadline) {
			t.Fatalf("task %s still readable %s after its TTL of 50ms", id, waitLimit)
		}
		time.Sleep(10 * time.Millisecond)
	}
	tp.p.tasks.ttl, tp.p.tasks.max = taskTTL, 20
	for i := range 20 {
		if a := tp.call("slow_compute", `{"seconds":300}`, withTasks); a.Error != nil {
			t.Fatalf("task %d: %+v", i, a.Error)
		}
	}
	if a := tp.call("slow_compute", `{"seconds":300}`, withTasks); a.code() != codeInternal {
		t.Errorf("task 21: %+v, want -32603 (the bound of 20)", a)
	}
}

func TestMultiRoundTripWithoutTasks(t *testing.T) {
	tp := newTestPeer(t)
	round1 := tp.call("confirm_delete", `{"filename":"f"}`, elicitOnly)
	if round1.str("resultType") != "input_required" || round1.Result["inputRequests"] == nil {
		t.Fatalf("round 1: %+v, want input_required", round1)
	}
	state := round1.str("requestState")
	params := `"name":"confirm_delete","arguments":{"filename":"f"},"inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}},"requestState":%q`
	if a := tp.rpc("tools/call", "confirm_delete", fmt.Sprintf(params, "forged"), elicitOnly); a.code() != codeInvalidParams {
		t.Errorf("a forged requestState: %+v, want -32602", a.Error)
	}
	a := tp.rpc("tools/call", "confirm_delete", fmt.Sprintf(params, state), elicitOnly)
	if a.str("resultType") != "complete" || !bytes.Contains(a.Result["content"], []byte("deleted f")) {
		t.Errorf("round 2: %+v, want the deletion", a)
	}
	if a := tp.call("confirm_delete", `{"filename":"f"}`, noCaps); a.code() != codeMissingCapability {
		t.Errorf("without elicitation: %+v, want -32021", a.Error)
	}
	composed := tp.call("test_tool_with_task", `{}`, withTasks)
	if composed.str("resultType") != "input_required" || composed.Result["taskId"] != nil {
		t.Fatalf("test_tool_with_task round 1: %+v, want input_required and no task", composed)
	}
}

// TestTaskConcurrentClients: polls, answers (right, repeated and unknown keys) and a
// cancel racing on one task leave it in one terminal state, consistently shown.
func TestTaskConcurrentClients(t *testing.T) {
	tp := newTestPeer(t)
	id := tp.call("multi_input", `{}`, withTasks).str("taskId")
	tp.waitStatus(id, statusInputRequired)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 10 {
				switch (i + j) % 4 {
				case 0:
					tp.get(id)
				case 1:
					tp.rpc("tasks/update", id, fmt.Sprintf(`"taskId":%q,"inputResponses":{"first":{"action":"accept","content":{"name":"x"}}}`, id), withTasks)
				case 2:
					tp.rpc("tasks/update", id, fmt.Sprintf(`"taskId":%q,"inputResponses":{"second":{"action":"decline"},"bogus":1}`, id), withTasks)
				case 3:
					if i == 0 {
						tp.rpc("tasks/cancel", id, fmt.Sprintf(`"taskId":%q`, id), tasksOnly)
					}
				}
			}
		}()
	}
	wg.Wait()
	a := tp.get(id)
	switch a.str("status") {
	case statusCompleted:
		if a.Result["result"] == nil || a.Result["error"] != nil {
			t.Errorf("completed without its result alone: %+v", a.Result)
		}
	case statusCancelled, statusWorking:
		if a.Result["result"] != nil || a.Result["inputRequests"] != nil {
			t.Errorf("%s with a payload: %+v", a.str("status"), a.Result)
		}
	default:
		t.Errorf("after both answers and a cancel: status %q (%+v)", a.str("status"), a.Result)
	}
}
