//go:build !linux

package external

// Busy waiting was measured on Linux only; elsewhere calls just wait.
const busyPollSupported = false

func yieldCPU() {}
