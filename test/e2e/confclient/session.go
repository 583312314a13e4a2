package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// session is the driver's connection to the gateway, with the tools it lists.
type session struct {
	cs    *mcp.ClientSession
	tools []*mcp.Tool
	// elicitations counts the elicitation requests the gateway relayed to the driver.
	elicitations atomic.Int32
}

// connect opens a go-sdk client session to the gateway on revision version ("": the
// client's latest), which answers elicitation requests by accepting the schema's
// defaults, as a user who changes nothing would, and lists its tools.
func connect(ctx context.Context, g *gateway, version string) (*session, error) {
	url := g.base + "/mcp"
	s := &session{}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpgw-confclient", Version: "1.0.0"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			s.elicitations.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: schemaDefaults(r.Params.RequestedSchema)}, nil
		},
	})
	var hc *http.Client
	if g.bearer != "" {
		hc = &http.Client{Transport: bearerTransport{g.bearer}}
	}
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		return nil, fmt.Errorf("connect to mcpgw: %w", err)
	}
	s.cs = cs
	raw, err := g.rawToolNames(ctx)
	if err != nil {
		cs.Close()
		return nil, err
	}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			cs.Close()
			return nil, fmt.Errorf("tools/list through mcpgw: %w", err)
		}
		s.tools = append(s.tools, tool)
		if len(s.tools) > 1000 {
			cs.Close()
			return nil, errors.New("tools/list through mcpgw: more than 1000 tools")
		}
	}
	// The go-sdk client leaves out tools a client must not call (invalid x-mcp-header
	// annotations, SEP-2243): the gateway must not show such a tool in the first place.
	if dropped := slices.DeleteFunc(raw, func(n string) bool { return s.tool(n) != nil }); len(dropped) > 0 {
		cs.Close()
		return nil, fmt.Errorf("mcpgw lists tools a client must leave out (the go-sdk client dropped them): %v", dropped)
	}
	return s, nil
}

// schemaDefaults is the content of an accepted form: each property's default.
func schemaDefaults(schema any) map[string]any {
	b, _ := json.Marshal(schema)
	var s struct {
		Properties map[string]struct {
			Default any `json:"default"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(b, &s)
	out := map[string]any{}
	for name, p := range s.Properties {
		if p.Default != nil {
			out[name] = p.Default
		}
	}
	return out
}

func (s *session) tool(name string) *mcp.Tool {
	for _, t := range s.tools {
		if t.Name == name {
			return t
		}
	}
	return nil
}

func (s *session) toolNames() []string {
	names := make([]string, 0, len(s.tools))
	for _, t := range s.tools {
		names = append(names, t.Name)
	}
	return names
}

// call calls a tool through the gateway and checks the text of its result: want is the
// text the scenario server answers (a prefix of it when it ends in "*").
func (s *session) call(ctx context.Context, name string, args any, want string) error {
	if s.tool(name) == nil {
		return fmt.Errorf("mcpgw does not list the scenario's tool %q (it lists %v)", name, s.toolNames())
	}
	res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return fmt.Errorf("tools/call %s through mcpgw: %w", name, err)
	}
	got := textOf(res)
	if res.IsError {
		return fmt.Errorf("tools/call %s through mcpgw: error result %q", name, got)
	}
	if prefix, ok := strings.CutSuffix(want, "*"); ok && strings.HasPrefix(got, prefix) || got == want {
		return nil
	}
	return fmt.Errorf("tools/call %s through mcpgw: got %q, the scenario server answers %q", name, got, want)
}

func textOf(r *mcp.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}
