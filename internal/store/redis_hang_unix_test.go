//go:build unix

package store

// Needs SIGSTOP, which Windows lacks; the helpers are in redis_test.go.

import (
	"errors"
	"syscall"
	"testing"
	"time"
)

// A server that hangs (stopped, black-holed) does not hold callers past the timeout.
func TestRedisHungServerTimesOut(t *testing.T) {
	srv := startRedis(t)
	s := srv.open(t)
	if err := s.Put(record("s1")); err != nil {
		t.Fatal(err)
	}
	if err := srv.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			_ = srv.cmd.Process.Signal(syscall.SIGCONT)
		}
	}
	defer resume()
	start := time.Now()
	_, err := s.Get("s1")
	took := time.Since(start)
	if !errors.Is(err, ErrUnavailable) || took > opTimeout+500*time.Millisecond {
		t.Fatalf("Get on a hung server = %v after %v; want ErrUnavailable within %v", err, took, opTimeout)
	}
	resume()
	eventually(t, 5*time.Second, "store works once the server resumes", func() error {
		_, err := s.Get("s1")
		return err
	})
}
