// Package pluginpb is the plugin contract as a gRPC service, generated from plugin.proto
// (make proto): the wire between mcpgw and a plugin executable, used by internal/pluginproc.
package pluginpb
