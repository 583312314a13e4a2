package upstream

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/mcpgw/mcpgw/internal/wire"
)

// linesTransport carries newline-delimited JSON-RPC over a connection to an in-process
// server (InProcess.Connect), as stdio carries it over a process's pipes: one message a
// line each way, every message the server sends related to no call (progress is routed by
// its token, as for stdio).
type linesTransport struct {
	name       string
	rwc        io.ReadWriteCloser
	maxMessage int
	log        *slog.Logger

	wmu      sync.Mutex
	buf      []byte
	doneCh   chan struct{}
	doneOnce sync.Once
	emu      sync.Mutex
	deadErr  error
}

func newLinesTransport(ctx context.Context, o Options, log *slog.Logger) (transport, error) {
	rwc, err := o.InProcess.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect to the in-process server: %w", err)
	}
	return &linesTransport{name: o.Name, rwc: rwc, maxMessage: eventLimit(o.MaxMessageBytes), log: log, doneCh: make(chan struct{})}, nil
}

func (t *linesTransport) start(deliver func([]byte, *Call)) error {
	go func() {
		r := bufio.NewReaderSize(t.rwc, 64<<10)
		for {
			line, err := wire.ReadLine(r, t.maxMessage)
			if len(line) > 0 {
				deliver(line, nil)
			}
			if errors.Is(err, wire.ErrLineTooLarge) {
				t.die(&RestartError{fmt.Sprintf("the in-process server sent a message larger than %d bytes (upstream.max_message_bytes); instance restarted", t.maxMessage)})
				return
			}
			if err != nil {
				if errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, net.ErrClosed) {
					err = errors.New("the in-process server closed the connection")
				}
				t.die(err)
				return
			}
		}
	}()
	return nil
}

// send writes one line. ctx's deadline bounds the write when the connection has
// deadlines (a net.Pipe end has).
func (t *linesTransport) send(ctx context.Context, msg []byte, _ *Call) error {
	select {
	case <-t.doneCh:
		return fmt.Errorf("%w: %v", ErrClosed, t.err())
	default:
	}
	t.wmu.Lock()
	defer t.wmu.Unlock()
	if nc, ok := t.rwc.(interface{ SetWriteDeadline(time.Time) error }); ok {
		d, _ := ctx.Deadline()
		_ = nc.SetWriteDeadline(d)
	}
	t.buf = append(append(t.buf[:0], msg...), '\n')
	if _, err := t.rwc.Write(t.buf); err != nil {
		// The line may be half written: the connection is out of step, so it ends (and
		// the instance is started again at once).
		t.die(&RestartError{fmt.Sprintf("a message to the in-process server could not be written whole: %v; instance restarted", err)})
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: %v", ErrClosed, err)
	}
	if cap(t.buf) > 256<<10 {
		t.buf = nil
	}
	return nil
}

func (t *linesTransport) afterInit(string) {}

func (t *linesTransport) interrupt(*Call) {}

func (t *linesTransport) die(err error) {
	t.doneOnce.Do(func() {
		t.emu.Lock()
		t.deadErr = err
		t.emu.Unlock()
		_ = t.rwc.Close()
		close(t.doneCh)
	})
}

func (t *linesTransport) close() error {
	t.die(ErrClosed)
	return nil
}

func (t *linesTransport) done() <-chan struct{} { return t.doneCh }

func (t *linesTransport) err() error {
	t.emu.Lock()
	defer t.emu.Unlock()
	return t.deadErr
}
