// Package signin slows wrong credentials per source: after a few free tries each further
// one waits a doubling delay, and memory for the sources it remembers is bounded.
package signin

import (
	"sync"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
)

// Guard slows wrong credentials per source (the caller names it): after Free failures,
// each further try must wait a delay that doubles with every failure, from Base up to Max;
// until it has passed, the source's credentials are not even checked (429 with
// Retry-After), so guessing costs time whatever the guesses are. A source with no failure
// for Forget starts afresh, and a success clears it. Memory is bounded: at most 4096
// sources are remembered, the least recently failing forgotten first.
type Guard struct {
	Free   int
	Base   time.Duration
	Max    time.Duration
	Forget time.Duration
	now    func() time.Time

	once    sync.Once
	mu      sync.Mutex
	sources *lru.Cache[string, *state]
	// held counts remembered sources, so a request on the hot path skips the lock when
	// nobody is failing.
	held atomic.Int64
}

// The defaults: five free tries, then 1 s, 2 s, 4 s … at most 5 minutes; a quiet quarter
// of an hour forgets. 300 tries in 15 s become about ten.
const (
	defaultFree   = 5
	defaultBase   = time.Second
	defaultMax    = 5 * time.Minute
	defaultForget = 15 * time.Minute
	maxSources    = 4096
)

type state struct {
	fails int
	last  time.Time
	until time.Time
}

func (s *Guard) init() {
	s.once.Do(func() {
		if s.Free == 0 {
			s.Free = defaultFree
		}
		if s.Base == 0 {
			s.Base = defaultBase
		}
		if s.Max == 0 {
			s.Max = defaultMax
		}
		if s.Forget == 0 {
			s.Forget = defaultForget
		}
		if s.now == nil {
			s.now = time.Now
		}
		s.sources, _ = lru.NewWithEvict(maxSources, func(string, *state) { s.held.Add(-1) })
	})
}

// Wait is how long src must still wait before its next credential is checked (0: now).
func (s *Guard) Wait(src string) time.Duration {
	if !s.Holding() {
		return 0
	}
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.sources.Get(src)
	if !ok {
		return 0
	}
	now := s.now()
	if now.Sub(st.last) > s.Forget {
		s.sources.Remove(src)
		return 0
	}
	if d := st.until.Sub(now); d > 0 {
		return d
	}
	return 0
}

// Failed records a wrong credential from src and returns how many src has had.
func (s *Guard) Failed(src string) int {
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	st, ok := s.sources.Get(src)
	if !ok || now.Sub(st.last) > s.Forget {
		st = &state{}
		if !ok {
			s.held.Add(1)
		}
		s.sources.Add(src, st)
	}
	st.fails++
	st.last = now
	if over := st.fails - s.Free; over > 0 {
		d := s.Max
		if over < 30 {
			d = min(s.Base<<(over-1), s.Max)
		}
		st.until = now.Add(d)
	}
	return st.fails
}

// Succeeded forgets src's failures.
func (s *Guard) Succeeded(src string) {
	if s.held.Load() == 0 {
		return
	}
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sources.Remove(src)
}

// Holding reports whether any source is remembered: when none is, nobody waits, and the
// hot path asks nothing more (no lock).
func (s *Guard) Holding() bool { return s.held.Load() != 0 }
