package store

import (
	"context"
	"hash/maphash"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
)

// DefaultCacheTTL is how long NewCached keeps a session record. With a Redis store
// shared by several replicas, another replica may change or delete a record this one has
// cached: this replica then serves the stale copy for at most the TTL. A record's Put or
// Delete through this wrapper updates or evicts it at once.
const DefaultCacheTTL = 2 * time.Second

// Cached is a Store with an LRU of session records in front (see NewCached).
type Cached struct {
	s   Store
	lru *lru.Cache[string, cachedRecord]
	now func() time.Time
	ttl time.Duration // how long a record is served from the cache

	// gens detect a Put or Delete of the same record (stripe) that ran concurrently with a
	// store read or write, whose result would otherwise be cached over a newer one.
	mu   sync.Mutex
	gens [64]uint64
	seed maphash.Seed
}

// cachedRecord is a record and when it stops being served from the cache. The expiry is
// checked on read rather than swept by a goroutine (golang-lru's expirable LRU starts one
// it never stops, which would leak with every gateway an embedding host creates and closes).
type cachedRecord struct {
	r       *Record
	expires time.Time
}

// NewCached puts an LRU of up to size session records in front of s for Get. Put and
// Delete go to s and then update or evict the entry; tasks, conversations and List pass
// through uncached, as do credentials and locks. Entries expire after DefaultCacheTTL (stale reads across replicas
// are bounded by it). Errors are not cached. BusOf sees through the wrapper (Unwrap).
func NewCached(s Store, size int) Store { return NewCachedTTL(s, size, DefaultCacheTTL) }

// NewCachedTTL is NewCached with entries that expire after ttl (<= 0: DefaultCacheTTL).
func NewCachedTTL(s Store, size int, ttl time.Duration) Store {
	if size <= 0 {
		return s
	}
	if ttl <= 0 {
		ttl = DefaultCacheTTL
	}
	l, _ := lru.New[string, cachedRecord](size) // size > 0: no error
	return &Cached{s: s, lru: l, now: time.Now, ttl: ttl, seed: maphash.MakeSeed()}
}

// Unwrap returns the store behind the cache.
func (c *Cached) Unwrap() Store { return c.s }

func (c *Cached) stripe(id string) *uint64 {
	return &c.gens[maphash.String(c.seed, id)%uint64(len(c.gens))]
}

func (c *Cached) gen(id string) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return *c.stripe(id)
}

// settle records a change of id. It caches r (nil: evicts) if nothing else touched the
// stripe since g was read; otherwise evicts, as the order of the racing writes is unknown.
func (c *Cached) settle(id string, g uint64, r *Record, change bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.stripe(id)
	if r != nil && *p == g {
		c.lru.Add(id, cachedRecord{r: r, expires: c.now().Add(c.ttl)})
	} else {
		c.lru.Remove(id)
	}
	if change {
		*p++
	}
}

func (c *Cached) Get(id string) (*Record, error) {
	if e, ok := c.lru.Get(id); ok {
		if c.now().Before(e.expires) {
			return cloneRecord(e.r), nil
		}
		c.lru.Remove(id)
	}
	g := c.gen(id)
	r, err := c.s.Get(id)
	if err != nil {
		return nil, err
	}
	c.settle(id, g, cloneRecord(r), false)
	return r, nil
}

func (c *Cached) Put(r *Record) error {
	g := c.gen(r.ID)
	cp := cloneRecord(r)
	err := c.s.Put(r)
	if err != nil {
		cp = nil // the store may or may not hold it now
	}
	c.settle(r.ID, g, cp, true)
	return err
}

func (c *Cached) Delete(id string) error {
	err := c.s.Delete(id)
	c.settle(id, 0, nil, true)
	return err
}

// Evict forgets a cached record without touching the store (another replica changed or
// ended it).
func (c *Cached) Evict(id string) { c.settle(id, 0, nil, true) }

// Evict forgets id in s's cache, if s has one, looking through wrappers (Unwrap) as
// BusOf does: a store wrapped to watch its writes still has its cache evicted.
func Evict(s Store, id string) {
	for {
		switch v := s.(type) {
		case interface{ Evict(string) }:
			v.Evict(id)
			return
		case interface{ Unwrap() Store }:
			s = v.Unwrap()
		default:
			return
		}
	}
}

func (c *Cached) List() ([]*Record, error)                          { return c.s.List() }
func (c *Cached) PutTask(t *Task) error                             { return c.s.PutTask(t) }
func (c *Cached) GetTask(id string) (*Task, error)                  { return c.s.GetTask(id) }
func (c *Cached) DeleteTask(id string) error                        { return c.s.DeleteTask(id) }
func (c *Cached) ListTasks() ([]*Task, error)                       { return c.s.ListTasks() }
func (c *Cached) PutConversation(cv *Conversation) error            { return c.s.PutConversation(cv) }
func (c *Cached) PutConfig(e *ConfigEntry) error                    { return c.s.PutConfig(e) }
func (c *Cached) GetConfig(kind, name string) (*ConfigEntry, error) { return c.s.GetConfig(kind, name) }
func (c *Cached) DeleteConfig(kind, name string) error              { return c.s.DeleteConfig(kind, name) }
func (c *Cached) ListConfig() ([]*ConfigEntry, error)               { return c.s.ListConfig() }
func (c *Cached) PutPin(p *Pin) error                               { return c.s.PutPin(p) }
func (c *Cached) GetPin(server, kind, name string) (*Pin, error) {
	return c.s.GetPin(server, kind, name)
}
func (c *Cached) DeletePin(server, kind, name string) error { return c.s.DeletePin(server, kind, name) }
func (c *Cached) ListPins() ([]*Pin, error)                 { return c.s.ListPins() }
func (c *Cached) GetConversation(a, id string) (*Conversation, error) {
	return c.s.GetConversation(a, id)
}

// Credentials and locks pass through: a cached credential could be a refresh token
// another replica has already rotated.
func (c *Cached) PutCredential(cr *Credential, rev int64) (int64, error) {
	return c.s.PutCredential(cr, rev)
}
func (c *Cached) GetCredential(kind, server, subject string) (*Credential, error) {
	return c.s.GetCredential(kind, server, subject)
}
func (c *Cached) DeleteCredential(kind, server, subject string) error {
	return c.s.DeleteCredential(kind, server, subject)
}
func (c *Cached) ListCredentials(kind string) ([]*Credential, error) {
	return c.s.ListCredentials(kind)
}
func (c *Cached) TakeCredential(kind, server, subject string) (*Credential, error) {
	return c.s.TakeCredential(kind, server, subject)
}
func (c *Cached) Lock(ctx context.Context, name string, ttl time.Duration) (func(), error) {
	return c.s.Lock(ctx, name, ttl)
}

func (c *Cached) Close() error {
	c.lru.Purge()
	return c.s.Close()
}
