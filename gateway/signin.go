package gateway

import (
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/mcpgw/mcpgw/auth"
)

// signinGuard slows wrong credentials per source (gateway.sourceOf): after Free failures,
// each further try must wait a delay that doubles with every failure, from Base up to Max;
// until it has passed, the source's credentials are not even checked (429 with
// Retry-After), so guessing costs time whatever the guesses are. A source with no failure
// for Forget starts afresh, and a success clears it. Memory is bounded: at most Sources
// are remembered, the least recently failing forgotten first.
type signinGuard struct {
	Free   int
	Base   time.Duration
	Max    time.Duration
	Forget time.Duration
	now    func() time.Time

	once    sync.Once
	mu      sync.Mutex
	sources *lru.Cache[string, *signinState]
	// held counts remembered sources, so a request on the hot path skips the lock when
	// nobody is failing.
	held atomic.Int64
}

// The defaults: five free tries, then 1 s, 2 s, 4 s … at most 5 minutes; a quiet quarter
// of an hour forgets. 300 tries in 15 s become about ten.
const (
	signinFree     = 5
	signinBase     = time.Second
	signinMax      = 5 * time.Minute
	signinForget   = 15 * time.Minute
	signinMaxSrc   = 4096
	signinAuditCap = 10 // failures of one source audited one by one before every 10th only
)

type signinState struct {
	fails int
	last  time.Time
	until time.Time
}

func (s *signinGuard) init() {
	s.once.Do(func() {
		if s.Free == 0 {
			s.Free = signinFree
		}
		if s.Base == 0 {
			s.Base = signinBase
		}
		if s.Max == 0 {
			s.Max = signinMax
		}
		if s.Forget == 0 {
			s.Forget = signinForget
		}
		if s.now == nil {
			s.now = time.Now
		}
		s.sources, _ = lru.NewWithEvict(signinMaxSrc, func(string, *signinState) { s.held.Add(-1) })
	})
}

// wait is how long src must still wait before its next credential is checked (0: now).
func (s *signinGuard) wait(src string) time.Duration {
	if s.held.Load() == 0 {
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

// failed records a wrong credential from src and returns how many src has had.
func (s *signinGuard) failed(src string) int {
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	st, ok := s.sources.Get(src)
	if !ok || now.Sub(st.last) > s.Forget {
		st = &signinState{}
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

// succeeded forgets src's failures.
func (s *signinGuard) succeeded(src string) {
	if s.held.Load() == 0 {
		return
	}
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sources.Remove(src)
}

// slowed refuses r with 429 while its source must wait after failed credentials.
func (gk *gatekeeper) slowed(r *http.Request) *auth.Failure {
	if gk.signins.held.Load() == 0 {
		return nil
	}
	d := gk.signins.wait(gk.sourceOf(r))
	if d <= 0 {
		return nil
	}
	secs := int((d + time.Second - 1) / time.Second)
	return &auth.Failure{Status: http.StatusTooManyRequests, Reason: "signin_backoff",
		RetryAfter: strconv.Itoa(secs),
		Message:    "Too Many Requests: too many wrong credentials from " + gk.sourceOf(r) + "; try again in " + strconv.Itoa(secs) + " s"}
}

// credentialFailed records a wrong credential: the source is slowed, the denial audited
// (every one up to signinAuditCap, then every tenth, so a flood cannot fill the audit log)
// and counted.
func (gk *gatekeeper) credentialFailed(r *http.Request, where string) {
	g := gk.g
	src := gk.sourceOf(r)
	n := gk.signins.failed(src)
	g.metrics.Denied("unauthenticated", "bad_credential")
	if n <= signinAuditCap || n%10 == 0 {
		g.audit.Record(auth.AuditEvent{Kind: "denial", Actor: src, Action: where + " credential",
			Outcome: "refused", Rule: "wrong credential (" + strconv.Itoa(n) + " from this source)"})
	}
}
