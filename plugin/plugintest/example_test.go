package plugintest_test

import (
	"context"
	"fmt"

	"github.com/mcpgw/mcpgw/plugin/plugintest"
)

// The fixture is a plugin.Plugin with Kubernetes-shaped resource types on two
// connections, for tests of what a gateway or a tool makes of a provider.
func ExampleNew() {
	f := plugintest.New()
	types, err := f.ResourceTypes(context.Background())
	if err != nil {
		panic(err)
	}
	for _, t := range types {
		fmt.Println(t.Key)
	}
	// Output:
	// core::v1::Pod
	// apps::v1::Deployment
	// batch::v1::Job
	// widgets.example.com::v1alpha1::ClusterWideWidgetConfigurationOverride
}
