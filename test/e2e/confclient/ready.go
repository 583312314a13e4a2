package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/mcpgw/mcpgw/internal/statedir"
)

// poll calls try until it reports done, the gateway exits, ctx ends or readyLimit
// passes, pausing between attempts; the error says what try saw last.
func (g *gateway) poll(ctx context.Context, what string, try func() (bool, string)) error {
	deadline := time.Now().Add(readyLimit)
	last := "no answer"
	for i := 0; time.Now().Before(deadline); i++ {
		select {
		case <-g.done:
			return fmt.Errorf("%s: mcpgw exited (%v)", what, g.cmd.ProcessState)
		case <-ctx.Done():
			return fmt.Errorf("%s: %w (last: %s)", what, ctx.Err(), last)
		default:
		}
		ok, seen := try()
		if ok {
			return nil
		}
		last = seen
		time.Sleep(min(time.Duration(25*(i+1))*time.Millisecond, 250*time.Millisecond))
	}
	return fmt.Errorf("%s: not within %s (last: %s)", what, readyLimit, last)
}

func (g *gateway) waitHealthy(ctx context.Context) error {
	return g.poll(ctx, "mcpgw /healthz", func() (bool, string) {
		resp, err := g.http.Get(g.base + "/healthz")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
}

// waitUpstream waits until /readyz (read with the gateway's local token, which shows an
// operator its detail) says the scenario server is up: connected and its lists read.
func (g *gateway) waitUpstream(ctx context.Context) error {
	return g.poll(ctx, "upstream "+upstreamName+" up in /readyz", g.upstreamUp)
}

// upstreamUp reports whether /readyz says the scenario server is up, and else what it
// says of it.
func (g *gateway) upstreamUp() (bool, string) {
	tok, err := statedir.ReadToken(g.stateDir)
	if err != nil {
		return false, err.Error()
	}
	req, _ := http.NewRequest(http.MethodGet, g.base+"/readyz", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := g.http.Do(req)
	if err != nil {
		return false, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var r struct {
		Upstreams []struct {
			Name, State, Error string
		} `json:"upstreams"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return false, fmt.Sprintf("HTTP %d: %s", resp.StatusCode, b)
	}
	for _, u := range r.Upstreams {
		if u.Name == upstreamName {
			return u.State == "up", fmt.Sprintf("state %q, error %q", u.State, u.Error)
		}
	}
	return false, fmt.Sprintf("no upstream %q: %s", upstreamName, b)
}
