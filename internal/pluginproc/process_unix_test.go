//go:build unix

package pluginproc_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/plugin"
	"github.com/mcpgw/mcpgw/plugin/plugintest"
)

// A plugin process killed from outside is noticed at once: Exited closes, Err says so,
// and calls fail instead of hanging.
func TestKilledProcessIsNoticed(t *testing.T) {
	remote, logs := launch(t, "fixture", nil)
	r, err := remote.Get(context.Background(), "prod", plugintest.Pod, plugin.GetInput{ID: "pid"})
	if err != nil {
		t.Fatal(err)
	}
	pid := int(r["pid"].(int64))
	w := remote.(interface {
		Exited() <-chan struct{}
		Err() error
	})
	select {
	case <-w.Exited():
		t.Fatal("exited before it was killed")
	default:
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.Exited():
	case <-time.After(10 * time.Second):
		t.Fatalf("the killed plugin was not noticed within 10s\nlog:\n%s", logs)
	}
	if err := w.Err(); err == nil || !strings.Contains(err.Error(), "exited") {
		t.Errorf("Err after the kill: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := remote.Get(ctx, "prod", plugintest.Pod, plugin.GetInput{ID: "web-0"}); err == nil || ctx.Err() != nil {
		t.Errorf("a call to the killed plugin: %v (ctx %v)", err, ctx.Err())
	}
}

// Close ends the process, and is not reported as a crash.
func TestCloseEndsTheProcess(t *testing.T) {
	remote, _ := launch(t, "fixture", nil)
	r, err := remote.Get(context.Background(), "prod", plugintest.Pod, plugin.GetInput{ID: "pid"})
	if err != nil {
		t.Fatal(err)
	}
	pid := int(r["pid"].(int64))
	if err := remote.(io.Closer).Close(); err != nil {
		t.Fatal(err)
	}
	// Close returns once go-plugin reaped the process: the pid is gone (or reused by
	// someone else, which signal 0 cannot tell apart; the window is tiny).
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the plugin process %d is still there after Close: %v", pid, err)
	}
	select {
	case <-remote.(interface{ Exited() <-chan struct{} }).Exited():
		t.Error("Close was reported as the process exiting by itself")
	default:
	}
}
