package signin

import (
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
)

// Tally counts refusals per source, so that only some of a source's refusals are written
// down (Sampled): a flood of credential-less or wrong-credential requests must not fill
// the audit log. Memory is bounded as the Guard's: at most 4096 sources, the least
// recently refused forgotten first, and a source quiet for Forget (zero: a quarter of an
// hour) starts afresh.
type Tally struct {
	Forget time.Duration
	now    func() time.Time

	once    sync.Once
	mu      sync.Mutex
	sources *lru.Cache[string, *tallied]
}

type tallied struct {
	n    int
	last time.Time
}

// AuditFirst refusals of a source are each written down; after them, every tenth.
const AuditFirst = 10

// Count records one refusal of src and returns how many src has had, and whether this
// one is to be written down: each of the first AuditFirst, then every tenth.
func (t *Tally) Count(src string) (n int, sampled bool) {
	t.once.Do(func() {
		if t.Forget == 0 {
			t.Forget = defaultForget
		}
		if t.now == nil {
			t.now = time.Now
		}
		t.sources, _ = lru.New[string, *tallied](maxSources)
	})
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	st, ok := t.sources.Get(src)
	if !ok || now.Sub(st.last) > t.Forget {
		st = &tallied{}
		t.sources.Add(src, st)
	}
	st.n++
	st.last = now
	return st.n, Sampled(st.n)
}

// Sampled reports whether the nth refusal of a source is written down: each of the first
// AuditFirst, then every tenth.
func Sampled(n int) bool { return n <= AuditFirst || n%10 == 0 }
