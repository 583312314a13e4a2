package pluginproc

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"sync"

	"github.com/hashicorp/go-hclog"
)

// lineLogger logs each line written to it (a plugin's stdout or stderr after the
// handshake, which go-plugin carries over gRPC).
type lineLogger struct {
	log    *slog.Logger
	level  slog.Level
	stream string

	mu  sync.Mutex
	buf []byte
}

// maxLine bounds a line kept while waiting for its newline.
const maxLine = 64 << 10

func (l *lineLogger) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			if len(l.buf) > maxLine {
				l.emit(l.buf)
				l.buf = l.buf[:0]
			}
			return len(p), nil
		}
		l.emit(l.buf[:i])
		l.buf = l.buf[i+1:]
	}
}

func (l *lineLogger) emit(line []byte) {
	line = bytes.TrimRight(line, "\r")
	if len(line) > 0 {
		l.log.Log(context.Background(), l.level, "plugin output", "stream", l.stream, "line", string(line))
	}
}

// hcLogger is go-plugin's logger interface over the gateway's slog logger: go-plugin's own
// messages and the plugin's stderr lines (with the level the plugin gave them) land in the
// gateway's log.
type hcLogger struct {
	log  *slog.Logger
	name string
	args []any
}

func newHCLogger(l *slog.Logger, name string) hclog.Logger { return &hcLogger{log: l, name: name} }

func slogLevel(l hclog.Level) slog.Level {
	switch l {
	case hclog.Trace, hclog.Debug:
		return slog.LevelDebug
	case hclog.Warn:
		return slog.LevelWarn
	case hclog.Error:
		return slog.LevelError
	}
	return slog.LevelInfo
}

func (h *hcLogger) Log(level hclog.Level, msg string, args ...any) {
	if level == hclog.Off {
		return
	}
	all := append(append([]any{}, h.args...), args...)
	if h.name != "" {
		all = append(all, "source", h.name)
	}
	h.log.Log(context.Background(), slogLevel(level), msg, all...)
}

func (h *hcLogger) Trace(msg string, args ...any) { h.Log(hclog.Trace, msg, args...) }
func (h *hcLogger) Debug(msg string, args ...any) { h.Log(hclog.Debug, msg, args...) }
func (h *hcLogger) Info(msg string, args ...any)  { h.Log(hclog.Info, msg, args...) }
func (h *hcLogger) Warn(msg string, args ...any)  { h.Log(hclog.Warn, msg, args...) }
func (h *hcLogger) Error(msg string, args ...any) { h.Log(hclog.Error, msg, args...) }

func (h *hcLogger) enabled(l slog.Level) bool { return h.log.Enabled(context.Background(), l) }
func (h *hcLogger) IsTrace() bool             { return h.enabled(slog.LevelDebug) }
func (h *hcLogger) IsDebug() bool             { return h.enabled(slog.LevelDebug) }
func (h *hcLogger) IsInfo() bool              { return h.enabled(slog.LevelInfo) }
func (h *hcLogger) IsWarn() bool              { return h.enabled(slog.LevelWarn) }
func (h *hcLogger) IsError() bool             { return h.enabled(slog.LevelError) }
func (h *hcLogger) ImpliedArgs() []any        { return h.args }

func (h *hcLogger) With(args ...any) hclog.Logger {
	return &hcLogger{log: h.log, name: h.name, args: append(append([]any{}, h.args...), args...)}
}

func (h *hcLogger) Name() string { return h.name }

func (h *hcLogger) Named(name string) hclog.Logger {
	n := name
	if h.name != "" {
		n = h.name + "." + name
	}
	return &hcLogger{log: h.log, name: n, args: h.args}
}

func (h *hcLogger) ResetNamed(name string) hclog.Logger {
	return &hcLogger{log: h.log, name: name, args: h.args}
}

// SetLevel does nothing: the gateway's logger decides.
func (h *hcLogger) SetLevel(hclog.Level) {}

func (h *hcLogger) GetLevel() hclog.Level {
	switch {
	case h.enabled(slog.LevelDebug):
		return hclog.Debug
	case h.enabled(slog.LevelInfo):
		return hclog.Info
	case h.enabled(slog.LevelWarn):
		return hclog.Warn
	}
	return hclog.Error
}

func (h *hcLogger) StandardLogger(opts *hclog.StandardLoggerOptions) *log.Logger {
	return log.New(h.StandardWriter(opts), "", 0)
}

func (h *hcLogger) StandardWriter(*hclog.StandardLoggerOptions) io.Writer {
	return &lineLogger{log: h.log, level: slog.LevelInfo, stream: fmt.Sprintf("go-plugin %s", h.name)}
}
