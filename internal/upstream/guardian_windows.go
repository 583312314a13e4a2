package upstream

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
)

// runGuardian on Windows: the guardian joins a kill-on-close job object of its own before
// it starts the upstream, so the upstream and everything it starts are in that job, and
// all of them end when the guardian does: when the upstream exits (the guardian leaves
// with its status), when the gateway terminates the guardian, and when the gateway dies
// (the gateway's own job ends the guardian; the guardian also waits on its parent's
// handle, for a gateway that could not join a job).
func runGuardian(args []string) int {
	if err := joinKillOnCloseJob(); err != nil {
		fmt.Fprintf(os.Stderr, "mcpgw child: job object: %v; the upstream's children may outlive it\n", err)
	}
	parentGone := parentExit()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "mcpgw child: start %s: %v\n", args[0], err)
		return 127
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		return waitExitCode(err)
	case <-sigs:
		return 143
	case <-parentGone:
		return 1
	}
}
