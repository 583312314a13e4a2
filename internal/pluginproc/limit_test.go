package pluginproc_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/pluginproc"
	"github.com/mcpgw/mcpgw/plugin"
	"github.com/mcpgw/mcpgw/plugin/plugintest"
)

// launchLimited launches this test binary serving mode, with the host's bound of one answer.
func launchLimited(t *testing.T, mode string, maxMessage int) plugin.Plugin {
	t.Helper()
	logs := &logBuffer{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := pluginproc.Launch(ctx, pluginproc.Command{Name: mode, Path: os.Args[0], Env: []string{serveEnv + "=" + mode},
		MaxMessageBytes: maxMessage, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatalf("launch %s: %v\nlog:\n%s", mode, err, logs)
	}
	t.Cleanup(func() { p.(io.Closer).Close() })
	return p
}

// TestAnswerLimit: an answer larger than Command.MaxMessageBytes is refused as
// plugin.ErrTooLarge, by the plugin (told the bound, it sends nothing that large, and its
// provider sees the bound) or, for a plugin that does not know it, by the host's gRPC
// receive limit, which reads the message's length before its body. Small answers pass.
// (The host used to take go-plugin's 2 GiB default: a 200 MB resource crossed whole.)
func TestAnswerLimit(t *testing.T) {
	const limit = 64 << 10
	ctx := context.Background()
	for _, tc := range []struct{ mode, says string }{
		{"fixture", "the most the host reads"},
		{"fixture-unbounded", "larger than max"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			remote := launchLimited(t, tc.mode, limit)
			_, err := remote.Get(ctx, "prod", plugintest.Pod, plugin.GetInput{ID: "huge-answer"})
			if !errors.Is(err, plugin.ErrTooLarge) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("a 1 MiB answer over a %d-byte bound: %v; want plugin.ErrTooLarge saying %q", limit, err, tc.says)
			}
			r, err := remote.Get(ctx, "prod", plugintest.Pod, plugin.GetInput{ID: "max-result"})
			if err != nil {
				t.Fatal(err)
			}
			want := int64(limit)
			if tc.mode == "fixture-unbounded" {
				want = 0
			}
			if r["max"] != want {
				t.Errorf("the provider's plugin.MaxResultBytes: %v, want %d", r["max"], want)
			}
			if _, err := remote.Get(ctx, "prod", plugintest.Pod, plugin.GetInput{ID: "web-0", Namespace: "default"}); err != nil {
				t.Errorf("a small answer after the refusal: %v", err)
			}
		})
	}
}
