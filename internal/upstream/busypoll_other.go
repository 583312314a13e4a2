//go:build !linux

package upstream

// busyPollSupported: elsewhere calls always wait in the network poller. Without a way to
// hand the CPU to other threads between two polls, polling slowed the upstream down
// (docs/performance.md).
const busyPollSupported = false

func yieldCPU() {}
