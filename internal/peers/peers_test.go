package peers

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB whose Fatalf and Skipf record how the test would end.
type recorder struct {
	testing.TB
	ended, msg string
}

type stop struct{}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.ended, r.msg = "fail", fmt.Sprintf(format, args...)
	panic(stop{})
}

func (r *recorder) Skipf(format string, args ...any) {
	r.ended, r.msg = "skip", fmt.Sprintf(format, args...)
	panic(stop{})
}

func run(f func(testing.TB)) (r *recorder) {
	r = &recorder{}
	defer func() {
		if v := recover(); v != nil && v != (stop{}) {
			panic(v)
		}
	}()
	f(r)
	return r
}

func TestMissing(t *testing.T) {
	for _, tc := range []struct{ env, want string }{
		{"", "skip"}, {"0", "skip"}, {"1", "fail"}, {"yes", "fail"},
	} {
		t.Setenv(RequireEnv, tc.env)
		r := run(func(tb testing.TB) { Missing(tb, "redis-server not on PATH", Install) })
		if r.ended != tc.want {
			t.Errorf("%s=%q: the test would %s (%s), want %s", RequireEnv, tc.env, r.ended, r.msg, tc.want)
		}
		for _, s := range []string{"peer missing: redis-server not on PATH", "`make peers`"} {
			if !strings.Contains(r.msg, s) {
				t.Errorf("%s=%q: message %q does not say %q", RequireEnv, tc.env, r.msg, s)
			}
		}
	}
}

func TestCommand(t *testing.T) {
	t.Setenv(RequireEnv, "1")
	dir := t.TempDir()
	t.Setenv("PATH", dir)
	r := run(func(tb testing.TB) { Command(tb, "mcpgw-fake-peer") })
	if r.ended != "fail" || !strings.Contains(r.msg, "mcpgw-fake-peer not on PATH") {
		t.Fatalf("a command not on PATH: the test would %q with %q, want a failure naming it", r.ended, r.msg)
	}
	want := filepath.Join(dir, "mcpgw-fake-peer")
	if err := os.WriteFile(want, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var got string
	if r := run(func(tb testing.TB) { got = Command(tb, "mcpgw-fake-peer") }); r.ended != "" || got != want {
		t.Fatalf("a command on PATH: got %q (the test would %q: %s), want %s", got, r.ended, r.msg, want)
	}
}
