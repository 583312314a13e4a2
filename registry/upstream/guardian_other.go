//go:build !linux

package upstream

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

// runGuardian without Linux's subreaper and /proc: it runs the command, kills it when
// told to stop, and exits with its status. Descendants are not tracked here.
func runGuardian(args []string) int {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "mcpgw child: start %s: %v\n", args[0], err)
		return 127
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if code := ee.ExitCode(); code >= 0 {
				return code
			}
			return 1
		}
		if err != nil {
			return 1
		}
		return 0
	case <-sigs:
		_ = cmd.Process.Kill()
		<-exited
		return 143
	}
}
