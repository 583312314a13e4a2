package plugin_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpgw/mcpgw/plugin"
	"github.com/mcpgw/mcpgw/plugin/plugintest"
)

// A provider's resource types become tools: Load reads the provider into a catalogue,
// Tools generates the tools one session sees (here: read-only, on connection prod), and
// a call goes to the provider through the tool. The fixture's widget type has a name too
// long for an MCP tool: without an Options.Name rule that shortens it (the gateway has
// one), its tools are left out and said so in Problems.
func Example() {
	ctx := context.Background()
	cat, err := plugin.Load(ctx, "k8s", plugintest.New())
	if err != nil {
		panic(err)
	}
	tools := cat.Tools(plugin.Options{ReadOnly: true, Connections: []string{"prod"}})
	for _, t := range tools.Tools {
		fmt.Printf("%s (%s, read-only %v)\n", t.Def.Name, t.Op, t.Def.Annotations.ReadOnly())
	}
	get := tools.Lookup("k8s_core_v1_Pod_get")
	fmt.Println("get takes", get.Def.InputSchema.Required, "of", len(get.Def.InputSchema.Properties), "arguments")
	for _, p := range tools.Problems {
		fmt.Println("left out:", p)
	}
	res, err := tools.Call(ctx, get.Def.Name, json.RawMessage(`{"connectionId": "prod", "namespace": "default", "id": "web-2"}`), plugin.CallOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text())
	// Output:
	// k8s_apps_v1_Deployment_get (get, read-only true)
	// k8s_apps_v1_Deployment_list (list, read-only true)
	// k8s_apps_v1_Deployment_scale (action, read-only false)
	// k8s_core_v1_Pod_find (find, read-only true)
	// k8s_core_v1_Pod_get (get, read-only true)
	// k8s_core_v1_Pod_list (list, read-only true)
	// k8s_core_v1_Pod_logs (action, read-only true)
	// k8s_list_connections (list_connections, read-only true)
	// k8s_list_namespaces (list_namespaces, read-only true)
	// k8s_list_resource_types (list_resource_types, read-only true)
	// get takes [connectionId id] of 3 arguments
	// left out: tool "k8s_widgets.example.com_v1alpha1_ClusterWideWidgetConfigurationOverride_get": "k8s_widgets.example.com_v1alpha1_ClusterWideWidgetConfigurationOverride_get" is not a valid MCP tool name (^[A-Za-z0-9_-]{1,64}$); the tool is left out
	// left out: tool "k8s_widgets.example.com_v1alpha1_ClusterWideWidgetConfigurationOverride_list": "k8s_widgets.example.com_v1alpha1_ClusterWideWidgetConfigurationOverride_list" is not a valid MCP tool name (^[A-Za-z0-9_-]{1,64}$); the tool is left out
	// {"name":"web-2","namespace":"default","node":null,"phase":"Pending","restarts":2}
}

// ExampleKey: a resource key names a type by group, version and kind.
func ExampleKey() {
	key := plugin.Key("apps", "v1", "Deployment")
	group, version, kind, _ := plugin.SplitKey(key)
	fmt.Println(key, group, version, kind)
	// Output: apps::v1::Deployment apps v1 Deployment
}
