package upstream

import (
	"fmt"
	"os"
)

// RunChild is the guardian's main (`mcpgw __mcpgw_child COMMAND ARGS...`): it runs
// args[0] with args[1:], passing stdio straight through, and exits with its status. It
// never returns.
//
// On Linux the guardian is a child subreaper, so every descendant of the upstream, also
// one that left the process group or the session (setsid, a double fork), stays in its
// tree. When the upstream exits, when the guardian is told to stop (SIGTERM: the gateway
// closing the instance, or the kernel's parent-death signal when the gateway dies, even
// by SIGKILL), and when its parent changes, it kills every descendant it has, in rounds
// until none is left, reaping them as it goes (see guardian_linux.go). On macOS it watches
// the gateway with kqueue and takes down its process group and the processes below it
// (guardian_darwin.go); on Windows it runs the upstream in a kill-on-close job object of
// its own (guardian_windows.go). docs/platforms.md compares them.
func RunChild(args []string) {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "mcpgw child: no command")
		os.Exit(2)
	}
	os.Exit(runGuardian(args))
}
