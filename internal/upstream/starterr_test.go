package upstream

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestRedactCommandAndText(t *testing.T) {
	r := newRedactor(map[string]string{"GITHUB_TOKEN": "ghsecretvalue123", "DEBUG": "1"})
	cases := []struct{ in, want string }{
		{"the token ghsecretvalue123 was refused", "the token [redacted] was refused"},
		{"connect https://user:hunter22@db.example/x?token=abc&page=2", "connect https://user:[redacted]@db.example/x?page=2&token=[redacted]"},
		{"Authorization: Bearer abcdefghijklmnop", "Authorization: Bearer [redacted]"},
		{"API_KEY=s3cr3t-value other=1", "API_KEY=[redacted] other=1"},
		{"using sk-abcdefghijklmnopqrstu now", "using [redacted] now"},
		{"debug level 1 is on", "debug level 1 is on"}, // short env values are not secrets
	}
	for _, c := range cases {
		if got := r.text(c.in); got != c.want {
			t.Errorf("text(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	got := r.command([]string{"npx", "-y", "server", "--api-key", "k-1234567", "--token=abc123", "--url", "https://x.example/?key=zzz", "ghsecretvalue123"}, false)
	want := "npx -y server --api-key [redacted] --token=[redacted] --url https://x.example/?key=[redacted] [redacted]"
	if got != want {
		t.Errorf("command = %q, want %q", got, want)
	}
	// Short password flags: mysql's -p (and -pSECRET), redis-cli's -a, curl's -u user:pass.
	got = r.command([]string{"mysql-mcp", "-h", "db", "-p", "hunter2", "-pHunter3", "-a", "r3dis", "-u", "bob:pw"}, false)
	want = "mysql-mcp -h db -p [redacted] -p[redacted] -a [redacted] -u [redacted]"
	if got != want {
		t.Errorf("command with short secret flags = %q, want %q", got, want)
	}
	if got := r.command([]string{"/bin/mcpgw", ChildArg, "node", "srv.js"}, true); got != "node srv.js" {
		t.Errorf("guarded command = %q", got)
	}
}

// TestStartErrorNamesCommandExitAndStderr: a stdio server that writes to stderr and exits
// before answering initialize fails Dial with its command, exit code and last stderr
// lines, the env secret taken out of all three.
func TestStartErrorNamesCommandExitAndStderr(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the test server is a sh script")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := NewDialer().Dial(ctx, Options{Name: "bad", Transport: "stdio", Command: "sh",
		Args: []string{"-c", `echo "starting with key $SECRET_KEY" >&2; echo "fatal: cannot reach db" >&2; exit 3`, "--password", "pw-visible-no"},
		Env:  map[string]string{"SECRET_KEY": "topsecret-0042"}, ConnectTimeout: 5 * time.Second})
	var se *StartError
	if !errors.As(err, &se) {
		t.Fatalf("Dial error %T %v, want a *StartError", err, err)
	}
	if se.ExitCode != 3 {
		t.Errorf("exit code %d, want 3", se.ExitCode)
	}
	if len(se.Stderr) != 2 || se.Stderr[1] != "fatal: cannot reach db" {
		t.Errorf("stderr %q", se.Stderr)
	}
	msg := se.Error()
	for _, s := range []string{"topsecret-0042", "pw-visible-no"} {
		if strings.Contains(msg, s) {
			t.Errorf("error shows the secret %q: %s", s, msg)
		}
	}
	for _, s := range []string{`command "sh -c`, "exited with code 3", "starting with key [redacted]", "initialize:"} {
		if !strings.Contains(msg, s) {
			t.Errorf("error lacks %q: %s", s, msg)
		}
	}
}

// TestStartErrorCommandNotFound: a command that does not exist says so, with exit code -1.
func TestStartErrorCommandNotFound(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the error text checked is the Unix one")
	}
	_, err := NewDialer().Dial(context.Background(), Options{Name: "bad", Transport: "stdio", Command: "/nonexistent/mcp-server", ConnectTimeout: time.Second})
	var se *StartError
	if !errors.As(err, &se) || se.ExitCode != -1 || !strings.Contains(se.Error(), "no such file") {
		t.Fatalf("Dial error %v", err)
	}
}
