package registry

import "sync"

// crew runs the registry's supervision goroutines, one per server (and its warm pool)
// and one per plugin, and waits for them when the registry closes.
type crew struct {
	wg sync.WaitGroup
	// noPools is Registry.NoPools, read when a server starts.
	noPools func() bool
}

// server starts supervising s in the background; ready (if any) is marked when it first
// came up or failed.
func (c *crew) server(s *Server, ready *sync.WaitGroup) {
	if ready == nil {
		ready = &sync.WaitGroup{}
		ready.Add(1)
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		s.Supervise(ready)
	}()
	if p := s.Pool(); p != nil && !c.noPools() {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			p.Run()
		}()
	}
}

// plugin starts supervising p in the background; ready is called once it first came up
// or failed.
func (c *crew) plugin(p *Plugin, ready func()) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		p.Supervise(ready)
	}()
}
