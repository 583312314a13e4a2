package upstream

import "syscall"

// busyPollSupported: busy polling was measured on Linux, where yieldCPU is sched_yield.
const busyPollSupported = true

// yieldCPU gives the CPU to any other thread that is ready to run on it.
func yieldCPU() { _, _, _ = syscall.RawSyscall(syscall.SYS_SCHED_YIELD, 0, 0, 0) }
