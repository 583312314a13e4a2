package plugin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/plugin"
	"github.com/mcpgw/mcpgw/plugin/plugintest"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// gatewayNames is the naming rule the gateway passes: its own ExposedName, with the plugin
// tool's full name as the whole name.
func gatewayNames(full string) string {
	return registry.ExposedName("", full, config.Naming{Prefix: "never", MaxLength: 64})
}

func loadFixture(t *testing.T) (*plugin.Catalog, *plugintest.Fixture) {
	t.Helper()
	f := plugintest.New()
	c, err := plugin.Load(context.Background(), "kubernetes", f)
	if err != nil {
		t.Fatal(err)
	}
	return c, f
}

// golden compares the tools/list a view produces (with its problems) with
// testdata/<name>.golden; -update rewrites the file.
func golden(t *testing.T, name string, ts *plugin.ToolSet) {
	t.Helper()
	defs := make([]any, len(ts.Tools))
	for i, tool := range ts.Tools {
		defs[i] = tool.Def
	}
	problems := append([]string{}, ts.Problems...)
	got, err := json.MarshalIndent(map[string]any{"tools": defs, "problems": problems}, "", "  ")
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
		t.Fatalf("%v (run go test ./plugin -run %s -update to write it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the generated tools (go test ./plugin -run %s -update rewrites it after review); got:\n%s", file, t.Name(), got)
	}
}

func names(ts *plugin.ToolSet) []string {
	var out []string
	for _, tool := range ts.Tools {
		out = append(out, tool.Def.Name)
	}
	return out
}

func TestGoldenAllTools(t *testing.T) {
	c, _ := loadFixture(t)
	if len(c.Problems) > 0 {
		t.Errorf("the fixture loads with problems: %v", c.Problems)
	}
	ts := c.Tools(plugin.Options{Name: gatewayNames})
	golden(t, "tools", ts)

	// The rules the golden file shows, checked by name so a careless -update cannot
	// quietly lose them.
	got := names(ts)
	for _, want := range []string{
		"kubernetes_core_v1_Pod_get", "kubernetes_core_v1_Pod_list", "kubernetes_core_v1_Pod_find",
		"kubernetes_core_v1_Pod_delete", "kubernetes_core_v1_Pod_logs",
		"kubernetes_apps_v1_Deployment_create", "kubernetes_apps_v1_Deployment_update",
		"kubernetes_apps_v1_Deployment_scale", "kubernetes_apps_v1_Deployment_restart",
		"kubernetes_batch_v1_Job_get", "kubernetes_batch_v1_Job_list",
		"kubernetes_list_connections", "kubernetes_list_namespaces", "kubernetes_list_resource_types",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("no tool %s in %v", want, got)
		}
	}
	for _, absent := range []string{"kubernetes_core_v1_Pod_create", "kubernetes_batch_v1_Job_find", "kubernetes_apps_v1_Deployment_find"} {
		if slices.Contains(got, absent) {
			t.Errorf("tool %s should not exist (capabilities)", absent)
		}
	}
	// The custom resource's name has dots and is too long: the gateway's rule shortens it.
	var widget []string
	for _, n := range got {
		if strings.HasPrefix(n, "kubernetes_widgets_example_com_v1alpha1_") {
			widget = append(widget, n)
			if len(n) > 64 {
				t.Errorf("%s is longer than 64", n)
			}
		}
	}
	if len(widget) != 2 {
		t.Errorf("want the widget get and list, shortened; got %v", widget)
	}
	job := ts.Lookup("kubernetes_batch_v1_Job_get")
	if b, _ := json.Marshal(job.Def.InputSchema); !strings.Contains(string(b), `"enum":["staging"]`) {
		t.Errorf("Job exists on staging only, its connectionId enum should say so: %s", b)
	}
}

func TestGoldenReadOnly(t *testing.T) {
	c, _ := loadFixture(t)
	ts := c.Tools(plugin.Options{Name: gatewayNames, ReadOnly: true})
	golden(t, "tools_readonly", ts)
	for _, n := range names(ts) {
		for _, w := range []string{"_create", "_update", "_delete", "_restart"} {
			if strings.HasSuffix(n, w) {
				t.Errorf("read-only view has %s", n)
			}
		}
	}
	for _, want := range []string{"kubernetes_apps_v1_Deployment_scale", "kubernetes_core_v1_Pod_logs", "kubernetes_core_v1_Pod_find"} {
		if ts.Lookup(want) == nil {
			t.Errorf("read-only view lacks %s (not Dangerous, so kept)", want)
		}
	}
}

func TestGoldenConnectionScoped(t *testing.T) {
	c, _ := loadFixture(t)
	ts := c.Tools(plugin.Options{Name: gatewayNames, Connections: []string{"prod"}})
	golden(t, "tools_scoped", ts)
	for _, tool := range ts.Tools {
		b, _ := json.Marshal(tool.Def.InputSchema)
		if strings.Contains(string(b), "staging") {
			t.Errorf("%s mentions staging in a prod-only view: %s", tool.Def.Name, b)
		}
		if strings.Contains(tool.Def.Name, "Job") {
			t.Errorf("Job exists on staging only, but the prod view has %s", tool.Def.Name)
		}
	}
	if none := c.Tools(plugin.Options{Name: gatewayNames, Connections: []string{}}); len(none.Tools) != 0 {
		t.Errorf("a view with no connections has tools: %v", names(none))
	}
}

func TestGoldenElicitation(t *testing.T) {
	c, _ := loadFixture(t)
	ts := c.Tools(plugin.Options{Name: gatewayNames, Elicitation: true})
	golden(t, "tools_elicitation", ts)
	for _, tool := range ts.Tools {
		b, _ := json.Marshal(tool.Def.InputSchema)
		if strings.Contains(string(b), `"confirm"`) {
			t.Errorf("%s asks for confirm although the client can be asked: %s", tool.Def.Name, b)
		}
	}
	full := c.Tools(plugin.Options{Name: gatewayNames})
	for _, n := range []string{"kubernetes_core_v1_Pod_delete", "kubernetes_apps_v1_Deployment_restart"} {
		b, _ := json.Marshal(full.Lookup(n).Def.InputSchema)
		if !strings.Contains(string(b), `"confirm":{"type":"boolean"`) || !strings.Contains(string(b), `"confirm"]`) {
			t.Errorf("%s without elicitation should require confirm: %s", n, b)
		}
	}
}

// Without a naming rule, a name outside the MCP set is a problem and its tool is left out.
func TestNamesWithoutRule(t *testing.T) {
	c, _ := loadFixture(t)
	ts := c.Tools(plugin.Options{})
	if ts.Lookup("kubernetes_core_v1_Pod_get") == nil {
		t.Error("a valid name needs no rule")
	}
	if len(ts.Problems) != 2 || !strings.Contains(ts.Problems[0], "not a valid MCP tool name") {
		t.Errorf("want the widget's two tools reported, got %v", ts.Problems)
	}
}

// Two names that shorten to the same exposed name: the second is hidden and reported.
func TestCollisionsReported(t *testing.T) {
	c, _ := loadFixture(t)
	ts := c.Tools(plugin.Options{Name: func(full string) string {
		if strings.HasPrefix(full, "kubernetes_core_v1_Pod_") {
			return "kubernetes_pod"
		}
		return gatewayNames(full)
	}})
	n := 0
	for _, tool := range ts.Tools {
		if tool.Def.Name == "kubernetes_pod" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d tools named kubernetes_pod", n)
	}
	var collisions int
	for _, p := range ts.Problems {
		if strings.Contains(p, `both expose as "kubernetes_pod"`) {
			collisions++
		}
	}
	if collisions != 4 { // get, list, find, delete, logs: the first wins
		t.Errorf("want 4 collisions reported, got %v", ts.Problems)
	}
}
