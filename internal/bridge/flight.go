package bridge

import (
	"sync"
	"time"
)

// flight is the set of client requests sent to the gateway and not answered yet, by their
// raw JSON-RPC id. It is what the bridge waits for when stdin closes.
type flight struct {
	mu   sync.Mutex
	ids  map[string]int // an id the client reused counts twice
	n    int
	idle chan struct{} // closed when n drops to 0; nil while nobody waits
}

func newFlight() *flight { return &flight{ids: map[string]int{}} }

// add records a request in flight.
func (f *flight) add(id string) {
	f.mu.Lock()
	f.ids[id]++
	f.n++
	f.mu.Unlock()
}

// done forgets one request with id; it reports whether there was one.
func (f *flight) done(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.ids[id]
	if c == 0 {
		return false
	}
	if c == 1 {
		delete(f.ids, id)
	} else {
		f.ids[id] = c - 1
	}
	f.n--
	f.wake()
	return true
}

// takeAll forgets every request in flight and returns their ids (one per request).
func (f *flight) takeAll() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for id, c := range f.ids {
		for range c {
			out = append(out, id)
		}
	}
	f.ids = map[string]int{}
	f.n = 0
	f.wake()
	return out
}

func (f *flight) wake() {
	if f.n == 0 && f.idle != nil {
		close(f.idle)
		f.idle = nil
	}
}

// len is how many requests are in flight.
func (f *flight) len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

// wait blocks until nothing is in flight or d passes; it returns how many are left.
func (f *flight) wait(d time.Duration) int {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		f.mu.Lock()
		if f.n == 0 {
			f.mu.Unlock()
			return 0
		}
		if f.idle == nil {
			f.idle = make(chan struct{})
		}
		idle := f.idle
		f.mu.Unlock()
		select {
		case <-idle:
		case <-t.C:
			return f.len()
		}
	}
}
