package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"
)

// Task support of a tool, as tools/list declares it under execution.taskSupport.
const (
	syncOnly     = ""         // never a task
	taskOptional = "optional" // a task for callers that declared the extension
	taskRequired = "required" // only as a task: -32021 for callers that did not
)

// toolBody is what a tool does once it runs (in a task, or within the request).
type toolBody func(ctx context.Context, a asker) (map[string]any, error)

// tool is one fixture.
type tool struct {
	description string
	schema      string // inputSchema
	support     string
	// upfront are input requests the tool gathers by multi round-trip within tools/call,
	// before it runs and before any task exists (the final round may then create one).
	upfront map[string]json.RawMessage
	// asks: the body asks the client for input while it runs (elicitation).
	asks bool
	// check refuses bad arguments before anything runs.
	check func(args map[string]json.RawMessage) *rpcError
	run   func(ctx context.Context, c *call, a asker) (map[string]any, error)
}

// call is one tools/call's arguments and the answers its upfront rounds gathered.
type call struct {
	args     map[string]json.RawMessage
	gathered map[string]json.RawMessage
}

const (
	nameSchema    = `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`
	confirmSchema = `{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}`
)

// fixtures are the tools the tasks-* scenarios name.
func fixtures() map[string]*tool {
	return map[string]*tool{
		"greet": {
			description: "Says hello; never a task.",
			schema:      nameSchema,
			support:     syncOnly,
			check:       requireString("name"),
			run: func(_ context.Context, c *call, _ asker) (map[string]any, error) {
				return textResult(fmt.Sprintf("Hello, %s!", stringArg(c.args, "name")), false), nil
			},
		},
		"slow_compute": {
			description: "Works for `seconds` seconds, then answers; a task for callers that declared the extension.",
			schema:      `{"type":"object","properties":{"seconds":{"type":"number","minimum":0,"maximum":300},"label":{"type":"string"}},"required":["seconds"]}`,
			support:     taskOptional,
			check:       checkSeconds,
			run: func(ctx context.Context, c *call, _ asker) (map[string]any, error) {
				var seconds float64
				_ = json.Unmarshal(c.args["seconds"], &seconds)
				if err := sleep(ctx, time.Duration(seconds*float64(time.Second))); err != nil {
					return nil, err
				}
				return textResult(fmt.Sprintf("computed %q after %gs", stringArg(c.args, "label"), seconds), false), nil
			},
		},
		"failing_job": {
			description: "A job that runs for a second and reports a tool error; only as a task.",
			schema:      `{"type":"object"}`,
			support:     taskRequired,
			run: func(ctx context.Context, _ *call, _ asker) (map[string]any, error) {
				if err := sleep(ctx, time.Second); err != nil {
					return nil, err
				}
				return textResult("failing_job: the job failed, as it always does", true), nil
			},
		},
		"protocol_error_job": {
			description: "A job whose handler panics, which the server reports as a JSON-RPC internal error; only as a task.",
			schema:      `{"type":"object"}`,
			support:     taskRequired,
			run: func(context.Context, *call, asker) (map[string]any, error) {
				panic("protocol_error_job: the handler crashed")
			},
		},
		"confirm_delete": {
			description: "Asks the user to confirm before it deletes `filename`.",
			schema:      `{"type":"object","properties":{"filename":{"type":"string"}},"required":["filename"]}`,
			support:     taskOptional,
			asks:        true,
			check:       requireString("filename"),
			run:         confirmDelete,
		},
		"multi_input": {
			description: "Asks two questions at once and answers once both are answered.",
			schema:      `{"type":"object"}`,
			support:     taskOptional,
			asks:        true,
			run:         multiInput,
		},
		"test_tool_with_task": {
			description: "Asks for the user's name by multi round-trip, then greets them from a task.",
			schema:      `{"type":"object"}`,
			support:     taskRequired,
			upfront:     map[string]json.RawMessage{"user_name": elicit("What is your name?", nameSchema)},
			run: func(ctx context.Context, c *call, _ asker) (map[string]any, error) {
				if err := sleep(ctx, 300*time.Millisecond); err != nil {
					return nil, err
				}
				accepted, content := elicitAnswer(c.gathered["user_name"])
				if !accepted {
					return textResult("no name was given", true), nil
				}
				return textResult(fmt.Sprintf("Hello, %s!", stringArg(content, "name")), false), nil
			},
		},
	}
}

func confirmDelete(ctx context.Context, c *call, a asker) (map[string]any, error) {
	name := stringArg(c.args, "filename")
	got, err := a.ask(ctx, map[string]json.RawMessage{"confirm": elicit(fmt.Sprintf("Delete %s?", name), confirmSchema)})
	if err != nil {
		return nil, err
	}
	accepted, content := elicitAnswer(got["confirm"])
	var yes bool
	_ = json.Unmarshal(content["confirm"], &yes)
	if !accepted || !yes {
		return textResult(fmt.Sprintf("kept %s", name), false), nil
	}
	return textResult(fmt.Sprintf("deleted %s", name), false), nil
}

func multiInput(ctx context.Context, _ *call, a asker) (map[string]any, error) {
	got, err := a.ask(ctx, map[string]json.RawMessage{
		"first":  elicit("First name?", nameSchema),
		"second": elicit("Second name?", nameSchema),
	})
	if err != nil {
		return nil, err
	}
	_, first := elicitAnswer(got["first"])
	_, second := elicitAnswer(got["second"])
	return textResult(fmt.Sprintf("got %s and %s", stringArg(first, "name"), stringArg(second, "name")), false), nil
}

func (p *peer) listTools() map[string]any {
	names := make([]string, 0, len(p.tools))
	for n := range p.tools {
		names = append(names, n)
	}
	sort.Strings(names)
	tools := make([]map[string]any, 0, len(names))
	for _, n := range names {
		t := p.tools[n]
		entry := map[string]any{"name": n, "description": t.description, "inputSchema": json.RawMessage(t.schema)}
		if t.support != syncOnly {
			entry["execution"] = map[string]any{"taskSupport": t.support}
		}
		tools = append(tools, entry)
	}
	return map[string]any{"resultType": "complete", "tools": tools, "ttlMs": 60000, "cacheScope": "public"}
}

// callTool serves tools/call: a task for a task-supporting tool when the request declared
// the extension (the server decides; a legacy params.task is ignored), else the result
// within the request, with multi round-trip for any input the tool needs.
func (p *peer) callTool(ctx context.Context, req *request) (any, *rpcError) {
	var name string
	if json.Unmarshal(req.params["name"], &name) != nil || name == "" {
		return nil, errorf(codeInvalidParams, "params.name must be a non-empty string")
	}
	t, ok := p.tools[name]
	if !ok {
		return nil, errorf(codeInvalidParams, "unknown tool %q", name)
	}
	c := &call{args: map[string]json.RawMessage{}}
	if raw, ok := req.params["arguments"]; ok && string(raw) != "null" {
		args, rerr := object(raw)
		if rerr != nil {
			return nil, errorf(codeInvalidParams, "params.arguments: %s", rerr.Message)
		}
		c.args = args
	}
	responses, rerr := inputResponses(req.params)
	if rerr != nil {
		return nil, rerr
	}
	if t.check != nil {
		if rerr := t.check(c.args); rerr != nil {
			return nil, rerr
		}
	}
	if t.support == taskRequired && !req.caps.tasks {
		return nil, missingTasks()
	}
	round := &mrtrAsker{tool: name, caps: req.caps, responses: responses}
	if len(t.upfront) > 0 {
		if rerr := round.checkState(req.params); rerr != nil {
			return nil, rerr
		}
		gathered, err := round.ask(ctx, t.upfront)
		if err != nil {
			return syncOutcome(name, nil, err)
		}
		c.gathered = gathered
	}
	body := func(ctx context.Context, a asker) (map[string]any, error) { return t.run(ctx, c, a) }
	if req.caps.tasks && t.support != syncOnly {
		if t.asks && !req.caps.elicitation { // the task would wait for answers that cannot come
			return nil, missingCapability("elicitation", map[string]any{"elicitation": map[string]any{}})
		}
		return p.tasks.start(body)
	}
	if len(t.upfront) == 0 {
		if rerr := round.checkState(req.params); rerr != nil {
			return nil, rerr
		}
	}
	result, err := runGuarded(ctx, body, round)
	return syncOutcome(name, result, err)
}

// inputResponses is params.inputResponses: absent is none; present, it must be an object.
func inputResponses(params map[string]json.RawMessage) (map[string]json.RawMessage, *rpcError) {
	raw, ok := params["inputResponses"]
	if !ok {
		return nil, nil
	}
	m, rerr := object(raw)
	if rerr != nil {
		return nil, errorf(codeInvalidParams, "params.inputResponses must be an object of responses: %s", rerr.Message)
	}
	return m, nil
}

// runGuarded runs body within the request, a panic becoming an internal error.
func runGuarded(ctx context.Context, body toolBody, a asker) (result map[string]any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errorf(codeInternal, "internal error: %v", r)
		}
	}()
	return body(ctx, a)
}

// syncOutcome is the answer of a tools/call served within the request.
func syncOutcome(tool string, result map[string]any, err error) (any, *rpcError) {
	var need *needInput
	var rerr *rpcError
	switch {
	case err == nil:
		result["resultType"] = "complete"
		return result, nil
	case errors.As(err, &need):
		return map[string]any{"resultType": "input_required", "inputRequests": need.reqs, "requestState": stateFor(tool)}, nil
	case errors.As(err, &rerr):
		return nil, rerr
	}
	return nil, errorf(codeInternal, "%s: %v", tool, err)
}

// stateFor is the requestState of a tool's input round. The peer keeps nothing between
// rounds: the answers come back in inputResponses, and the state only says whose round
// it was.
func stateFor(tool string) string { return "taskpeer/v1/" + tool }

// mrtrAsker answers a body's questions from the request's inputResponses; a question
// without its answer ends the request with an input_required result (needInput).
type mrtrAsker struct {
	tool      string
	caps      clientCaps
	responses map[string]json.RawMessage
}

type needInput struct{ reqs map[string]json.RawMessage }

func (*needInput) Error() string { return "input required" }

func (m *mrtrAsker) ask(_ context.Context, reqs map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	if !m.caps.elicitation {
		return nil, missingCapability("elicitation", map[string]any{"elicitation": map[string]any{}})
	}
	got := map[string]json.RawMessage{}
	missing := map[string]json.RawMessage{}
	for k, r := range reqs {
		if a, ok := m.responses[k]; ok {
			got[k] = a
		} else {
			missing[k] = r
		}
	}
	if len(missing) > 0 {
		return nil, &needInput{reqs: missing}
	}
	return got, nil
}

// checkState refuses a retry whose requestState is not one this tool's round gave.
func (m *mrtrAsker) checkState(params map[string]json.RawMessage) *rpcError {
	raw, ok := params["requestState"]
	if !ok {
		return nil
	}
	var state string
	if json.Unmarshal(raw, &state) != nil || state != stateFor(m.tool) {
		return errorf(codeInvalidParams, "requestState was not issued for %s", m.tool)
	}
	return nil
}

func elicit(message, schema string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"method": "elicitation/create", "params": map[string]any{
		"mode": "form", "message": message, "requestedSchema": json.RawMessage(schema)}})
	return b
}

// elicitAnswer reads an ElicitResult: whether it was accepted, and its content.
func elicitAnswer(raw json.RawMessage) (bool, map[string]json.RawMessage) {
	var r struct {
		Action  string                     `json:"action"`
		Content map[string]json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &r) != nil {
		return false, nil
	}
	return r.Action == "accept", r.Content
}

func textResult(text string, isError bool) map[string]any {
	r := map[string]any{"content": []map[string]any{{"type": "text", "text": text}}}
	if isError {
		r["isError"] = true
	}
	return r
}

func stringArg(args map[string]json.RawMessage, name string) string {
	var s string
	_ = json.Unmarshal(args[name], &s)
	return s
}

func requireString(name string) func(map[string]json.RawMessage) *rpcError {
	return func(args map[string]json.RawMessage) *rpcError {
		var s string
		if json.Unmarshal(args[name], &s) != nil {
			return errorf(codeInvalidParams, "argument %q must be a string", name)
		}
		return nil
	}
}

func checkSeconds(args map[string]json.RawMessage) *rpcError {
	var seconds float64
	if json.Unmarshal(args["seconds"], &seconds) != nil || seconds < 0 || seconds > 300 {
		return errorf(codeInvalidParams, "argument \"seconds\" must be a number from 0 to 300")
	}
	if raw, ok := args["label"]; ok {
		var label string
		if json.Unmarshal(raw, &label) != nil {
			return errorf(codeInvalidParams, "argument \"label\" must be a string")
		}
	}
	return nil
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
