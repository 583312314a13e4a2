package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// scenarioContext is MCP_CONFORMANCE_CONTEXT: the tool calls a scenario wants made.
type scenarioContext struct {
	ToolCalls []struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	} `json:"toolCalls"`
}

// scenarios are the calls each scenario expects of a client, made through the gateway
// (which has listed the upstream's tools, and its resources and prompts when it declares
// them, while connecting).
var scenarios = map[string]func(context.Context, *session, scenarioContext) error{
	// initialize, request-metadata and json-schema-ref-no-deref judge the handshake and the
	// listing, which the gateway did while connecting (the last one: that it fetched no
	// network $ref of a tool's schema).
	"initialize":               listOnly,
	"request-metadata":         listOnly,
	"json-schema-ref-no-deref": listOnly,

	"tools_call": func(ctx context.Context, s *session, _ scenarioContext) error {
		return s.call(ctx, "add_numbers", map[string]any{"a": 5, "b": 3}, "The sum of 5 and 3 is 8")
	},

	// The upstream asks for a form whose every field has a default; the driver accepts
	// the defaults, and the gateway must carry them back unchanged.
	"elicitation-sep1034-client-defaults": func(ctx context.Context, s *session, _ scenarioContext) error {
		if err := s.call(ctx, "test_client_elicitation_defaults", map[string]any{}, "Elicitation completed: *"); err != nil {
			return err
		}
		if n := s.elicitations.Load(); n != 1 {
			return fmt.Errorf("mcpgw relayed %d elicitation requests, want 1", n)
		}
		return nil
	},

	// The upstream ends the call's event stream after a priming event with retry 500 ms;
	// the gateway must resume with GET and Last-Event-ID, where the result comes.
	"sse-retry": func(ctx context.Context, s *session, _ scenarioContext) error {
		return s.call(ctx, "test_reconnection", map[string]any{}, "Reconnection test completed successfully")
	},

	// Multi round-trip requests (SEP-2322): the gateway completes or relays the upstream's
	// input_required results, echoing requestState, and keeps other calls clean of them.
	"sep-2322-client-request-state": func(ctx context.Context, s *session, _ scenarioContext) error {
		for _, c := range []struct{ tool, want string }{
			{"test_mrtr_echo_state", "echo-state-ok"},
			{"test_mrtr_unrelated", "unrelated-ok"},
			{"test_mrtr_no_state", "no-state-ok"},
			{"test_mrtr_no_result_type", "no-result-type-test-ok"},
		} {
			if err := s.call(ctx, c.tool, map[string]any{}, c.want); err != nil {
				return err
			}
		}
		// One form each for the two tools that ask, whichever side completes the round
		// trip (the gateway for a session-era client, the client itself on 2026-07-28).
		if n := s.elicitations.Load(); n != 2 {
			return fmt.Errorf("the driver answered %d elicitation requests, want 2 (test_mrtr_echo_state, test_mrtr_no_state)", n)
		}
		return nil
	},

	// Mcp-Method and Mcp-Name on every kind of request the scenario checks.
	"http-standard-headers": func(ctx context.Context, s *session, _ scenarioContext) error {
		for _, name := range []string{"test_headers", "my-hyphenated-tool"} {
			if err := s.call(ctx, name, map[string]any{}, "Headers test completed"); err != nil {
				return err
			}
		}
		res, err := s.cs.ListResources(ctx, nil)
		if err != nil {
			return fmt.Errorf("resources/list through mcpgw: %w", err)
		}
		if len(res.Resources) == 0 {
			return errors.New("resources/list through mcpgw: no resources, the scenario server lists 2")
		}
		for _, r := range res.Resources {
			if _, err := s.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: r.URI}); err != nil {
				return fmt.Errorf("resources/read %s through mcpgw: %w", r.URI, err)
			}
		}
		prompts, err := s.cs.ListPrompts(ctx, nil)
		if err != nil {
			return fmt.Errorf("prompts/list through mcpgw: %w", err)
		}
		if len(prompts.Prompts) == 0 {
			return errors.New("prompts/list through mcpgw: no prompts, the scenario server lists 1")
		}
		for _, p := range prompts.Prompts {
			if _, err := s.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: p.Name}); err != nil {
				return fmt.Errorf("prompts/get %s through mcpgw: %w", p.Name, err)
			}
		}
		return nil
	},

	// The tool calls the scenario names in its context: parameters marked x-mcp-header go
	// out as Mcp-Param-* headers too.
	"http-custom-headers": func(ctx context.Context, s *session, sc scenarioContext) error {
		if len(sc.ToolCalls) == 0 {
			return errors.New("MCP_CONFORMANCE_CONTEXT names no toolCalls")
		}
		for _, c := range sc.ToolCalls {
			if err := s.call(ctx, c.Name, c.Arguments, "Custom headers test completed"); err != nil {
				return err
			}
		}
		return nil
	},

	// A client calls whatever tools it is shown: the gateway must show valid_tool and none
	// of the upstream's tools whose x-mcp-header annotations are invalid (connect checks
	// its raw list against the go-sdk client's, which leaves those out).
	"http-invalid-tool-headers": func(ctx context.Context, s *session, _ scenarioContext) error {
		if s.tool("valid_tool") == nil {
			return fmt.Errorf("mcpgw does not list valid_tool (it lists %v)", s.toolNames())
		}
		for _, t := range s.tools {
			if err := s.call(ctx, t.Name, argsFor(t.InputSchema), "Tool call received"); err != nil {
				return err
			}
		}
		return nil
	},

	// The focal tool's inputSchema, as the gateway lists it, goes back verbatim to the
	// echo tool: the scenario compares it with what it served.
	"json-schema-2020-12-preservation": func(ctx context.Context, s *session, _ scenarioContext) error {
		focal := s.tool("json_schema_2020_12_tool")
		if focal == nil {
			return fmt.Errorf("mcpgw does not list json_schema_2020_12_tool (it lists %v)", s.toolNames())
		}
		return s.call(ctx, "json_schema_echo", map[string]any{"schema": focal.InputSchema}, "echoed")
	},
}

func listOnly(context.Context, *session, scenarioContext) error { return nil }

func scenarioNames() []string {
	names := make([]string, 0, len(scenarios))
	for n := range scenarios {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// argsFor makes arguments that satisfy a schema's required properties.
func argsFor(schema any) map[string]any {
	b, _ := json.Marshal(schema)
	var s struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(b, &s)
	args := map[string]any{}
	for _, name := range s.Required {
		switch s.Properties[name].Type {
		case "integer", "number":
			args[name] = 1
		case "boolean":
			args[name] = true
		case "object":
			args[name] = map[string]any{}
		case "array":
			args[name] = []any{}
		case "null":
			args[name] = nil
		default:
			args[name] = "us-west1"
		}
	}
	return args
}
