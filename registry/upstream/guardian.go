package upstream

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

// RunChild is the guardian's main: it runs args[0] with args[1:] in the guardian's own
// process group, passing stdio straight through, and kills that whole group when the
// gateway dies (the kernel sends the guardian SIGTERM then, and it also polls its parent)
// or when the upstream exits. It never returns.
func RunChild(args []string) {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "mcpgw child: no command")
		os.Exit(2)
	}
	// The guardian is the leader of its process group (the gateway set Setpgid), and the
	// upstream inherits that group, so killing -pgid reaches every descendant that stayed.
	_ = setSubreaper()
	parent := os.Getppid()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "mcpgw child: start %s: %v\n", args[0], err)
		os.Exit(127)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	tick := time.NewTicker(250 * time.Millisecond)
	killGroup := func() {
		signal.Ignore(syscall.SIGTERM)
		_ = syscall.Kill(0, syscall.SIGTERM)
		time.Sleep(300 * time.Millisecond)
		_ = syscall.Kill(0, syscall.SIGKILL)
	}
	for {
		select {
		case err := <-exited:
			// Reap anything the upstream left in our group, then leave with its status.
			_ = syscall.Kill(0, syscall.SIGKILL)
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
				if code < 0 {
					code = 1
				}
			}
			os.Exit(code)
		case <-sigs:
			killGroup()
			os.Exit(143)
		case <-tick.C:
			if os.Getppid() != parent {
				killGroup()
				os.Exit(1)
			}
		}
	}
}

func setSubreaper() error {
	const prSetChildSubreaper = 36
	_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
