package e2e

// Isolation between sessions: tasks that run side by side see only their own servers, and
// a session id is no credential (docs/auth.md, docs/security.md).

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/auth"
)

// isolationRounds is how many rounds each concurrent TypeScript client runs.
const isolationRounds = 20

// TestParallelTaskIsolation: one gateway (auth none), agent a1 with everything, filesystem
// and memory; task-a gets everything, task-b filesystem and memory. TypeScript-SDK clients
// of both tasks run at the same time, 20 rounds each: every list shows only the task's own
// tools, every call of the other task's tools fails exactly like a name that never existed
// (-32602), the own tools work. The audit log holds each denial with tool, agent, task and
// session. Prompts, resources, templates and completions are isolated too. A task created
// through the admin API scopes a session (and changing it later does not change that
// session); an unknown task, a task of another agent, a disabled agent and an unknown
// executor are 403.
func TestParallelTaskIsolation(t *testing.T) {
	needGatewayBin(t)
	nodeBinPath := node(t)
	everything := serverEverythingScript(t)
	fsScript := npmServerScript(t, "server-filesystem")
	memScript := npmServerScript(t, "server-memory")

	work := t.TempDir()
	allowed := filepath.Join(work, "allowed")
	if err := os.MkdirAll(allowed, 0o755); err != nil {
		t.Fatal(err)
	}
	memFile := filepath.Join(work, "memory.jsonl")
	g := startGateway(t, `
log: {level: info, format: text}
upstream: {call_timeout: 60s}
servers:
  everything:
    type: stdio
    command: `+yamlQuote(nodeBinPath)+`
    args: [`+yamlQuote(everything)+`]
  filesystem:
    type: stdio
    command: `+yamlQuote(nodeBinPath)+`
    args: [`+yamlQuote(fsScript)+`, `+yamlQuote(allowed)+`]
  memory:
    type: stdio
    command: `+yamlQuote(nodeBinPath)+`
    args: [`+yamlQuote(memScript)+`]
    env: {MEMORY_FILE_PATH: `+yamlQuote(memFile)+`}
agents:
  a1:
    servers: [everything, filesystem, memory]
  a2:
    servers: [memory]
  a3:
    enabled: false
    servers: [memory]
tasks:
  task-a: {enabled_mcp_servers: [everything]}
  task-b: {enabled_mcp_servers: [filesystem, memory]}
`)
	rz, err := getReadyz(g)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"everything", "filesystem", "memory"} {
		if u := rz.upstream(name); u == nil || u.State != "up" || u.Tools == 0 {
			t.Fatalf("upstream %s not up: %+v", name, u)
		}
	}

	type plan struct {
		task     string
		own      []string // prefixes of the task's own tools
		ownCalls []Step   // calls that must work
		foreign  []string // the other task's tools
		mustList []string // tools every list shows
	}
	plans := []plan{
		{
			task: "task-a", own: []string{"everything__"},
			ownCalls: []Step{{"op": "call", "name": "everything__echo", "args": map[string]any{"message": "from task-a"}}},
			foreign:  []string{"filesystem__list_allowed_directories", "memory__read_graph"},
			mustList: []string{"everything__echo", "everything__get-sum"},
		},
		{
			task: "task-b", own: []string{"filesystem__", "memory__"},
			ownCalls: []Step{
				{"op": "call", "name": "filesystem__list_allowed_directories", "args": map[string]any{}},
				{"op": "call", "name": "memory__read_graph", "args": map[string]any{}},
			},
			foreign:  []string{"everything__echo", "everything__get-sum"},
			mustList: []string{"filesystem__list_allowed_directories", "filesystem__read_text_file", "memory__read_graph"},
		},
	}
	// Each round: list, the own calls, the foreign calls, a name that never existed.
	stepsFor := func(p plan) []Step {
		var steps []Step
		for r := 0; r < isolationRounds; r++ {
			steps = append(steps, Step{"op": "list"})
			steps = append(steps, p.ownCalls...)
			for _, f := range p.foreign {
				args := map[string]any{"message": "leak?"}
				if strings.HasSuffix(f, "get-sum") {
					args = map[string]any{"a": 1, "b": 2}
				}
				steps = append(steps, Step{"op": "call", "name": f, "args": args})
			}
			steps = append(steps, Step{"op": "call", "name": fmt.Sprintf("nosuch__never-existed-%d", r), "args": map[string]any{}})
		}
		return steps
	}

	const clientsPerTask = 2
	type outcome struct {
		p      plan
		tag    string
		steps  []Step
		rep    *ClientReport
		stderr string
		err    error
	}
	var outs []*outcome
	for _, p := range plans {
		for i := 0; i < clientsPerTask; i++ {
			outs = append(outs, &outcome{p: p, tag: fmt.Sprintf("%s-%d", p.task, i), steps: stepsFor(p)})
		}
	}
	env := nodeEnv(t)
	e2e := e2eDir(t)
	stepsDir := t.TempDir()
	start := time.Now()
	var wg sync.WaitGroup
	for _, o := range outs {
		wg.Add(1)
		go func(o *outcome) {
			defer wg.Done()
			o.rep, o.stderr, o.err = runAggregateClientAsync(nodeBinPath, e2e, env, g.URL, o.steps,
				[]string{"X-Agent-ID: a1", "X-Task-ID: " + o.p.task}, 120*time.Second, stepsDir, o.tag)
		}(o)
	}
	wg.Wait()
	t.Logf("%d concurrent TS clients × %d rounds took %s", len(outs), isolationRounds, time.Since(start).Round(time.Millisecond))

	sessionTask := map[string]string{}
	for _, o := range outs {
		if o.err != nil {
			t.Errorf("%s: %v\nstderr:\n%s", o.tag, o.err, o.stderr)
			continue
		}
		rep := o.rep
		if !rep.OK {
			t.Errorf("%s: client failed: %+v\nstderr:\n%s", o.tag, rep.Error, o.stderr)
			continue
		}
		sessionTask[rep.SessionID] = o.p.task
		checkOwnTools := func(label string, names []string) {
			if len(names) == 0 {
				t.Errorf("%s %s: no tools", o.tag, label)
			}
			for _, n := range names {
				ok := gatewayOwnTool(n) // the gateway's own list tool of a thin or search list
				for _, pre := range o.p.own {
					ok = ok || strings.HasPrefix(n, pre)
				}
				if !ok {
					t.Errorf("%s %s: tool %q leaked from outside %s", o.tag, label, n, o.p.task)
				}
			}
			for _, pre := range o.p.own {
				if withPrefix(names, pre) == 0 {
					t.Errorf("%s %s: no %s* tool: %v", o.tag, label, pre, names)
				}
			}
		}
		checkOwnTools("initial list", rep.Tools)
		sizes := map[int]int{}
		if len(rep.Results) != len(o.steps) {
			t.Errorf("%s: %d results for %d steps", o.tag, len(rep.Results), len(o.steps))
			continue
		}
		var bogus *ClientError
		for i, st := range o.steps {
			r := rep.Results[i]
			name, _ := st["name"].(string)
			switch {
			case st["op"] == "list":
				var l struct {
					Tools []string `json:"tools"`
				}
				if !r.OK || json.Unmarshal(r.Result, &l) != nil {
					t.Errorf("%s step %d list: %+v", o.tag, i, r.Error)
					continue
				}
				// The npm server-everything registers some tools only for clients with
				// sampling, elicitation or roots, so the catalogue may change once this
				// session's own instance starts: the list may shrink, never leak.
				checkOwnTools(fmt.Sprintf("step %d list", i), l.Tools)
				for _, must := range o.p.mustList {
					if !slices.Contains(l.Tools, must) {
						t.Errorf("%s step %d list lacks %s: %v", o.tag, i, must, l.Tools)
					}
				}
				sizes[len(l.Tools)]++
			case strings.HasPrefix(name, "nosuch__"):
				if r.OK || r.Error == nil || r.Error.Code != -32602 {
					t.Errorf("%s step %d %s: want -32602, got ok=%v error=%+v result=%s", o.tag, i, name, r.OK, r.Error, r.Result)
					continue
				}
				bogus = r.Error
				bogus.Message = strings.ReplaceAll(bogus.Message, name, "<TOOL>")
			case slices.Contains(o.p.foreign, name):
				if r.OK || r.Error == nil {
					t.Errorf("%s step %d: the other task's %s answered: %s", o.tag, i, name, r.Result)
					continue
				}
				if r.Error.Code != -32602 {
					t.Errorf("%s step %d %s: code %d, want -32602: %+v", o.tag, i, name, r.Error.Code, r.Error)
				}
				// The same error as a missing name, the name aside: the next step is the
				// never-existing name of this round; compare with it.
				next := rep.Results[i+len(o.p.foreign)-slices.Index(o.p.foreign, name)]
				nextName := o.steps[i+len(o.p.foreign)-slices.Index(o.p.foreign, name)]["name"].(string)
				if next.Error != nil {
					want := strings.ReplaceAll(next.Error.Message, nextName, "<TOOL>")
					got := strings.ReplaceAll(r.Error.Message, name, "<TOOL>")
					if got != want || string(r.Error.Data) != string(next.Error.Data) {
						t.Errorf("%s step %d: hidden %s answers %q (data %s), a missing tool %q (data %s): distinguishable",
							o.tag, i, name, got, r.Error.Data, want, next.Error.Data)
					}
				}
			default: // own call
				text, isErr := toolResultText(r.Result)
				if !r.OK || isErr {
					t.Errorf("%s step %d own call %s: ok=%v error=%+v result=%s", o.tag, i, name, r.OK, r.Error, r.Result)
					continue
				}
				switch name {
				case "everything__echo":
					if !strings.Contains(text, "from task-a") {
						t.Errorf("%s step %d echo: %q", o.tag, i, text)
					}
				case "filesystem__list_allowed_directories":
					if !strings.Contains(text, filepath.Base(allowed)) {
						t.Errorf("%s step %d list_allowed_directories: %q", o.tag, i, text)
					}
				}
			}
		}
		if bogus == nil {
			t.Errorf("%s: no never-existing tool error seen", o.tag)
		} else {
			t.Logf("%s: session %s, %d tools at first, list sizes %v, notifications %v, unknown-tool error %+v",
				o.tag, rep.SessionID, len(rep.Tools), sizes, rep.Notifications, *bogus)
		}
	}
	if t.Failed() {
		return
	}

	// The audit log has every denial: kind denial, the tool, the agent, the task, the
	// session. Each foreign tool was refused isolationRounds times per session.
	auditPath := filepath.Join(g.StateDir, "audit.jsonl")
	wantDenials := 0
	for _, o := range outs {
		wantDenials += isolationRounds * (len(o.p.foreign) + 1)
	}
	desc, ok := waitFor(10*time.Second, func() (bool, string) {
		n := countAudit(readAudit(t, auditPath), func(l auditLine) bool { return l.Kind == "denial" })
		return n >= wantDenials, fmt.Sprintf("%d denial lines, want %d", n, wantDenials)
	})
	if !ok {
		t.Fatalf("audit log: %s", desc)
	}
	// That no other line is there can be checked only once no line can come any more:
	// at the end of the test, with the gateway stopped (auditWhenStopped).
	checkAuditLines := func(lines []auditLine) {
		for _, o := range outs {
			sid := o.rep.SessionID
			for _, f := range o.p.foreign {
				n := countAudit(lines, func(l auditLine) bool {
					return l.Kind == "denial" && l.Tool == f && l.Agent == "a1" && l.Task == o.p.task && l.Session == sid
				})
				if n != isolationRounds {
					t.Errorf("audit: %d denials of %s for agent a1, %s, session %s; want %d", n, f, o.p.task, sid, isolationRounds)
				}
			}
			// Own calls are calls, never denials; a session's lines carry its own task only.
			for _, l := range lines {
				if l.Session != sid {
					continue
				}
				if l.Task != o.p.task || l.Agent != "a1" {
					t.Errorf("audit: a line of session %s (%s) says agent %q task %q: %+v", sid, o.p.task, l.Agent, l.Task, l)
				}
				if l.Kind == "call" && l.Outcome != "ok" {
					t.Errorf("audit: own call failed: %+v", l)
				}
				if l.Kind == "denial" && !slices.Contains(o.p.foreign, l.Tool) && !strings.HasPrefix(l.Tool, "nosuch__") {
					t.Errorf("audit: an own tool was denied: %+v", l)
				}
			}
			calls := countAudit(lines, func(l auditLine) bool { return l.Kind == "call" && l.Session == sid })
			if want := isolationRounds * len(o.p.ownCalls); calls != want {
				t.Errorf("audit: %d call lines for session %s, want %d", calls, sid, want)
			}
		}
	}
	if len(sessionTask) != len(outs) {
		t.Errorf("sessions: %v (want %d distinct)", sessionTask, len(outs))
	}

	// Prompts, resources, templates and completions are isolated like tools.
	crossTaskOthers(t, g)

	// A task created through the admin API (loopback, mode none: no token) scopes a session.
	body := `{"id":"task-c","enabled_mcp_servers":["memory"],"agent":"a1"}`
	a := rawRequest(t, http.MethodPost, g.Base+"/api/tasks", nil, body)
	if a.Status != http.StatusCreated {
		t.Fatalf("POST /api/tasks: %s", a)
	}
	if a := rawRequest(t, http.MethodGet, g.Base+"/api/tasks/task-c", nil, ""); a.Status != http.StatusOK || !strings.Contains(string(a.Body), "memory") {
		t.Errorf("GET /api/tasks/task-c: %s", a)
	}
	sc := openRawSession(t, g.URL, map[string]string{"X-Agent-ID": "a1", "X-Task-ID": "task-c"})
	names := slices.DeleteFunc(sc.tools(t), gatewayOwnTool) // auto may serve thin
	if len(names) == 0 || withPrefix(names, "memory__") != len(names) {
		t.Errorf("task-c (memory only) lists %v", names)
	}
	if r := sc.callTool(t, "everything__echo", map[string]any{"message": "x"}); r.Reply == nil || r.Reply.Error == nil || r.Reply.Error.Code != -32602 {
		t.Errorf("task-c calling everything__echo: %s", r)
	}
	// Changing the task later does not change the running session (its server set was
	// resolved at start); a new session gets the new set.
	if a := rawRequest(t, http.MethodPut, g.Base+"/api/tasks/task-c", nil, `{"enabled_mcp_servers":["filesystem"]}`); a.Status != http.StatusOK {
		t.Errorf("PUT /api/tasks/task-c: %s", a)
	}
	if got := slices.DeleteFunc(sc.tools(t), gatewayOwnTool); !slices.Equal(sortedCopy(got), sortedCopy(names)) {
		t.Errorf("task-c's running session changed with the task: %d tools, before %d", len(got), len(names))
	}
	if got := slices.DeleteFunc(openRawSession(t, g.URL, map[string]string{"X-Agent-ID": "a1", "X-Task-ID": "task-c"}).tools(t), gatewayOwnTool); len(got) == 0 || withPrefix(got, "filesystem__") != len(got) {
		t.Errorf("a new task-c session after the PUT lists %v, want filesystem only", got)
	}
	// File-managed tasks cannot be edited through the API; a cross-site page cannot use it.
	if a := rawRequest(t, http.MethodPut, g.Base+"/api/tasks/task-a", nil, `{"enabled_mcp_servers":["memory"]}`); a.Status != http.StatusConflict {
		t.Errorf("PUT on the file-managed task-a: %s, want 409", a)
	}
	if a := rawRequest(t, http.MethodPost, g.Base+"/api/tasks", map[string]string{"Origin": "http://evil.example"}, `{"id":"task-evil"}`); a.Status != http.StatusForbidden {
		t.Errorf("POST /api/tasks with a foreign Origin: %s, want 403", a)
	}
	// A disabled agent and an unknown executor: 403.
	if a := rawInitialize(t, g.URL, map[string]string{"X-Agent-ID": "a3"}); a.Status != http.StatusForbidden {
		t.Errorf("disabled agent a3: %s, want 403", a)
	}
	if a := rawInitialize(t, g.URL, map[string]string{"X-Agent-ID": "a1", "X-Executor-ID": "no-such-executor"}); a.Status != http.StatusForbidden || !strings.Contains(string(a.Body), "no-such-executor") {
		t.Errorf("unknown executor: %s, want 403 naming it", a)
	}
	if a := rawInitialize(t, g.URL, map[string]string{"X-Agent-ID": "nobody"}); a.Status != http.StatusUnauthorized {
		t.Errorf("unknown agent: %s, want 401", a)
	}
	// A task of a1 used by a2: 403.
	if a := rawInitialize(t, g.URL, map[string]string{"X-Agent-ID": "a2", "X-Task-ID": "task-c"}); a.Status != http.StatusForbidden {
		t.Errorf("agent a2 with a1's task-c: %s, want 403", a)
	}
	// An unknown task: 403 naming it, and no session.
	a = rawInitialize(t, g.URL, map[string]string{"X-Agent-ID": "a1", "X-Task-ID": "task-nope-42"})
	if a.Status != http.StatusForbidden || !strings.Contains(string(a.Body), "task-nope-42") || a.Header.Get("Mcp-Session-Id") != "" {
		t.Errorf("unknown task: %s (session %q), want 403 naming task-nope-42", a, a.Header.Get("Mcp-Session-Id"))
	}
	checkAuditLines(auditWhenStopped(t, g, auditPath))
}

// theftAttempts are the requests a thief makes with a stolen session id. Each must be 403
// and show nothing of the victim's tools.
func theftAttempts(t *testing.T, victim *rawSession, thief map[string]string, label string, victimTools []string) {
	t.Helper()
	over := map[string]string{}
	for k, v := range thief {
		over[k] = v
	}
	leaked := func(a httpAnswer) string {
		for _, tool := range victimTools {
			if strings.Contains(string(a.Body), tool) {
				return tool
			}
		}
		return ""
	}
	check := func(what string, a httpAnswer) {
		t.Helper()
		if a.Status != http.StatusForbidden {
			t.Errorf("%s: %s with the stolen session: %s, want 403", label, what, a)
		}
		if tool := leaked(a); tool != "" {
			t.Errorf("%s: %s: the refusal shows the victim's tool %s: %s", label, what, tool, a)
		}
	}
	check("POST tools/list", victim.request(t, over, "tools/list", map[string]any{}))
	check("POST tools/call", victim.request(t, over, "tools/call", map[string]any{"name": victimTools[0], "arguments": map[string]any{}}))
	check("POST ping", victim.request(t, over, "ping", map[string]any{}))
	getHdr := victim.headers(over)
	getHdr["Accept"] = "text/event-stream"
	check("GET stream", rawHeadOnly(t, http.MethodGet, victim.URL, getHdr))
	check("DELETE", rawRequest(t, http.MethodDelete, victim.URL, victim.headers(over), ""))
}

// TestSessionTheft: a session id is no credential. With API keys, agent bob's key (and a
// second key of alice's, another credential) on alice's session is 403 on POST, GET and
// DELETE, the refusal shows none of alice's tools, and alice's session still works. In mode
// none, X-Agent-ID b on a's session is 403.
func TestSessionTheft(t *testing.T) {
	needGatewayBin(t)
	everythingServer(t)
	t.Run("api_key", func(t *testing.T) {
		aliceKey, aliceHash := auth.NewAPIKey()
		alice2Key, alice2Hash := auth.NewAPIKey()
		bobKey, bobHash := auth.NewAPIKey()
		stateDir := t.TempDir() // shared by the restarted gateway (bolt store)
		cfg := `
state_dir: ` + yamlQuote(stateDir) + `
log: {level: info, format: text}
auth:
  mode: api_key
  api_keys:
    - {agent: alice, sha256: ` + aliceHash + `}
    - {agent: alice, sha256: ` + alice2Hash + `}
    - {agent: bob, sha256: ` + bobHash + `}
servers:
  everything: {type: stdio, command: {{everything_server}}}
  other: {type: stdio, command: {{everything_server}}}
agents:
  alice: {servers: [everything]}
  bob: {servers: [other]}
`
		g := startGateway(t, cfg)
		alice := openRawSession(t, g.URL, bearer(aliceKey))
		aliceTools := alice.tools(t)
		if len(aliceTools) == 0 || withPrefix(aliceTools, "everything__") != len(aliceTools) {
			t.Fatalf("alice's tools: %v", aliceTools)
		}
		bob := openRawSession(t, g.URL, bearer(bobKey))
		if bt := bob.tools(t); len(bt) == 0 || withPrefix(bt, "other__") != len(bt) {
			t.Fatalf("bob's tools: %v", bt)
		}
		theftAttempts(t, alice, bearer(bobKey), "bob's key", aliceTools)
		theftAttempts(t, alice, bearer(alice2Key), "alice's other key", aliceTools)
		// Bob naming alice in the header on top of his key: contradiction, 403.
		if a := alice.request(t, map[string]string{"Authorization": "Bearer " + bobKey, "X-Agent-ID": "alice"}, "tools/list", map[string]any{}); a.Status != http.StatusForbidden {
			t.Errorf("bob's key with X-Agent-ID alice: %s, want 403", a)
		}
		// No credential at all on alice's session: 401.
		if a := alice.request(t, map[string]string{"Authorization": ""}, "tools/list", map[string]any{}); a.Status != http.StatusUnauthorized || a.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("no key on alice's session: %s, want 401 with WWW-Authenticate", a)
		}
		// The legacy SSE front: alice's stream, bob's key on its /message endpoint.
		sseTheft(t, g, bearer(aliceKey), []map[string]string{bearer(bobKey), bearer(alice2Key)})
		// Alice's session survived every attempt, the DELETEs included.
		if got := alice.tools(t); !slices.Equal(sortedCopy(got), sortedCopy(aliceTools)) {
			t.Errorf("alice's tools after the attempts: %v, before %v", got, aliceTools)
		}
		r := alice.callTool(t, "everything__test_simple_text", nil)
		if r.Reply == nil || r.Reply.Error != nil {
			t.Fatalf("alice's call after the attempts: %s", r)
		}
		if text, isErr := toolResultText(r.Reply.Result); r.Status != http.StatusOK || isErr || !strings.Contains(text, "simple text") {
			t.Errorf("alice's call after the attempts: %s", r)
		}

		// After a restart the session comes back from the store with its owner: still
		// alice's only.
		g.Stop()
		g2 := startGateway(t, cfg)
		revived := &rawSession{URL: g2.URL, Header: bearer(aliceKey), ID: alice.ID}
		revived.next.Store(100)
		if a := revived.request(t, bearer(bobKey), "tools/list", map[string]any{}); a.Status != http.StatusForbidden {
			t.Errorf("bob's key on alice's session after a restart: %s, want 403", a)
		}
		if got := revived.tools(t); !slices.Equal(sortedCopy(got), sortedCopy(aliceTools)) {
			t.Errorf("alice's session after a restart lists %v, before %v", got, aliceTools)
		}
	})
	t.Run("none", func(t *testing.T) {
		g := startGateway(t, `
log: {level: info, format: text}
servers:
  everything: {type: stdio, command: {{everything_server}}}
  other: {type: stdio, command: {{everything_server}}}
agents:
  a: {servers: [everything]}
  b: {servers: [other]}
`)
		sa := openRawSession(t, g.URL, map[string]string{"X-Agent-ID": "a"})
		aTools := sa.tools(t)
		if len(aTools) == 0 || withPrefix(aTools, "everything__") != len(aTools) {
			t.Fatalf("a's tools: %v", aTools)
		}
		theftAttempts(t, sa, map[string]string{"X-Agent-ID": "b"}, "X-Agent-ID b", aTools)
		sseTheft(t, g, map[string]string{"X-Agent-ID": "a"}, []map[string]string{{"X-Agent-ID": "b"}})
		if got := sa.tools(t); !slices.Equal(sortedCopy(got), sortedCopy(aTools)) {
			t.Errorf("a's tools after the attempts: %v, before %v", got, aTools)
		}
	})
}

// sseTheft opens a legacy SSE session as owner and posts to its /message endpoint as each
// thief (403 expected), then as the owner (202).
func sseTheft(t *testing.T, g *Gateway, owner map[string]string, thieves []map[string]string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.Base+"/sse", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range owner {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET /sse: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /sse: HTTP %d", resp.StatusCode)
	}
	endpoint := ""
	sc := bufio.NewScanner(resp.Body)
	for i := 0; i < 20 && endpoint == "" && sc.Scan(); i++ {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.Contains(d, "sessionId=") {
			endpoint = d
		}
	}
	if endpoint == "" {
		t.Fatalf("GET /sse: no endpoint event (%v)", sc.Err())
	}
	ping := `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}`
	for i, thief := range thieves {
		a := rawRequest(t, http.MethodPost, g.Base+endpoint, thief, ping)
		if a.Status != http.StatusForbidden || strings.Contains(string(a.Body), "everything__") {
			t.Errorf("SSE thief %d (%v) on %s: %s, want 403", i, redactHeaders(thief), endpoint, a)
		}
	}
	if a := rawRequest(t, http.MethodPost, g.Base+endpoint, owner, ping); a.Status != http.StatusAccepted {
		t.Errorf("SSE owner on %s: %s, want 202", endpoint, a)
	}
}

// crossTaskOthers: a task-b session sees none of task-a's prompts, resources and resource
// templates, and cannot get, read or complete them.
func crossTaskOthers(t *testing.T, g *Gateway) {
	t.Helper()
	sa := openRawSession(t, g.URL, map[string]string{"X-Agent-ID": "a1", "X-Task-ID": "task-a"})
	sb := openRawSession(t, g.URL, map[string]string{"X-Agent-ID": "a1", "X-Task-ID": "task-b"})
	list := func(s *rawSession, method, key, field string) []string {
		a := s.request(t, nil, method, map[string]any{})
		if a.Reply == nil || a.Reply.Error != nil {
			t.Fatalf("%s: %s", method, a)
		}
		var res map[string][]map[string]any
		_ = json.Unmarshal(a.Reply.Result, &res)
		var out []string
		for _, it := range res[key] {
			if v, ok := it[field].(string); ok {
				out = append(out, v)
			}
		}
		return out
	}
	promptsA := list(sa, "prompts/list", "prompts", "name")
	resA := list(sa, "resources/list", "resources", "uri")
	tmplA := list(sa, "resources/templates/list", "resourceTemplates", "uriTemplate")
	if len(promptsA) == 0 || len(resA) == 0 || len(tmplA) == 0 {
		t.Fatalf("task-a has prompts %v, resources %d, templates %v: the check needs some of each", promptsA, len(resA), tmplA)
	}
	for _, p := range promptsA {
		if !strings.HasPrefix(p, "everything__") {
			t.Errorf("task-a prompt %q is not everything's", p)
		}
	}
	promptsB := list(sb, "prompts/list", "prompts", "name")
	resB := list(sb, "resources/list", "resources", "uri")
	tmplB := list(sb, "resources/templates/list", "resourceTemplates", "uriTemplate")
	for _, p := range promptsB {
		if slices.Contains(promptsA, p) {
			t.Errorf("task-b lists task-a's prompt %s", p)
		}
	}
	for _, r := range resB {
		if slices.Contains(resA, r) {
			t.Errorf("task-b lists task-a's resource %s", r)
		}
	}
	for _, r := range tmplB {
		if slices.Contains(tmplA, r) {
			t.Errorf("task-b lists task-a's resource template %s", r)
		}
	}
	refused := func(what string, a httpAnswer) {
		t.Helper()
		if a.Status == http.StatusOK && a.Reply != nil && a.Reply.Error == nil {
			t.Errorf("task-b %s: answered %s", what, a)
		}
	}
	refused("prompts/get "+promptsA[0], sb.request(t, nil, "prompts/get", map[string]any{"name": promptsA[0], "arguments": map[string]any{}}))
	refused("resources/read "+resA[0], sb.request(t, nil, "resources/read", map[string]any{"uri": resA[0]}))
	refused("resources/subscribe "+resA[0], sb.request(t, nil, "resources/subscribe", map[string]any{"uri": resA[0]}))
	refused("completion/complete for "+promptsA[0], sb.request(t, nil, "completion/complete", map[string]any{
		"ref": map[string]any{"type": "ref/prompt", "name": promptsA[0]}, "argument": map[string]any{"name": "x", "value": ""}}))
	// A URI that only task-a's templates produce.
	tmpl := tmplA[0]
	uri := tmpl
	if i := strings.IndexByte(uri, '{'); i >= 0 {
		uri = uri[:i] + "1"
	}
	refused("resources/read "+uri+" (from template "+tmpl+")", sb.request(t, nil, "resources/read", map[string]any{"uri": uri}))
	refused("completion/complete for template "+tmpl, sb.request(t, nil, "completion/complete", map[string]any{
		"ref": map[string]any{"type": "ref/resource", "uri": tmpl}, "argument": map[string]any{"name": "id", "value": ""}}))
	// The same read works for task-a (so the refusal above is isolation, not a bad URI).
	if a := sa.request(t, nil, "resources/read", map[string]any{"uri": resA[0]}); a.Reply == nil || a.Reply.Error != nil {
		t.Errorf("task-a resources/read %s: %s", resA[0], a)
	}
}
