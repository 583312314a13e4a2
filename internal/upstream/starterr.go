package upstream

import (
	"errors"
	"fmt"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"time"
)

// StartError is a stdio instance that did not start or did not answer initialize: what
// an operator needs to fix it, with secrets taken out (the values of the server's env,
// tokens in its arguments and in URLs). It is the error /readyz, the admin API and a
// session's call result show.
type StartError struct {
	// Command is the command line, redacted.
	Command string
	// ExitCode is the process's exit code; -1 when it did not exit by itself (it was
	// stopped after not answering, or never ran).
	ExitCode int
	// Stderr are the last lines the process wrote to stderr, redacted.
	Stderr []string
	// Cause is why the start failed (initialize's error, or the exec error).
	Cause error
}

func (e *StartError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "command %q", e.Command)
	if e.ExitCode >= 0 {
		fmt.Fprintf(&b, " exited with code %d", e.ExitCode)
	} else {
		b.WriteString(" failed to start")
	}
	fmt.Fprintf(&b, ": %v", e.Cause)
	if len(e.Stderr) > 0 {
		fmt.Fprintf(&b, "; last stderr: %s", strings.Join(e.Stderr, " | "))
	}
	return b.String()
}

func (e *StartError) Unwrap() error { return e.Cause }

// stderrTailLines is how many stderr lines of an instance are kept for its StartError.
const stderrTailLines = 10

// stderrTail keeps the last lines an instance wrote to stderr.
type stderrTail struct {
	mu    sync.Mutex
	lines []string
	done  chan struct{} // closed when stderr ended
}

func newStderrTail() *stderrTail { return &stderrTail{done: make(chan struct{})} }

func (t *stderrTail) add(line string) {
	if len(line) > 500 {
		line = line[:500] + "…"
	}
	t.mu.Lock()
	t.lines = append(t.lines, line)
	if len(t.lines) > stderrTailLines {
		t.lines = t.lines[len(t.lines)-stderrTailLines:]
	}
	t.mu.Unlock()
}

func (t *stderrTail) get() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.lines...)
}

// startError describes why the instance did not start: its command, how it exited (when
// it exited by itself, before the gateway stopped it) and the last of its stderr,
// redacted with the server's env values.
func (t *stdioTransport) startError(cause error, env map[string]string, exitedByItself bool) error {
	code := -1
	if exitedByItself && t.cmd.ProcessState != nil {
		code = t.cmd.ProcessState.ExitCode()
	}
	if t.stderr != nil {
		// The process is gone (or stopped): its last words are on their way.
		select {
		case <-t.stderr.done:
		case <-time.After(200 * time.Millisecond):
		}
	}
	r := newRedactor(env)
	e := &StartError{Command: r.command(t.cmd.Args, t.guarded), ExitCode: code, Cause: cause}
	if t.stderr != nil {
		for _, l := range t.stderr.get() {
			e.Stderr = append(e.Stderr, r.text(l))
		}
	}
	var ee *exec.Error
	if errors.As(cause, &ee) {
		e.Cause = fmt.Errorf("%v", r.text(ee.Err.Error()))
	} else {
		e.Cause = errors.New(r.text(cause.Error()))
	}
	return e
}

// redactor takes secrets out of a command line and text an instance wrote.
type redactor struct{ values []string }

func newRedactor(env map[string]string) redactor {
	var r redactor
	for _, v := range env {
		// Short values ("1", "true", "dev") are settings, not secrets, and would blank
		// out ordinary words.
		if len(v) >= 6 {
			r.values = append(r.values, v)
		}
	}
	return r
}

const redacted = "[redacted]"

var (
	// secretFlag is an argument that names a secret: its value (after = or in the next
	// argument) is redacted.
	secretFlag = regexp.MustCompile(`(?i)^--?[a-z0-9_.-]*(token|secret|password|passwd|api[_-]?key|apikey|auth|credential|private[_-]?key|access[_-]?key)[a-z0-9_.-]*$`)
	// shortSecretFlag is a one-letter flag that takes a password in the CLIs servers are
	// most often wrapped around: -p (mysql, sshpass), -a (redis-cli), -u user:password
	// (curl). Hiding a value that was not a secret only makes the error a little vaguer.
	shortSecretFlag = regexp.MustCompile(`^-[pau]$`)
	// attachedPassword is mysql's -pSECRET.
	attachedPassword = regexp.MustCompile(`^-p.+$`)
	// secretAssign is NAME=value (or --name=value) with a secret-sounding name.
	secretAssign = regexp.MustCompile(`(?i)\b([a-z0-9_.-]*(?:token|secret|password|passwd|api[_-]?key|apikey|credential|private[_-]?key|access[_-]?key)[a-z0-9_.-]*)(\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s&"',;]+)`)
	// bearer is an Authorization value.
	bearer = regexp.MustCompile(`(?i)\b(bearer|basic)\s+[a-z0-9._~+/=-]{8,}`)
	// urlRE finds URLs, whose passwords and secret-sounding query values are redacted.
	urlRE = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'<>]+`)
	// longToken is an opaque token on its own (sk-…, ghp_…, a JWT): 20+ characters of
	// letters, digits and _- with at least one digit, not a path.
	longToken = regexp.MustCompile(`\b(?:sk|pk|rk|ghp|gho|ghs|xox[abp]|glpat|AKIA)[-_]?[A-Za-z0-9_-]{12,}\b|\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*`)
)

// command renders argv with secrets redacted (the guardian's own arguments left out).
func (r redactor) command(argv []string, guarded bool) string {
	args := argv
	if guarded && len(args) >= 2 && args[1] == ChildArg {
		args = args[2:]
	}
	out := make([]string, len(args))
	hideNext := false
	for i, a := range args {
		switch {
		case hideNext:
			out[i] = redacted
			hideNext = false
		case secretFlag.MatchString(a), shortSecretFlag.MatchString(a):
			out[i] = a
			hideNext = true
		case attachedPassword.MatchString(a):
			out[i] = "-p" + redacted
		default:
			out[i] = r.text(a)
		}
	}
	return strings.Join(out, " ")
}

// text redacts env values, NAME=secret pairs, Authorization values, URL passwords and
// secret query values, and well-known token shapes.
func (r redactor) text(s string) string {
	for _, v := range r.values {
		s = strings.ReplaceAll(s, v, redacted)
	}
	s = urlRE.ReplaceAllStringFunc(s, redactURL)
	s = bearer.ReplaceAllString(s, "$1 "+redacted)
	s = secretAssign.ReplaceAllString(s, "$1$2"+redacted)
	s = longToken.ReplaceAllString(s, redacted)
	return s
}

var secretParam = regexp.MustCompile(`(?i)token|secret|password|passwd|key|auth|sig|credential|code`)

func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	changed := false
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "REDACTED")
		} else {
			u.User = url.User("REDACTED")
		}
		changed = true
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			if secretParam.MatchString(k) {
				q[k] = []string{"REDACTED"}
				changed = true
			}
		}
		if changed {
			u.RawQuery = q.Encode()
		}
	}
	if !changed {
		return raw
	}
	return strings.ReplaceAll(u.String(), "REDACTED", redacted)
}
