package selfplugin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/selfplugin"
	"github.com/mcpgw/mcpgw/plugin"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// fakeHost is a gateway with two servers, three sessions and two agents; it records the
// actions it was asked to run.
type fakeHost struct {
	restarted, ended []string
}

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func (h *fakeHost) Servers(context.Context) ([]selfplugin.Server, error) {
	return []selfplugin.Server{
		{Name: "web", Transport: "streamable_http", Mode: "shared", State: "up", Since: t0, Tools: 3, Source: "file"},
		{Name: "files", Transport: "stdio", Mode: "per_session", State: "down", Error: "exited", Since: t0, Restarts: 2, Source: "api"},
	}, nil
}

func (h *fakeHost) Sessions(context.Context) ([]selfplugin.Session, error) {
	return []selfplugin.Session{
		{ID: "s3", Agent: "ops", Transport: "streamable", Created: t0, LastUsed: t0, Live: true, Tools: 9},
		{ID: "s1", Agent: "coder", Task: "t1", Transport: "socket", Created: t0, LastUsed: t0, Live: true, Calls: 4},
		{ID: "s2", Agent: "coder", Transport: "sse", Created: t0, LastUsed: t0},
	}, nil
}

func (h *fakeHost) Agents(context.Context) ([]selfplugin.Agent, error) {
	return []selfplugin.Agent{
		{ID: "ops", Enabled: true, Servers: []string{"mcpgw", "web"}, Sessions: 1, Source: "file"},
		{ID: "coder", Enabled: true, ReadOnly: true, ConnectionScope: []string{"prod-db"}, Sessions: 2, Source: "api"},
	}, nil
}

func (h *fakeHost) RestartServer(_ context.Context, name string) error {
	if name != "web" && name != "files" {
		return errors.New("no server " + name)
	}
	h.restarted = append(h.restarted, name)
	return nil
}

func (h *fakeHost) EndSession(_ context.Context, id string) error {
	h.ended = append(h.ended, id)
	return nil
}

func load(t *testing.T) (*plugin.Catalog, *fakeHost) {
	t.Helper()
	h := &fakeHost{}
	c, err := plugin.Load(context.Background(), "mcpgw", selfplugin.New(h))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Problems) > 0 {
		t.Fatalf("the plugin loads with problems: %v", c.Problems)
	}
	return c, h
}

func golden(t *testing.T, name string, ts *plugin.ToolSet) {
	t.Helper()
	defs := make([]any, len(ts.Tools))
	for i, tool := range ts.Tools {
		defs[i] = tool.Def
	}
	got, err := json.MarshalIndent(map[string]any{"tools": defs, "problems": append([]string{}, ts.Problems...)}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	file := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (go test ./plugin/selfplugin -run %s -update writes it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the generated tools (go test ./plugin/selfplugin -run %s -update rewrites it after review); got:\n%s", file, t.Name(), got)
	}
}

func toolNames(ts *plugin.ToolSet) []string {
	var out []string
	for _, tool := range ts.Tools {
		out = append(out, tool.Def.Name)
	}
	return out
}

// TestGoldenTools: the tools an allowed agent gets, and the read-only view without the
// two Dangerous actions.
func TestGoldenTools(t *testing.T) {
	c, _ := load(t)
	full := c.Tools(plugin.Options{})
	golden(t, "tools", full)
	want := []string{"mcpgw_list_connections", "mcpgw_list_namespaces", "mcpgw_list_resource_types",
		"mcpgw_mcpgw_v1_Agent_get", "mcpgw_mcpgw_v1_Agent_list",
		"mcpgw_mcpgw_v1_Server_get", "mcpgw_mcpgw_v1_Server_list", "mcpgw_mcpgw_v1_Server_restart",
		"mcpgw_mcpgw_v1_Session_end", "mcpgw_mcpgw_v1_Session_get", "mcpgw_mcpgw_v1_Session_list"}
	got := toolNames(full)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("tools = %v, want %v", got, want)
	}
	for _, tool := range full.Tools {
		if tool.Op == plugin.OperationAction {
			if a := tool.Def.Annotations; a == nil || a.DestructiveHint == nil || !*a.DestructiveHint {
				t.Errorf("%s is not annotated destructiveHint", tool.Def.Name)
			}
		}
	}

	ro := c.Tools(plugin.Options{ReadOnly: true})
	golden(t, "tools_readonly", ro)
	for _, n := range toolNames(ro) {
		if strings.HasSuffix(n, "_restart") || strings.HasSuffix(n, "_end") {
			t.Errorf("the read-only view has %s", n)
		}
	}
	if len(ro.Tools) != len(full.Tools)-2 {
		t.Errorf("the read-only view has %d tools, want %d (all but restart and end)", len(ro.Tools), len(full.Tools)-2)
	}
	// A session scoped to other connections has no tools of the plugin but the utilities.
	scoped := c.Tools(plugin.Options{Connections: []string{"prod-db"}})
	for _, n := range toolNames(scoped) {
		if strings.Contains(n, "_v1_") {
			t.Errorf("a session without the gateway connection has %s", n)
		}
	}
}

func call(t *testing.T, ts *plugin.ToolSet, name, args string) (map[string]any, string, bool) {
	t.Helper()
	res, err := ts.Call(context.Background(), name, json.RawMessage(args), plugin.CallOptions{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var sc map[string]any
	if res.StructuredContent != nil {
		_ = json.Unmarshal(res.StructuredContent, &sc)
	}
	return sc, res.Text(), res.IsError
}

func TestListGetAndPages(t *testing.T) {
	c, _ := load(t)
	ts := c.Tools(plugin.Options{})
	sc, text, isErr := call(t, ts, "mcpgw_mcpgw_v1_Session_list", `{"connectionId":"gateway","pageSize":2}`)
	if isErr {
		t.Fatalf("list: %s", text)
	}
	items, _ := sc["items"].([]any)
	if len(items) != 2 || items[0].(map[string]any)["id"] != "s1" || items[1].(map[string]any)["id"] != "s2" || sc["nextCursor"] != "2" {
		t.Fatalf("first page = %v, want s1, s2 and cursor 2", sc)
	}
	sc, text, isErr = call(t, ts, "mcpgw_mcpgw_v1_Session_list", `{"connectionId":"gateway","pageSize":2,"cursor":"2"}`)
	if items, _ = sc["items"].([]any); isErr || len(items) != 1 || items[0].(map[string]any)["id"] != "s3" || sc["nextCursor"] != nil {
		t.Fatalf("second page = %v %s, want s3 and no cursor", sc, text)
	}
	if _, text, isErr = call(t, ts, "mcpgw_mcpgw_v1_Session_list", `{"connectionId":"gateway","cursor":"x"}`); !isErr || !strings.Contains(text, "cursor") {
		t.Errorf("a bad cursor: %q (error %v), want a cursor error", text, isErr)
	}
	sc, text, isErr = call(t, ts, "mcpgw_mcpgw_v1_Server_get", `{"connectionId":"gateway","id":"files"}`)
	if isErr || sc["state"] != "down" || sc["error"] != "exited" || sc["restarts"] != float64(2) {
		t.Errorf("get files = %v %s", sc, text)
	}
	if _, text, isErr = call(t, ts, "mcpgw_mcpgw_v1_Server_get", `{"connectionId":"gateway","id":"nope"}`); !isErr || !strings.Contains(text, `no Server "nope"`) {
		t.Errorf("get of a missing server: %q (error %v)", text, isErr)
	}
	sc, _, isErr = call(t, ts, "mcpgw_mcpgw_v1_Agent_get", `{"connectionId":"gateway","id":"coder"}`)
	if isErr || sc["read_only"] != true || sc["servers"] == nil {
		t.Errorf("get coder = %v", sc)
	}
	if _, text, isErr = call(t, ts, "mcpgw_mcpgw_v1_Agent_list", `{"connectionId":"prod"}`); !isErr || !strings.Contains(text, "not available") {
		t.Errorf("another connection: %q (error %v)", text, isErr)
	}
}

func TestActionsNeedConfirmation(t *testing.T) {
	c, h := load(t)
	ts := c.Tools(plugin.Options{})
	if _, text, isErr := call(t, ts, "mcpgw_mcpgw_v1_Session_end", `{"connectionId":"gateway","id":"s2"}`); !isErr || !strings.Contains(text, `"confirm": true`) {
		t.Errorf("end without confirm: %q (error %v), want a refusal", text, isErr)
	}
	if len(h.ended) != 0 {
		t.Fatalf("a refused end reached the host: %v", h.ended)
	}
	sc, text, isErr := call(t, ts, "mcpgw_mcpgw_v1_Session_end", `{"connectionId":"gateway","id":"s2","confirm":true}`)
	if isErr || sc["ended"] != "s2" || !slices.Equal(h.ended, []string{"s2"}) {
		t.Errorf("end s2 = %v %q, host ended %v", sc, text, h.ended)
	}
	sc, text, isErr = call(t, ts, "mcpgw_mcpgw_v1_Server_restart", `{"connectionId":"gateway","id":"web","confirm":true}`)
	if isErr || sc["restarted"] != "web" || !slices.Equal(h.restarted, []string{"web"}) {
		t.Errorf("restart web = %v %q, host restarted %v", sc, text, h.restarted)
	}
	if _, text, isErr = call(t, ts, "mcpgw_mcpgw_v1_Server_restart", `{"connectionId":"gateway","id":"nope","confirm":true}`); !isErr || !strings.Contains(text, "no server nope") {
		t.Errorf("restart of a missing server: %q (error %v), want the host's error", text, isErr)
	}
	// With elicitation, a decline changes nothing.
	el := c.Tools(plugin.Options{Elicitation: true})
	res, err := el.Call(context.Background(), "mcpgw_mcpgw_v1_Session_end", json.RawMessage(`{"connectionId":"gateway","id":"s3"}`),
		plugin.CallOptions{Confirm: func(context.Context, string) (bool, error) { return false, nil }})
	if err != nil || !res.IsError || len(h.ended) != 1 {
		t.Errorf("a declined end: %v %+v, host ended %v", err, res, h.ended)
	}
}
