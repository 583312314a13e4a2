package e2e

// The adversarial suite: attacks that once worked against the gateway's isolation promise
// (an agent sees and runs only what it is allowed, and never sees another agent's results),
// each run against real upstreams (the npm server-everything over stdio, which reads one
// JSON-RPC message per line like every TypeScript SDK server, and the go-sdk
// everything-server) and each asserting that the attack was refused or neutralised. A
// failure names the attack that worked. docs/security.md describes each class.
//
//	make test-e2e E2E_ARGS='-run TestAdversarial -v'

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/auth"
)

// advSeparators are the raw line breaks an attacker can put between JSON tokens: LF splits
// a line for every line reader, CR for Node's readline and Python's universal newlines.
var advSeparators = []struct{ name, sep string }{{"LF", "\n"}, {"CR", "\r"}, {"CRLF", "\r\n"}}

// advSmuggle is a JSON value that, written with its raw line breaks to a line-framed
// upstream, puts complete requests for hidden on lines of their own: one with a string id
// the recorder recognises and one for each of ids (the upstream ids the gateway is about
// to use, so that a request that got through would answer someone's pending call).
func advSmuggle(sep, hidden, tag string, ids []int) string {
	reqs := []string{fmt.Sprintf(`{"jsonrpc":"2.0","id":"smuggled-%s","method":"tools/call","params":{"name":%q,"arguments":{"smuggled":%q}}}`, tag, hidden, tag)}
	for _, id := range ids {
		reqs = append(reqs, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{"smuggled":%q}}}`, id, hidden, tag))
	}
	return "[" + sep + strings.Join(reqs, sep+","+sep) + sep + "]"
}

func advIDs(from, to int) []int {
	var out []int
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// advSender sends one raw message (body) and returns the response to id (a raw JSON id;
// "" for a notification, which returns once the message was accepted).
type advSender func(body []byte, id string) (advMsg, []byte, error)

// advHTTPSender sends on a streamable HTTP session.
func advHTTPSender(s *advSession) advSender {
	return func(body []byte, id string) (advMsg, []byte, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		a, err := s.post(ctx, body)
		if err != nil {
			return advMsg{}, nil, err
		}
		if a.Status >= 500 {
			return advMsg{}, a.Body, fmt.Errorf("HTTP %d (a server error, not a refusal): %s", a.Status, advShort(a.Body, 300))
		}
		if id == "" {
			if a.Status != http.StatusAccepted {
				if r, ok := a.reply(nil); ok && r.Error != nil {
					return r, a.Body, nil
				}
				return advMsg{}, a.Body, fmt.Errorf("notification: %s, want 202 or a JSON-RPC error", a)
			}
			return advMsg{}, a.Body, nil
		}
		if r, ok := a.reply(json.RawMessage(id)); ok {
			return r, a.Body, nil
		}
		if r, ok := a.reply(json.RawMessage("null")); ok && r.Error != nil {
			return r, a.Body, nil
		}
		return advMsg{}, a.Body, fmt.Errorf("no JSON-RPC response to id %s: %s", id, a)
	}
}

// advLegacySender sends on a legacy SSE session: the POST is accepted, the answer comes
// on the event stream.
func advLegacySender(l *advLegacy) advSender {
	return func(body []byte, id string) (advMsg, []byte, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		a, err := advDo(ctx, http.MethodPost, l.Endpoint, l.Header, body)
		if err != nil {
			return advMsg{}, nil, err
		}
		if a.Status >= 500 {
			return advMsg{}, a.Body, fmt.Errorf("HTTP %d (a server error, not a refusal): %s", a.Status, advShort(a.Body, 300))
		}
		if a.Status != http.StatusAccepted {
			if r, ok := a.reply(nil); ok && r.Error != nil {
				return r, a.Body, nil
			}
			return advMsg{}, a.Body, fmt.Errorf("POST /message: %s", a)
		}
		if id == "" {
			return advMsg{}, a.Body, nil
		}
		r, ok := l.waitResponse(json.RawMessage(id), 20*time.Second)
		if !ok {
			return advMsg{}, nil, fmt.Errorf("no response to id %s on the event stream within 20 s", id)
		}
		return r, r.raw, nil
	}
}

// advTarget is an upstream under attack: the tool the agent may call (and how its answer
// looks), the tool it may not.
type advTarget struct {
	server  string // exposed prefix
	allowed string // upstream name of the allowed tool
	hidden  string // upstream name of the tool the smuggled requests ask for
	// allowedArgs and expect: a call of the allowed tool with a message, and its text.
	allowedArgs func(msg string) string
	expect      func(msg string) string
	npm         bool // the npm server-everything: prompts and completions too
	resources   bool // resource URIs route here (the first server in name order that lists them)
}

func advEchoTarget(server string, resources bool) advTarget {
	return advTarget{server: server, allowed: "echo", hidden: "get-env", npm: true, resources: resources,
		allowedArgs: func(msg string) string { return fmt.Sprintf(`{"message":%q}`, msg) },
		expect:      func(msg string) string { return "Echo: " + msg }}
}

// advGoTarget is the go-sdk everything-server: test_simple_text allowed (any object is
// valid input), test_image_content hidden.
func advGoTarget(server string) advTarget {
	return advTarget{server: server, allowed: "test_simple_text", hidden: "test_image_content",
		allowedArgs: func(msg string) string { return fmt.Sprintf(`{"note":%q}`, msg) },
		expect:      func(string) string { return "" }}
}

// advVariant is one way to carry a smuggled value: the message, its id ("" for a
// notification) and a check of a successful answer.
type advVariant struct {
	name  string
	body  string
	id    string
	check func(advMsg) error // nil: any result is fine
}

// advVariants builds every carrier of smug for target; id makes request ids unique.
func advVariants(tg advTarget, smug, tag string, id func() string, withGlobal bool) []advVariant {
	tool := tg.server + "__" + tg.allowed
	msg := "adv-" + tag
	args := strings.TrimSuffix(tg.allowedArgs(msg), "}")
	checkTool := func(m advMsg) error {
		text, isErr := toolResultText(m.Result)
		if isErr {
			return nil // refused as a tool error: fine
		}
		if want := tg.expect(msg); want != "" && text != want {
			return fmt.Errorf("the allowed call answered %q, want exactly %q", advShort([]byte(text), 300), want)
		}
		return nil
	}
	req := func(name, method, params string, check func(advMsg) error) advVariant {
		i := id()
		return advVariant{name: name, id: i, check: check,
			body: fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, i, method, params)}
	}
	vs := []advVariant{
		req("tools/call arguments", "tools/call", fmt.Sprintf(`{"name":%q,"arguments":%s,"x":%s}}`, tool, args, smug), checkTool),
		req("tools/call _meta without progress token", "tools/call", fmt.Sprintf(`{"name":%q,"arguments":%s},"_meta":{"x":%s}}`, tool, args, smug), checkTool),
		req("tools/call _meta with progress token", "tools/call", fmt.Sprintf(`{"name":%q,"arguments":%s},"_meta":{"progressToken":"p-%s","x":%s}}`, tool, args, tag, smug), checkTool),
		req("tools/call params member", "tools/call", fmt.Sprintf(`{"name":%q,"arguments":%s},"x":%s}`, tool, args, smug), checkTool),
	}
	i := id()
	vs = append(vs, advVariant{name: "envelope member", id: i, check: checkTool,
		body: fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"x":%s,"method":"tools/call","params":{"name":%q,"arguments":%s}}}`, i, smug, tool, args)})
	if tg.resources {
		const uri = "demo://resource/static/document/architecture.md"
		vs = append(vs,
			req("resources/read params", "resources/read", fmt.Sprintf(`{"uri":%q,"x":%s}`, uri, smug), nil),
			req("resources/subscribe params", "resources/subscribe", fmt.Sprintf(`{"uri":%q,"x":%s}`, uri, smug), nil),
			req("resources/unsubscribe params", "resources/unsubscribe", fmt.Sprintf(`{"uri":%q,"x":%s}`, uri, smug), nil),
		)
	}
	if tg.npm {
		prompt, completable := tg.server+"__args-prompt", tg.server+"__completable-prompt"
		vs = append(vs,
			req("prompts/get arguments", "prompts/get", fmt.Sprintf(`{"name":%q,"arguments":{"city":"Paris","x":%s}}`, prompt, smug), nil),
			req("prompts/get params member", "prompts/get", fmt.Sprintf(`{"name":%q,"arguments":{"city":"Paris"},"x":%s}`, prompt, smug), nil),
			req("completion/complete params member", "completion/complete", fmt.Sprintf(`{"ref":{"type":"ref/prompt","name":%q},"argument":{"name":"department","value":"E"},"x":%s}`, completable, smug), nil),
			req("completion/complete ref member", "completion/complete", fmt.Sprintf(`{"ref":{"type":"ref/prompt","name":%q,"x":%s},"argument":{"name":"department","value":"E"}}`, completable, smug), nil),
			req("completion/complete argument member", "completion/complete", fmt.Sprintf(`{"ref":{"type":"ref/prompt","name":%q},"argument":{"name":"department","value":"E","x":%s}}`, completable, smug), nil),
			req("completion/complete context", "completion/complete", fmt.Sprintf(`{"ref":{"type":"ref/prompt","name":%q},"argument":{"name":"name","value":"A"},"context":{"arguments":{"department":"Engineering","x":%s}}}`, completable, smug), nil),
		)
	}
	if withGlobal {
		vs = append(vs,
			req("logging/setLevel params", "logging/setLevel", fmt.Sprintf(`{"level":"debug","x":%s}`, smug), nil),
			advVariant{name: "notifications/roots/list_changed params",
				body: fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed","params":{"x":%s}}`, smug)},
			advVariant{name: "notifications/cancelled params",
				body: fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":987654,"reason":"x","x":%s}}`, smug)},
		)
	}
	return vs
}

// TestAdversarialNewlineSmuggling: an agent allowed only the echo tool of server-everything
// (and test_simple_text of the go-sdk everything-server) puts raw line breaks and whole
// requests for hidden tools (get-env, which prints the server's environment and so its
// canary) between the JSON tokens of every member the gateway forwards, over streamable
// HTTP and the legacy SSE front, to a per-session and a shared (stdio_proxy) instance.
// Each upstream runs behind a recorder of the exact lines it read: every line must be one
// JSON object, no line may call a tool the agent may not call, no answer may carry the
// canary, and the audit log may hold no call of a hidden tool. The gateway may run the
// call (with the line breaks neutralised) or refuse it with a JSON-RPC error.
func TestAdversarialNewlineSmuggling(t *testing.T) {
	needGatewayBin(t)
	rec := newAdvRecorder(t)
	script := serverEverythingScript(t)
	nodeBin := node(t)
	goServer := everythingServer(t)
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	targets := []advTarget{advEchoTarget("ev", true), advEchoTarget("evs", false), advGoTarget("gs")}
	allowedExposed := []string{"ev__echo", "evs__echo", "gs__test_simple_text",
		"ev__args-prompt", "evs__args-prompt", "ev__completable-prompt", "evs__completable-prompt"}
	g := startGatewayChecked(t, `
log: {level: debug, format: text}
upstream: {call_timeout: 20s}
auth: {audit: {path: `+yamlQuote(audit)+`}}
servers:
`+rec.serverYAML("ev", nodeBin, []string{script})+
		rec.serverYAML("evs", nodeBin, []string{script}, "mode: shared", "stdio_proxy: true")+
		rec.serverYAML("gs", goServer, nil)+`
agents:
  att:
    servers: [ev, evs, gs]
    tools: {allow: [`+strings.Join(allowedExposed, ", ")+`]}
`)
	hdr := map[string]string{"X-Agent-ID": "att"}
	s := advOpenSession(t, g.URL, hdr, rawProtocolVersion, "")
	tools := make([]string, 0)
	if r, _, err := s.call(context.Background(), "tools/list", map[string]any{}); err == nil && r.Error == nil {
		var res struct {
			Tools []struct{ Name string } `json:"tools"`
		}
		_ = json.Unmarshal(r.Result, &res)
		for _, tl := range res.Tools {
			tools = append(tools, tl.Name)
		}
	}
	slices.Sort(tools)
	if want := []string{"ev__echo", "evs__echo", "gs__test_simple_text"}; !slices.Equal(tools, want) {
		t.Fatalf("the agent's tools are %v, want exactly %v (the allow list must hide get-env)", tools, want)
	}
	// The hidden tool is refused when asked for directly: the premise of the attack.
	if _, _, err := s.callTool(context.Background(), "ev__get-env", nil); err == nil {
		t.Fatalf("a direct call of the hidden ev__get-env succeeded")
	}

	var seq atomic.Int64
	nextID := func() string { return fmt.Sprintf(`"att-%d"`, seq.Add(1)) }
	allowedUp := map[string][]string{}
	for _, tg := range targets {
		allowedUp[tg.server] = []string{tg.allowed}
	}
	var allLines []advRecLine
	var answers [][]byte
	refusals := map[string]int{} // JSON-RPC errors by message: refusing is allowed

	// flush calls the allowed tool of every target on send and waits until the recorder
	// holds those calls: every line sent before them has been read by then.
	flush := func(send advSender, tag string) {
		t.Helper()
		var wantMarks []string
		for _, tg := range targets {
			mark := "follow-" + tag + "-" + tg.server
			id := nextID()
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":%q,"arguments":%s}}`,
				id, tg.server+"__"+tg.allowed, tg.allowedArgs(mark))
			r, raw, err := send([]byte(body), id)
			answers = append(answers, raw)
			switch {
			case err != nil:
				t.Errorf("after %s: the next allowed call on %s failed: %v", tag, tg.server, err)
				continue
			case r.Error != nil:
				t.Errorf("after %s: the next allowed call on %s: JSON-RPC error %d %s", tag, tg.server, r.Error.Code, r.Error.Message)
				continue
			}
			text, isErr := toolResultText(r.Result)
			if want := tg.expect(mark); isErr || (want != "" && text != want) {
				t.Errorf("after %s: the next allowed call on %s answered %q (isError %v), want %q: an answer went to the wrong call",
					tag, tg.server, advShort([]byte(text), 300), isErr, want)
			}
			wantMarks = append(wantMarks, mark)
		}
		got := map[string]bool{}
		waitFor(5*time.Second, func() (bool, string) {
			for _, l := range rec.newLines(t) {
				allLines = append(allLines, l)
				for _, m := range wantMarks {
					if bytes.Contains(l.Text, []byte(m)) {
						got[m] = true
					}
				}
			}
			return len(got) == len(wantMarks), ""
		})
		if len(got) != len(wantMarks) {
			t.Errorf("after %s: the recorder did not see the follow-up calls within 5 s (saw %v)", tag, got)
		}
	}
	judge := func(label string, from int) {
		t.Helper()
		var allowedNames []string
		for _, a := range allowedUp {
			allowedNames = append(allowedNames, a...)
		}
		advReport(t, label, advJudge(allLines[from:], allowedNames, ""))
	}

	attack := func(front string, send advSender, tg advTarget, withGlobal bool) {
		for _, sp := range advSeparators {
			tag := fmt.Sprintf("%s-%s-%s", front, tg.server, sp.name)
			smug := advSmuggle(sp.sep, tg.hidden, tag, advIDs(1, 12))
			for _, v := range advVariants(tg, smug, tag, nextID, withGlobal) {
				label := fmt.Sprintf("%s over %s to %s, separator %s", v.name, front, tg.server, sp.name)
				from := len(allLines)
				r, raw, err := send([]byte(v.body), v.id)
				answers = append(answers, raw)
				switch {
				case err != nil:
					t.Errorf("%s: %v", label, err)
				case v.id != "" && r.Error != nil:
					refusals[fmt.Sprintf("%d %s", r.Error.Code, advOneLine(r.Error.Message, 120))]++
				case v.id != "" && v.check != nil:
					if cerr := v.check(r); cerr != nil {
						t.Errorf("%s: %v", label, cerr)
					}
				}
				if bytes.Contains(raw, []byte(rec.Canary)) {
					t.Errorf("ATTACK WORKED (%s): the answer carries the upstream's environment canary (the hidden tool ran): %s", label, advShort(raw, 600))
				}
				flush(send, tag+"-"+sanitize(v.name))
				judge(label, from)
				if !advGatewayAlive(t, g, label) {
					t.FailNow()
				}
			}
		}
	}

	httpSend := advHTTPSender(s)
	for i, tg := range targets {
		attack("streamable HTTP", httpSend, tg, i == 0)
	}
	legacy := advOpenLegacy(t, g.Base, hdr)
	legacySend := advLegacySender(legacy)
	for _, tg := range targets {
		attack("legacy SSE /message", legacySend, tg, tg.server == "ev")
	}
	for _, m := range legacy.messages() {
		answers = append(answers, m.raw)
	}

	for _, raw := range answers {
		if bytes.Contains(raw, []byte(rec.Canary)) {
			t.Errorf("ATTACK WORKED: a message the agent received carries the upstream's environment canary: %s", advShort(raw, 600))
			break
		}
	}
	// Every top-level request the upstreams read: nothing but allowed calls.
	calls := map[string]int{}
	for _, l := range allLines {
		var m struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(l.Text, &m) == nil && m.Method == "tools/call" {
			calls[m.Params.Name]++
		}
	}
	t.Logf("the upstreams read %d lines; tools/call by tool: %v", len(allLines), calls)
	for _, m := range sortedKeys(refusals) {
		t.Logf("refused %d times: %s", refusals[m], m)
	}
	if calls["echo"] == 0 || calls["test_simple_text"] == 0 {
		t.Errorf("the recorder saw no allowed calls (%v): it does not record what the upstreams read", calls)
	}

	lines := auditWhenStopped(t, g, audit)
	for _, l := range lines {
		if l.Kind == "call" && !slices.Contains(allowedExposed, l.Tool) {
			t.Errorf("ATTACK WORKED: the audit log holds a call of %q, which agent %q may not call: %+v", l.Tool, l.Agent, l)
		}
	}
	if n := countAudit(lines, func(l auditLine) bool { return l.Kind == "call" }); n == 0 {
		t.Errorf("the audit log holds no calls at all (%d lines): it is not being written", len(lines))
	}
}

// TestAdversarialForgedResultsSharedStdio: two agents share one server-everything process
// (stdio_proxy, mode shared). While the victim makes 200 echo calls with unique texts, 8 at
// a time, the attacker sends echo calls that smuggle requests for every upstream id the
// shared connection will use (1..800), each asking the upstream to echo "SPOOFED": had one
// reached the upstream on a line of its own, its answer would carry a victim's pending id.
// The victim must get exactly its own text for every call and lose none.
func TestAdversarialForgedResultsSharedStdio(t *testing.T) {
	needGatewayBin(t)
	rec := newAdvRecorder(t)
	g := startGatewayChecked(t, `
log: {level: info, format: text}
upstream: {call_timeout: 30s}
servers:
`+rec.serverYAML("evs", node(t), []string{serverEverythingScript(t)}, "mode: shared", "stdio_proxy: true")+`
agents:
  victim: {servers: [evs], tools: {allow: ["evs__echo"]}}
  attacker: {servers: [evs], tools: {allow: ["evs__echo"]}}
`)
	victim := advOpenSession(t, g.URL, map[string]string{"X-Agent-ID": "victim"}, rawProtocolVersion, "")
	attacker := advOpenSession(t, g.URL, map[string]string{"X-Agent-ID": "attacker"}, rawProtocolVersion, "")
	const spoof = "SPOOFED"
	const victimCalls, victimWorkers, attacks = 200, 8, 12

	// The attack messages, built once: ~100 KB each.
	attackBody := func(i int) []byte {
		sep := advSeparators[i%len(advSeparators)].sep
		var reqs []string
		for id := 1; id <= 800; id++ {
			reqs = append(reqs, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"message":%q}}}`, id, spoof))
		}
		smug := "[" + sep + strings.Join(reqs, sep+","+sep) + sep + "]"
		return []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"evs__echo","arguments":{"message":"attack-%d","x":%s}}}`, 1000+i, i, smug))
	}

	type outcome struct {
		want, got string
		err       error
	}
	results := make([]outcome, victimCalls)
	jobs := make(chan int)
	var wg sync.WaitGroup
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for w := 0; w < victimWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				want := fmt.Sprintf("victim-%d-%s", i, advRandom(4))
				text, _, err := victim.callTool(ctx, "evs__echo", map[string]any{"message": want})
				results[i] = outcome{want: "Echo: " + want, got: text, err: err}
			}
		}()
	}
	var attackErrs []string
	var amu sync.Mutex
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < attacks && ctx.Err() == nil; i++ {
			ans, err := attacker.post(ctx, attackBody(i))
			amu.Lock()
			switch {
			case err != nil:
				attackErrs = append(attackErrs, err.Error())
			case ans.Status >= 500:
				attackErrs = append(attackErrs, ans.String())
			}
			amu.Unlock()
			time.Sleep(30 * time.Millisecond)
		}
	}()
	for i := 0; i < victimCalls; i++ {
		select {
		case jobs <- i:
		case <-ctx.Done():
		}
	}
	close(jobs)
	wg.Wait()

	lost, wrong, spoofed := 0, 0, 0
	for i, r := range results {
		switch {
		case r.err != nil || r.want == "":
			lost++
			if lost <= 5 {
				t.Errorf("victim call %d lost its reply: %v", i, r.err)
			}
		case r.got != r.want:
			wrong++
			if strings.Contains(r.got, spoof) {
				if spoofed++; spoofed <= 5 {
					t.Errorf("ATTACK WORKED: victim call %d got the attacker's forged result %q (want %q)", i, advShort([]byte(r.got), 200), r.want)
				}
			} else if wrong <= 5 {
				t.Errorf("victim call %d got %q, want %q (another call's answer)", i, advShort([]byte(r.got), 200), r.want)
			}
		}
	}
	if lost+wrong > 0 {
		t.Errorf("victim: %d of %d calls lost their reply, %d got a wrong one (%d of them the attacker's forged %q)", lost, victimCalls, wrong, spoofed, spoof)
	} else {
		t.Logf("victim: all %d calls answered with their own text while the attacker sent %d forged batches", victimCalls, attacks)
	}
	for _, e := range attackErrs {
		t.Errorf("an attack message got a server error instead of an answer or a refusal: %s", e)
	}
	// The recorder: the shared upstream read no request of the attacker's making.
	var lines []advRecLine
	waitFor(3*time.Second, func() (bool, string) { lines = append(lines, rec.newLines(t)...); return false, "" })
	advReport(t, "forged requests for the victim's upstream ids", advJudge(lines, []string{"echo"}, spoof))
	t.Logf("the shared upstream read %d lines", len(lines))
	advGatewayAlive(t, g, "the forged-results attack")
}

// TestAdversarialRelatedMessagesSharedStdio: on shared stdio instances (server-everything
// from npm and the go-sdk everything-server, stdio_proxy) nothing ties a server-to-client
// request or a log line to a call. The attacker's calls make the upstreams ask for
// sampling and elicitation and emit log lines (at once, during the call, and every 5 s
// after it); the victim, which declared sampling, elicitation and roots, keeps calls in
// flight the whole time (a long operation with progress and a stream of echo calls) and
// holds a GET stream open. The victim must receive none of it; the attacker's calls must
// end promptly (the gateway refuses what it cannot route instead of leaving the upstream
// waiting); the victim's own progress still reaches it.
func TestAdversarialRelatedMessagesSharedStdio(t *testing.T) {
	needGatewayBin(t)
	g := startGatewayChecked(t, `
log: {level: debug, format: text}
upstream: {call_timeout: 20s}
servers:
  evs:
    type: stdio
    mode: shared
    stdio_proxy: true
    command: `+yamlQuote(node(t))+`
    args: [`+yamlQuote(serverEverythingScript(t))+`]
  gss:
    type: stdio
    mode: shared
    stdio_proxy: true
    command: `+yamlQuote(everythingServer(t))+`
agents:
  victim: {servers: [evs, gss]}
  attacker: {servers: [evs, gss]}
`)
	const victimToken = "victim-progress-token"
	victim := advOpenSession(t, g.URL, map[string]string{"X-Agent-ID": "victim"}, rawProtocolVersion,
		`{"sampling":{},"elicitation":{},"roots":{"listChanged":true}}`)
	attacker := advOpenSession(t, g.URL, map[string]string{"X-Agent-ID": "attacker"}, rawProtocolVersion, `{}`)
	var attackerTools []string
	if r, _, err := attacker.call(context.Background(), "tools/list", map[string]any{}); err == nil && r.Error == nil {
		var res struct {
			Tools []struct{ Name string } `json:"tools"`
		}
		_ = json.Unmarshal(r.Result, &res)
		for _, tl := range res.Tools {
			attackerTools = append(attackerTools, tl.Name)
		}
	}
	for _, need := range []string{"evs__trigger-sampling-request", "evs__trigger-elicitation-request", "evs__toggle-simulated-logging",
		"gss__test_sampling", "gss__test_elicitation", "gss__test_tool_with_logging"} {
		if !slices.Contains(attackerTools, need) {
			t.Fatalf("the shared upstreams do not offer %s (tools: %v): the attack cannot be run", need, attackerTools)
		}
	}
	metricsBefore, _ := getMetrics(g)
	unroutableBefore, haveMetric := advMetricSum(metricsBefore, "unroutable")

	getStream := advOpenStream(t, g.URL, victim.headers())
	if getStream.Status != http.StatusOK {
		t.Fatalf("victim GET stream: HTTP %d", getStream.Status)
	}
	var vmu sync.Mutex
	var victimMsgs []advMsg
	var victimErrs []string
	keep := func(a advAnswer, err error, what string) {
		vmu.Lock()
		defer vmu.Unlock()
		victimMsgs = append(victimMsgs, a.Msgs...)
		if err != nil {
			victimErrs = append(victimErrs, what+": "+err.Error())
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// The victim's long call: 9 s, a progress step a second.
	longDone := make(chan struct{})
	go func() {
		defer close(longDone)
		id := victim.newID()
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"evs__trigger-long-running-operation","arguments":{"duration":9,"steps":9},"_meta":{"progressToken":%q}}}`, id, victimToken)
		a, err := victim.post(ctx, []byte(body))
		if err == nil {
			if r, ok := a.reply(json.RawMessage(fmt.Sprint(id))); !ok {
				err = fmt.Errorf("no response: %s", a)
			} else if _, _, e := advToolText(r, a); e != nil {
				err = e
			} else if text, _ := toolResultText(r.Result); !strings.Contains(text, "Long running operation completed") {
				err = fmt.Errorf("unexpected result %q", text)
			}
		}
		keep(a, err, "the victim's long call")
	}()
	// The victim's stream of short calls on both shared upstreams, 4 at a time, so that
	// its calls are the newest in flight whenever an upstream message arrives.
	stopShort := make(chan struct{})
	var shortWG sync.WaitGroup
	var shortCalls atomic.Int64
	for w := 0; w < 4; w++ {
		shortWG.Add(1)
		go func(w int) {
			defer shortWG.Done()
			for i := 0; ; i++ {
				select {
				case <-stopShort:
					return
				default:
				}
				var (
					text string
					a    advAnswer
					err  error
					want string
				)
				if (i+w)%2 == 0 {
					msg := fmt.Sprintf("victim-%d-%d", w, i)
					text, a, err = victim.callTool(ctx, "evs__echo", map[string]any{"message": msg})
					want = "Echo: " + msg
				} else {
					text, a, err = victim.callTool(ctx, "gss__test_simple_text", nil)
				}
				if err == nil && want != "" && text != want {
					err = fmt.Errorf("answered %q, want %q", text, want)
				}
				keep(a, err, "a victim short call")
				shortCalls.Add(1)
				time.Sleep(5 * time.Millisecond)
			}
		}(w)
	}

	// The attacker.
	time.Sleep(500 * time.Millisecond)
	type attackCall struct {
		name    string
		args    map[string]any
		elapsed time.Duration
		text    string
		err     error
	}
	var calls []*attackCall
	if r, _, err := attacker.call(ctx, "logging/setLevel", map[string]any{"level": "debug"}); err != nil {
		t.Logf("attacker logging/setLevel: %v", err)
	} else if r.Error != nil {
		t.Logf("attacker logging/setLevel: %d %s", r.Error.Code, r.Error.Message)
	}
	if _, _, err := attacker.callTool(ctx, "evs__toggle-simulated-logging", nil); err != nil {
		t.Logf("attacker toggle-simulated-logging: %v", err)
	}
	if r, _, err := attacker.call(ctx, "resources/subscribe", map[string]any{"uri": "demo://resource/static/document/architecture.md"}); err != nil {
		t.Logf("attacker resources/subscribe: %v", err)
	} else if r.Error != nil {
		t.Logf("attacker resources/subscribe: %d %s", r.Error.Code, r.Error.Message)
	}
	for round := 0; round < 4; round++ {
		calls = append(calls,
			&attackCall{name: "evs__trigger-sampling-request", args: map[string]any{"prompt": fmt.Sprintf("ATTACKER-SAMPLING-%d", round)}},
			&attackCall{name: "evs__trigger-elicitation-request", args: map[string]any{}},
			&attackCall{name: "gss__test_sampling", args: map[string]any{"prompt": fmt.Sprintf("ATTACKER-GS-SAMPLING-%d", round)}},
			&attackCall{name: "gss__test_elicitation", args: map[string]any{"message": fmt.Sprintf("ATTACKER-GS-ELICIT-%d", round)}},
			&attackCall{name: "gss__test_tool_with_logging", args: map[string]any{}},
		)
	}
	var awg sync.WaitGroup
	for i, c := range calls {
		awg.Add(1)
		go func(c *attackCall) {
			defer awg.Done()
			cctx, ccancel := context.WithTimeout(ctx, 25*time.Second)
			defer ccancel()
			start := time.Now()
			c.text, _, c.err = attacker.callTool(cctx, c.name, c.args)
			c.elapsed = time.Since(start)
		}(c)
		if i%5 == 4 {
			time.Sleep(300 * time.Millisecond)
		}
	}
	awg.Wait()
	// The long call outlives the attacker's calls: the simulated log lines every 5 s now
	// find only the victim's calls in flight.
	select {
	case <-longDone:
	case <-time.After(30 * time.Second):
		t.Errorf("the victim's long call did not end within 30 s")
	}
	close(stopShort)
	shortWG.Wait()
	time.Sleep(500 * time.Millisecond)
	getStream.close()
	_, _, _ = attacker.callTool(context.Background(), "evs__toggle-simulated-logging", nil) // stop the interval

	// One line per attacking tool: how its calls ended and how long the slowest took.
	byTool := map[string][]*attackCall{}
	var names []string
	for _, c := range calls {
		if byTool[c.name] == nil {
			names = append(names, c.name)
		}
		byTool[c.name] = append(byTool[c.name], c)
	}
	for _, name := range names {
		var slowest time.Duration
		failed := 0
		for _, c := range byTool[name] {
			slowest = max(slowest, c.elapsed)
			if c.err != nil {
				failed++
			}
			if c.elapsed > 15*time.Second {
				t.Errorf("attacker's %s took %s: the upstream's request was neither refused nor answered (it went to a client that never answers)", c.name, c.elapsed.Round(time.Millisecond))
			}
			if c.err == nil && (strings.Contains(c.name, "sampling") || strings.Contains(c.name, "elicitation")) {
				t.Errorf("attacker's %s succeeded (%q): someone answered the upstream's request", c.name, advShort([]byte(c.text), 200))
			}
		}
		c := byTool[name][0]
		t.Logf("attacker %s: %d calls, %d failed, slowest %s; first: %s", name, len(byTool[name]), failed,
			slowest.Round(time.Millisecond), advOneLine(fmt.Sprintf("err=%v text=%q", c.err, c.text), 140))
	}
	all := append(victimMsgs, getStream.messages()...)
	progress := 0
	for _, m := range all {
		switch {
		case m.isRequest():
			t.Errorf("ATTACK WORKED: the victim received a %s request from a shared upstream although nothing ties it to the victim (another tenant's call caused it, or the upstream's own): %s", m.Method, m)
		case m.Method == "notifications/message":
			t.Errorf("ATTACK WORKED: the victim received a log line from a shared upstream that nothing ties to it (the attacker's): %s", m)
		case m.Method == "notifications/resources/updated":
			t.Errorf("ATTACK WORKED: the victim received a resource update of the attacker's subscription: %s", m)
		case m.Method == "notifications/progress":
			var p struct {
				ProgressToken any `json:"progressToken"`
			}
			_ = json.Unmarshal(m.Params, &p)
			if p.ProgressToken != victimToken {
				t.Errorf("ATTACK WORKED: the victim received progress for a token it never sent: %s", m)
			} else {
				progress++
			}
		}
		if bytes.Contains(m.raw, []byte("ATTACKER-")) {
			t.Errorf("ATTACK WORKED: a message the victim received carries the attacker's text: %s", m)
		}
	}
	for i, e := range victimErrs {
		if i == 5 {
			t.Errorf("… %d more victim errors", len(victimErrs)-5)
			break
		}
		t.Errorf("victim: %s", e)
	}
	t.Logf("victim: %d short calls, %d messages received, %d of its own progress notifications", shortCalls.Load(), len(all), progress)
	if progress == 0 {
		t.Errorf("the victim received none of its own progress notifications for its long call: certain routing is broken too")
	}
	metricsAfter, err := getMetrics(g)
	if err != nil {
		t.Errorf("metrics: %v", err)
	}
	if after, ok := advMetricSum(metricsAfter, "unroutable"); ok {
		t.Logf("unroutable messages counted: %.0f before, %.0f after", unroutableBefore, after)
		if after <= unroutableBefore {
			t.Errorf("the unroutable counter did not increase (%.0f before, %.0f after) although the attacker caused unroutable requests and log lines", unroutableBefore, after)
		}
	} else {
		t.Logf("no metric with \"unroutable\" in its name in /metrics (had one before: %v); behaviour checked only", haveMetric)
	}
	advGatewayAlive(t, g, "the related-messages attack")
}

// advMalformed are client messages that once crashed the daemon or could be read two ways.
// %ID% is replaced by a unique id per send; codes are the acceptable JSON-RPC error codes.
var advMalformed = []struct {
	name  string
	body  func(id string) []byte
	codes []int
	// mayAnswer: a valid message (too large for HTTP's body limit only); any answer will do.
	mayAnswer bool
}{
	{"non-string jsonrpc", advTmpl(`{"jsonrpc":2,"id":%ID%,"method":"ping"}`), []int{-32600}, false},
	{"non-string method", advTmpl(`{"jsonrpc":"2.0","id":%ID%,"method":7}`), []int{-32600}, false},
	{"invalid UTF-8 method, no id", advTmpl("{\"jsonrpc\":\"2.0\",\"method\":\"\x9c\"}"), []int{-32600}, false},
	{"invalid UTF-8 method", advTmpl("{\"jsonrpc\":\"2.0\",\"id\":%ID%,\"method\":\"\x9c\"}"), []int{-32600}, false},
	{"duplicate members", advTmpl(`{"jsonrpc":"2.0","id":%ID%,"method":"ping","method":"tools/call"}`), []int{-32600}, false},
	{"oddly cased members", advTmpl(`{"JSONRPC":"2.0","ID":%ID%,"Method":"ping"}`), []int{-32600}, false},
	{"deep nesting", advTmpl(`{"jsonrpc":"2.0","id":%ID%,"method":"ping","params":{"a":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}}`), []int{-32700, -32600}, false},
	{"not JSON", advTmpl(`{"jsonrpc":"2.0","id":%ID%,"method":`), []int{-32700}, false},
	{"10 MB unparseable line", func(id string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping","params":{"pad":"` + strings.Repeat("A", 10<<20) + `"`)
	}, []int{-32700}, false},
	{"10 MB ping", func(id string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping","params":{"pad":"` + strings.Repeat("A", 10<<20) + `"}}`)
	}, nil, true},
}

func advTmpl(s string) func(string) []byte {
	return func(id string) []byte { return []byte(strings.ReplaceAll(s, "%ID%", id)) }
}

// advLineTransport is the socket's line mode or the bridge: lines in, lines out.
type advLineTransport struct {
	name  string
	lines *advLines
	alive func() error // nil when every process of this transport is up
}

// TestAdversarialMalformedEnvelopes: each malformed message over HTTP POST /mcp (after a
// real initialize), the Unix socket's line mode and mcpgw-bridge's stdin gets a JSON-RPC
// error (-32700 unparseable, -32600 invalid request; over HTTP a 4xx, 413 past the body
// limit), and afterwards the gateway and the bridge are still up and a ping on the same
// transport works.
func TestAdversarialMalformedEnvelopes(t *testing.T) {
	needGatewayBin(t)
	stateDir := shortStateDir(t)
	g, sock := startBridgeGateway(t, stateDir, `
log: {level: info, format: text}
servers:
  gs: {type: stdio, command: `+yamlQuote(everythingServer(t))+`}
`)
	var seq atomic.Int64
	newID := func() string { return fmt.Sprint(5000 + seq.Add(1)) }

	// (a) HTTP.
	s := advOpenSession(t, g.URL, nil, rawProtocolVersion, "")
	t.Run("http", func(t *testing.T) {
		for _, c := range advMalformed {
			id := newID()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			a, err := s.post(ctx, c.body(id))
			cancel()
			switch {
			case err != nil:
				t.Errorf("%s over HTTP: no answer (%v): the request broke its handler", c.name, err)
			case c.mayAnswer:
				if a.Status != http.StatusOK && a.Status != http.StatusRequestEntityTooLarge {
					t.Errorf("%s over HTTP: %s, want 200 or 413", c.name, a)
				}
			case a.Status == http.StatusRequestEntityTooLarge:
				t.Logf("%s over HTTP: 413 (body limit)", c.name)
			default:
				r, ok := a.reply(nil)
				if a.Status < 400 || a.Status >= 500 || !ok || r.Error == nil || !slices.Contains(c.codes, r.Error.Code) {
					t.Errorf("%s over HTTP: %s, want a 4xx with a JSON-RPC error %v", c.name, a, c.codes)
				}
			}
			advPingHTTP(t, s, c.name)
			if !advGatewayAlive(t, g, c.name+" over HTTP") {
				t.FailNow()
			}
		}
	})

	// (b) The socket's line mode.
	t.Run("socket", func(t *testing.T) {
		conn, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatalf("dial %s: %v", sock, err)
		}
		defer conn.Close()
		l := newAdvLines("socket", conn, conn)
		if err := l.send([]byte(`{"mcpgw":"hello","version":1,"headers":{},"session":""}`)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := l.wait(0, 10*time.Second, func(b []byte) bool { return bytes.Contains(b, []byte(`"welcome"`)) }); err != nil {
			t.Fatalf("no welcome: %v%s", err, l.recent(5))
		}
		advLineSuite(t, g, advLineTransport{name: "socket line mode", lines: l}, newID)
	})

	// (c) The bridge's stdin.
	t.Run("bridge", func(t *testing.T) {
		if !advGatewayAlive(t, g, "the HTTP and socket cases") {
			t.FailNow()
		}
		cmd := exec.Command(bridgeBin(t), "--socket", sock, "--agent", "malformed-tester")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr lockedBuffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatalf("start mcpgw-bridge: %v", err)
		}
		pid := cmd.Process.Pid
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		t.Cleanup(func() {
			stdin.Close()
			select {
			case <-exited:
			case <-time.After(3 * time.Second):
				_ = syscall.Kill(-pid, syscall.SIGKILL)
				<-exited
			}
			if t.Failed() {
				t.Logf("--- mcpgw-bridge stderr ---\n%s", advShort([]byte(stderr.String()), 4000))
			}
		})
		l := newAdvLines("bridge", stdout, stdin)
		alive := func() error {
			if !pidAlive(pid) {
				return fmt.Errorf("mcpgw-bridge (pid %d) is gone", pid)
			}
			return nil
		}
		advLineSuite(t, g, advLineTransport{name: "mcpgw-bridge", lines: l, alive: alive}, newID)
	})
}

// advLineSuite initializes over a line transport, then sends every malformed message,
// each followed by a ping that must work.
func advLineSuite(t *testing.T, g *Gateway, tr advLineTransport, newID func() string) {
	l := tr.lines
	init := fmt.Sprintf(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"mcpgw-e2e-adversarial","version":"1.0.0"}}}`, rawProtocolVersion)
	from := l.mark()
	if err := l.send([]byte(init)); err != nil {
		t.Fatalf("%s: initialize: %v", tr.name, err)
	}
	if m, _, err := l.waitResponse(from, 30*time.Second, `"init"`); err != nil || m.Error != nil {
		t.Fatalf("%s: initialize: %v %v%s", tr.name, err, m, l.recent(5))
	}
	_ = l.send([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	for _, c := range advMalformed {
		id := newID()
		from := l.mark()
		if err := l.send(c.body(id)); err != nil {
			t.Errorf("%s over %s: write: %v", c.name, tr.name, err)
			advGatewayAlive(t, g, "the messages before "+c.name+" over "+tr.name)
			break
		}
		m, _, err := l.waitResponse(from, 30*time.Second, id, "null")
		switch {
		case err != nil:
			t.Errorf("%s over %s: no JSON-RPC answer: %v%s", c.name, tr.name, err, l.recent(3))
		case c.mayAnswer:
			t.Logf("%s over %s: %s", c.name, tr.name, advShort(m.raw, 200))
		case m.Error == nil || !slices.Contains(c.codes, m.Error.Code):
			t.Errorf("%s over %s: answered %s, want a JSON-RPC error %v", c.name, tr.name, advShort(m.raw, 300), c.codes)
		}
		ping := newID()
		from = l.mark()
		if err := l.send([]byte(`{"jsonrpc":"2.0","id":` + ping + `,"method":"ping"}`)); err != nil {
			t.Errorf("after %s over %s: ping: write: %v", c.name, tr.name, err)
			advGatewayAlive(t, g, c.name+" over "+tr.name)
			break
		}
		if p, _, err := l.waitResponse(from, 15*time.Second, ping); err != nil || p.Error != nil {
			t.Errorf("after %s over %s: ping failed: %v %v%s", c.name, tr.name, err, p, l.recent(3))
		}
		if tr.alive != nil {
			if err := tr.alive(); err != nil {
				t.Errorf("after %s: %v", c.name, err)
			}
		}
		if !advGatewayAlive(t, g, c.name+" over "+tr.name) {
			t.FailNow()
		}
	}
}

// advPingHTTP: a ping on the session must work.
func advPingHTTP(t *testing.T, s *advSession, after string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	r, a, err := s.call(ctx, "ping", map[string]any{})
	if err != nil || r.Error != nil {
		t.Errorf("after %s over HTTP: ping failed: %v %s %v", after, err, a, r)
	}
}

// advTooLarge is how an oversized upstream message must be reported.
var advTooLarge = regexp.MustCompile(`(?i)too large|too big|larger than|max_message_bytes|exceed`)

// TestAdversarialOversizedUpstreamLine: with upstream.max_message_bytes 65536, an echo of
// ~100 KB makes the upstream send a line over the limit: the call fails saying the message
// was too large, promptly, and the next small call works (the instance was restarted, not
// left jammed mid-line). Per-session and shared stdio instances of server-everything; a
// 30 KB echo (under the limit) works on both.
func TestAdversarialOversizedUpstreamLine(t *testing.T) {
	needGatewayBin(t)
	nodeBin, script := node(t), serverEverythingScript(t)
	g := startGatewayChecked(t, `
log: {level: info, format: text}
upstream: {max_message_bytes: 65536, call_timeout: 20s}
servers:
  ev:
    type: stdio
    command: `+yamlQuote(nodeBin)+`
    args: [`+yamlQuote(script)+`]
  evs:
    type: stdio
    mode: shared
    stdio_proxy: true
    command: `+yamlQuote(nodeBin)+`
    args: [`+yamlQuote(script)+`]
`)
	s := advOpenSession(t, g.URL, nil, rawProtocolVersion, "")
	for _, server := range []string{"ev", "evs"} {
		tool := server + "__echo"
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		mid := strings.Repeat("m", 30<<10)
		if text, _, err := s.callTool(ctx, tool, map[string]any{"message": mid}); err != nil || text != "Echo: "+mid {
			t.Errorf("%s: a 30 KB echo (under the limit) failed: %v (%d bytes back)", server, err, len(text))
		}
		big := strings.Repeat("B", 100<<10)
		start := time.Now()
		r, a, err := s.call(ctx, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{"message": big}})
		took := time.Since(start)
		switch {
		case err != nil:
			t.Errorf("%s: the oversized call got no JSON-RPC answer: %v", server, err)
		case r.Error != nil:
			if !advTooLarge.MatchString(r.Error.Message + string(r.Error.Data)) {
				t.Errorf("%s: the oversized call failed with %d %q, which does not say the message was too large", server, r.Error.Code, r.Error.Message)
			}
		default:
			text, isErr := toolResultText(r.Result)
			if !isErr {
				t.Errorf("%s: a 100 KB answer passed a 64 KiB upstream.max_message_bytes (%d bytes of text)", server, len(text))
			} else if !advTooLarge.MatchString(text) {
				t.Errorf("%s: the oversized call's error %q does not say the message was too large", server, advShort([]byte(text), 300))
			} else {
				t.Logf("%s: oversized call refused in %s: %q", server, took.Round(time.Millisecond), advShort([]byte(text), 200))
			}
		}
		_ = a
		if took > 15*time.Second {
			t.Errorf("%s: the oversized call took %s: the instance jammed until the call timeout", server, took.Round(time.Millisecond))
		}
		// The NEXT small call works: the instance was restarted, not left jammed mid-line.
		// Later tries (bounded) only tell a slow restart from a jammed instance.
		var first, last string
		worked := 0
		for i := 0; i < 20 && worked == 0 && ctx.Err() == nil; i++ {
			text, _, err := s.callTool(ctx, tool, map[string]any{"message": "small"})
			if err == nil && text == "Echo: small" {
				worked = i + 1
				break
			}
			last = fmt.Sprintf("%v %q", err, text)
			if i == 0 {
				first = last
			}
			time.Sleep(250 * time.Millisecond)
		}
		switch {
		case worked == 0:
			t.Errorf("%s: no small call worked after the oversized one (first: %s; last: %s): the instance is jammed", server, first, last)
		case worked > 1:
			t.Errorf("%s: the next small call after the oversized one failed (%s); only try %d (~%d ms later) worked: during the restart calls are refused instead of waiting for the new instance",
				server, first, worked, (worked-1)*250)
		default:
			t.Logf("%s: the next small call worked", server)
		}
		cancel()
	}
	advGatewayAlive(t, g, "the oversized upstream lines")
}

// TestAdversarialBearerAndProtocolVersion: with auth.mode api_key the Bearer scheme is
// matched case-insensitively (RFC 7235), a wrong key or another scheme is 401, and a
// request whose MCP-Protocol-Version differs from the version its session negotiated is
// HTTP 400 (the negotiated one, and none, are served).
func TestAdversarialBearerAndProtocolVersion(t *testing.T) {
	needGatewayBin(t)
	key, hash := auth.NewAPIKey()
	g := startGatewayChecked(t, `
log: {level: info, format: text}
auth:
  mode: api_key
  api_keys:
    - {agent: a1, sha256: `+hash+`}
servers:
  gs: {type: stdio, command: `+yamlQuote(everythingServer(t))+`}
agents:
  a1: {servers: [gs]}
`)
	for _, scheme := range []string{"Bearer", "bearer", "BEARER", "bEaReR"} {
		hdr := map[string]string{"Authorization": scheme + " " + key}
		s, err := advTryOpenSession(g.URL, hdr, rawProtocolVersion, "")
		if err != nil {
			t.Errorf("Authorization: %s <key>: %v", scheme, err)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		r, a, err := s.call(ctx, "tools/list", map[string]any{})
		cancel()
		if err != nil || r.Error != nil || !strings.Contains(string(r.Result), "gs__test_simple_text") {
			t.Errorf("Authorization: %s <key>: tools/list on the session: %v %s", scheme, err, a)
		}
	}
	for name, h := range map[string]string{"wrong key": "Bearer " + key + "x", "Basic scheme": "Basic " + key, "no space": "Bearer" + key} {
		a := rawInitialize(t, g.URL, map[string]string{"Authorization": h})
		if a.Status != http.StatusUnauthorized {
			t.Errorf("%s: %s, want 401", name, a)
		}
	}

	hdr := map[string]string{"Authorization": "Bearer " + key}
	for _, negotiated := range []string{"2025-11-25", "2025-06-18"} {
		s := advOpenSession(t, g.URL, hdr, negotiated, "")
		if s.Version != negotiated {
			t.Errorf("initialize with %s negotiated %s", negotiated, s.Version)
			continue
		}
		ping := func(version string) advAnswer {
			h := s.headers()
			if version == "" {
				delete(h, "MCP-Protocol-Version")
			} else {
				h["MCP-Protocol-Version"] = version
			}
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			a, err := advDo(ctx, http.MethodPost, g.URL, h, []byte(`{"jsonrpc":"2.0","id":7,"method":"ping"}`))
			if err != nil {
				t.Fatalf("ping: %v", err)
			}
			return a
		}
		for _, other := range []string{"2025-11-25", "2025-06-18", "2099-01-01", "garbage"} {
			if other == negotiated {
				continue
			}
			if a := ping(other); a.Status != http.StatusBadRequest {
				t.Errorf("MCP-Protocol-Version %s on a %s session: %s, want 400", other, negotiated, a)
			}
		}
		for _, ok := range []string{negotiated, ""} {
			if a := ping(ok); a.Status != http.StatusOK {
				t.Errorf("MCP-Protocol-Version %q on a %s session: %s, want 200", ok, negotiated, a)
			}
		}
	}
}
