package upstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"
)

// RunnerDialer reaches the runners of executors (mcpgw-bridge runner, docs/runners.md):
// it opens, on executor's runner, one stdio server, and gives what it writes to deliver.
// The gateway sets it on its Dialer; nil means no executor has a runner.
type RunnerDialer interface {
	OpenOnRunner(ctx context.Context, executor string, sp RunnerServer, deliver func([]byte), stderr func(string)) (RunnerStream, error)
}

// RunnerServer is what a runner starts: the server's command, arguments, environment (the
// server's own env with the executor's env_injection; not the gateway's) and directory.
type RunnerServer struct {
	Name, Command string
	Args          []string
	Env           map[string]string
	Dir           string
}

// RunnerStream is one server process a runner runs for the gateway.
type RunnerStream interface {
	Send(ctx context.Context, msg []byte) error
	Close() error
	Done() <-chan struct{}
	Err() error
}

// runnerQueue bounds the messages from one runner-hosted server waiting for the
// connection's reader; past it the runner link's reader waits (its other servers too).
const runnerQueue = 256

// runnerTransport is a stdio server started by the runner of an executor instead of on
// the gateway's host: the same JSON-RPC lines, carried by the runner's link.
type runnerTransport struct {
	d        RunnerDialer
	executor string
	sp       RunnerServer
	connect  time.Duration
	log      *slog.Logger
	maxMsg   int

	st        RunnerStream
	in        chan []byte
	oversized atomic.Bool // the server sent a message over maxMsg: its stream was ended
	doneCh    chan struct{}
	exit      error
}

func newRunnerTransport(d RunnerDialer, o Options, log *slog.Logger) *runnerTransport {
	connect := o.ConnectTimeout
	if connect <= 0 {
		connect = 30 * time.Second
	}
	maxMsg := o.MaxMessageBytes
	if maxMsg <= 0 {
		maxMsg = MaxMessageBytes
	}
	return &runnerTransport{d: d, executor: o.Runner, connect: connect, log: log, maxMsg: maxMsg,
		sp:     RunnerServer{Name: o.Name, Command: o.Command, Args: o.Args, Env: o.Env, Dir: o.Dir},
		in:     make(chan []byte, runnerQueue),
		doneCh: make(chan struct{})}
}

func (t *runnerTransport) start(deliver func([]byte, *Call)) error {
	if t.d == nil {
		return fmt.Errorf("executor %q runs its stdio servers on a runner, and this gateway has no runner service", t.executor)
	}
	ctx, cancel := context.WithTimeout(context.Background(), t.connect)
	defer cancel()
	st, err := t.d.OpenOnRunner(ctx, t.executor, t.sp, t.queue, func(line string) {
		t.log.Info("upstream stderr", "server", t.sp.Name, "executor", t.executor, "line", line)
	})
	if err != nil {
		return fmt.Errorf("runner of executor %q: %w", t.executor, err)
	}
	t.st = st
	go func() {
		for {
			select {
			case m := <-t.in:
				if len(m) == 0 {
					t.oversized.Store(true)
					_ = st.Close()
					continue
				}
				deliver(m, nil)
			case <-st.Done():
				// What arrived before the end goes first.
				for len(t.in) > 0 {
					if m := <-t.in; len(m) > 0 {
						deliver(m, nil)
					}
				}
				t.exit = fmt.Errorf("runner of executor %q: %v", t.executor, st.Err())
				if t.oversized.Load() {
					t.exit = &RestartError{fmt.Sprintf("the upstream sent a message larger than %d bytes (upstream.max_message_bytes); instance restarted", t.maxMsg)}
				}
				close(t.doneCh)
				return
			}
		}
	}()
	return nil
}

// queue takes one message off the runner link's reader (whose buffer it must not keep).
func (t *runnerTransport) queue(p []byte) {
	if len(p) > t.maxMsg {
		// The runner's link bounds frames by its own limit; this server's may be lower.
		// The delivering goroutine ends the stream (it may not have been handed over yet).
		p = nil
	}
	m := append([]byte(nil), p...)
	select {
	case t.in <- m:
	case <-t.doneCh:
	}
}

func (t *runnerTransport) send(ctx context.Context, msg []byte, _ *Call) error {
	select {
	case <-t.doneCh:
		return fmt.Errorf("%w: %v", ErrClosed, t.exit)
	default:
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, stdioWriteTimeout)
		defer cancel()
	}
	if err := t.st.Send(ctx, msg); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return fmt.Errorf("%w: runner of executor %q: %v", ErrClosed, t.executor, err)
	}
	return nil
}

func (t *runnerTransport) afterInit(string) {}

func (t *runnerTransport) interrupt(*Call) {}

func (t *runnerTransport) close() error {
	if t.st != nil {
		return t.st.Close()
	}
	return nil
}

func (t *runnerTransport) done() <-chan struct{} { return t.doneCh }

func (t *runnerTransport) err() error {
	select {
	case <-t.doneCh:
		return t.exit
	default:
		return nil
	}
}
