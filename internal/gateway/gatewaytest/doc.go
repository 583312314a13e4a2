// Package gatewaytest is the test harness shared by the tests that drive a whole gateway:
// the tests of internal/gateway and the external tests (package X_test) of its parts
// (admin, ui, telemetry, dispatch, selfplugin, subscriptions), which cannot reach each
// other's _test.go helpers. It builds a gateway from a YAML config behind an httptest server (Start), runs
// the go-sdk everything-server the configs name as {{everything}} (Main, from TestMain),
// sends HTTP and JSON-RPC requests and sessions to it (GW.Do, GW.Initialize, GW.Call,
// GW.ToolNames, StatelessReq), and holds the helpers of the admin API (GW.API, WaitLive),
// the web UI (UIClient), plugins (PluginConfig, GW.CallTool) and a few in-process
// upstreams (FakeOAuth, WordyAgents, LimitedConfig) that tests in more than one package
// use. Helpers one package's tests use stay in that package's _test.go files.
//
// It imports internal/gateway, so internal/gateway's own internal tests (package gateway)
// cannot use it; they keep their helpers beside them.
package gatewaytest
