//go:build !linux

package busywait

// Supported: elsewhere calls always wait in the network poller. Without a way to hand the
// CPU to other threads between two polls, polling slowed the peer down
// (docs/performance.md).
const Supported = false

func yieldCPU() {}
