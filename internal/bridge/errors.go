package bridge

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// startHint is what to do when no daemon listens on the socket.
const startHint = "is `mcpgw serve` running? Start it with `make run` or `mcpgw serve`"

// maxSocketPath is the longest Unix socket path Linux accepts (sun_path is 108 bytes with
// its terminating NUL); macOS allows 103.
const maxSocketPath = 107

// unreachableError is a gateway the bridge could not reach. Its message names the socket
// or URL, what went wrong in words a user can act on, and what to do.
type unreachableError struct {
	where  string        // socket path or URL
	socket bool          // where is a Unix socket
	waited time.Duration // how long the bridge kept trying; 0 for one attempt
	err    error
}

func (e *unreachableError) Unwrap() error { return e.err }

func (e *unreachableError) Error() string {
	s := "gateway unreachable at " + e.where
	if e.waited > 0 {
		s += fmt.Sprintf(" (kept trying for %s)", e.waited)
	}
	return s + ": " + e.reason()
}

func (e *unreachableError) reason() string {
	err := e.err
	if !e.socket {
		if errors.Is(err, syscall.ECONNREFUSED) {
			return "connection refused: nothing listens there; is the gateway running?"
		}
		return err.Error()
	}
	switch {
	case len(e.where) > maxSocketPath:
		return fmt.Sprintf("the socket path is %d bytes, longer than the %d a Unix socket path may have: "+
			"give the daemon a shorter state_dir (the socket is STATE_DIR/mcpgw.sock)", len(e.where), maxSocketPath)
	case errors.Is(err, fs.ErrNotExist):
		return "no socket there; " + startHint + ". A daemon whose config names another state_dir listens " +
			"at STATE_DIR/mcpgw.sock: pass that with --socket or $MCPGW_SOCKET"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied: the socket belongs to another user, and the daemon admits only its own; " +
			"run the bridge as the daemon's user"
	case errors.Is(err, syscall.ECONNREFUSED):
		if fi, serr := os.Stat(e.where); serr == nil && fi.Mode()&fs.ModeSocket == 0 {
			return "the file there is not a socket; pass the daemon's socket with --socket"
		}
		return "connection refused: the socket file is there but no daemon accepts on it (it stopped or " +
			"crashed without removing it); " + startHint
	}
	return err.Error() + "; " + startHint
}

// errNoAnswer is a request whose stream ended before its response: the daemon went away
// mid-call.
var errNoAnswer = errors.New("the gateway closed the connection before answering (it may have restarted); " +
	"the request may or may not have run")

// gaveUpMessage is the error a request still unanswered when the bridge stops waiting
// after stdin closed gets.
func gaveUpMessage(d time.Duration) string {
	return fmt.Sprintf("mcpgw-bridge: stdin closed and the gateway did not answer within %s; stopped waiting", d)
}
