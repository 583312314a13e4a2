package instances

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/upstream"
)

// Supervise keeps a shared server connected, or keeps a per_session server's catalogue
// known (by probing one instance), restarting with exponential back-off.
func (s *Server) Supervise(ready *sync.WaitGroup) {
	var once sync.Once
	markReady := func() { once.Do(ready.Done) }
	defer markReady()
	b := newBackoff(s.host.Timing)
	for attempt := 0; s.ctx.Err() == nil; attempt++ {
		if attempt > 0 {
			s.mu.Lock()
			s.restarts++
			s.mu.Unlock()
			if s.host.OnState != nil {
				s.host.OnState(s.Name, "restart")
			}
		}
		started := time.Now()
		err := s.runOnce(markReady)
		if s.ctx.Err() != nil {
			s.setState(StateStopped, nil, nil, nil, true)
			return
		}
		var re *upstream.RestartError
		if errors.As(err, &re) && time.Since(started) >= time.Second {
			// The gateway ended a working instance (one bad message): start the next at
			// once and keep the tools listed, so calls wait for it instead of failing.
			s.host.Log.Info("upstream restarting", "server", s.Name, "why", err)
			s.setState(StateStarting, err, nil, nil, false)
			continue
		}
		s.host.Log.Warn("upstream down", "server", s.Name, "err", err, "retry_in", b.current())
		// Its last catalogue stays: its tools stay listed, and a call is answered with an
		// error naming it and saying it is down, not as an unknown tool.
		s.setState(StateDown, err, nil, nil, false)
		markReady()
		b.stable(time.Since(started))
		if !b.sleep(s.ctx) {
			s.setState(StateStopped, nil, nil, nil, true)
			return
		}
	}
}

// runOnce connects, lists the catalogue, and (shared) waits until the connection ends.
// For per_session servers it probes once and then waits for a refresh request.
func (s *Server) runOnce(markReady func()) error {
	c, cat, err := s.start()
	if err != nil {
		return err
	}
	for _, p := range cat.Problems {
		s.host.Log.Warn("upstream catalogue problem", "server", s.Name, "problem", p)
	}
	if s.Mode != config.ModeShared {
		// The probe instance only tells us the catalogue; sessions (agents, calls) start
		// their own.
		_ = c.Close()
		s.setState(StateUp, nil, cat, nil, true)
		markReady()
		<-s.ctx.Done()
		return s.ctx.Err()
	}
	s.mu.Lock()
	s.pid = c.Pid()
	s.mu.Unlock()
	s.setState(StateUp, nil, cat, c, true)
	s.host.Log.Info("upstream up", "server", s.Name, "transport", s.Def.Transport(), "tools", len(cat.Tools), "protocol", c.ProtocolVersion)
	markReady()
	// A ping every Timing.KeepAlive notices an upstream that went away without a word (an HTTP
	// server without a standalone stream, a hung process).
	tick := time.NewTicker(s.host.Timing.KeepAlive)
	defer tick.Stop()
	misses := 0
	for {
		select {
		case <-c.Done():
			err := c.Err()
			_ = c.Close()
			if err == nil {
				err = errors.New("connection ended")
			}
			return err
		case <-s.ctx.Done():
			_ = c.Close()
			return s.ctx.Err()
		case <-tick.C:
			ctx, cancel := context.WithTimeout(s.ctx, s.host.Timing.KeepAlive/2)
			_, err := c.Request(ctx, "ping", nil)
			cancel()
			var rpc *upstream.RPCError
			if err == nil || errors.As(err, &rpc) {
				misses = 0 // any answer, even "method not found", is a sign of life
				continue
			}
			if misses++; misses >= 2 {
				_ = c.Close()
				return fmt.Errorf("no answer to ping: %v", err)
			}
		}
	}
}

// start connects to the upstream and reads its catalogue, holding one of the registry's
// start slots meanwhile (startGate): the connect timeout begins once the slot is taken.
func (s *Server) start() (*upstream.Conn, *Catalog, error) {
	release, err := s.host.Gate.enter(s.ctx)
	if err != nil {
		return nil, nil, err
	}
	defer release()
	o := s.probeOptions()
	o.Handler = s.handler()
	c, err := s.host.Dialer.Dial(s.ctx, o)
	if err != nil && o.URL != "" {
		c, err = s.dialRewritten(o, err)
	}
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(s.ctx, s.Def.Timeouts.Connect)
	cat, err := s.readCatalog(ctx, c)
	cancel()
	if err != nil {
		_ = c.Close()
		return nil, nil, err
	}
	return c, cat, nil
}

// Pid returns the process id of a shared stdio upstream (0 if none).
func (s *Server) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pid
}

// dialRewritten is the server's own instance (shared connection or catalogue probe)
// reached through an executor's url_rewrite, for a URL the gateway cannot reach as
// written: a server defined by the address its agents' executors map (a placeholder host,
// a port only the rewrite names) would otherwise be down with no tools, and no session
// could start the instance the rewrite makes reachable. Each distinct rewritten URL is
// tried in executor name order; the first that answers is used. first is the error of
// the URL as written, returned when none answers.
func (s *Server) dialRewritten(o upstream.Options, first error) (*upstream.Conn, error) {
	for _, u := range config.RewrittenURLs(s.host.Config().Executors, o.URL) {
		o.URL = u
		c, err := s.host.Dialer.Dial(s.ctx, o)
		if err == nil {
			s.host.Log.Info("upstream reached through an executor's url_rewrite", "server", s.Name, "url", u, "unreachable", first)
			return c, nil
		}
	}
	return nil, first
}
