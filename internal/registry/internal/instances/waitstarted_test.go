package instances

import (
	"context"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/config"
)

// TestWaitStarted: a wait for a starting server ends when its state changes (not on a
// timer's next tick), and at its connect timeout when nothing changes.
func TestWaitStarted(t *testing.T) {
	cfg, _, err := config.Parse([]byte("listen: 127.0.0.1:0\nstore: memory\nservers:\n  up:\n    type: streamable_http\n    url: http://127.0.0.1:1/mcp\n    timeouts: {connect: 50ms}\n"))
	if err != nil {
		t.Fatal(err)
	}
	reg := newTestRegistry(t, cfg)
	t.Cleanup(reg.Close)
	s := reg.Server("up")
	if s.WaitStarted(context.Background()) {
		t.Fatal("WaitStarted said started for a server that stayed starting past its connect timeout")
	}

	s.Def.Timeouts.Connect = time.Minute
	done := make(chan bool)
	go func() { done <- s.WaitStarted(context.Background()) }()
	// Its connect timeout is a minute away: only the state change can end the wait in time.
	s.setState(StateUp, nil, &Catalog{}, nil, true)
	select {
	case got := <-done:
		if !got {
			t.Fatal("WaitStarted said not started after the server came up")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WaitStarted did not return within 10 s of the state change")
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s.setState(StateStarting, nil, nil, nil, false)
	if s.WaitStarted(ctx) {
		t.Fatal("WaitStarted with an ended context said started")
	}
}
