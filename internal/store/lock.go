package store

import (
	"context"
	"crypto/rand"
	mrand "math/rand/v2"
	"sync"
	"time"
)

// errBadTTL refuses a Lock whose holder would have no time at all.
const errBadTTL storeError = "lock: ttl must be positive"

// localLocks are the named locks of one store value in one process (Memory, Bolt). The
// zero value is ready.
type localLocks struct {
	mu   sync.Mutex
	held map[string]*localHold
}

// localHold is one holding of a lock: until its holder unlocks it or until expires, after
// which a waiter may take the lock over (its holder is taken to have died).
type localHold struct {
	expires time.Time
	// freed is closed when the holding ends (unlock or takeover), waking the waiters.
	freed chan struct{}
}

func (l *localLocks) lock(ctx context.Context, name string, ttl time.Duration) (func(), error) {
	if ttl <= 0 {
		return nil, errBadTTL
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		l.mu.Lock()
		h := l.held[name]
		now := time.Now()
		if h == nil || !now.Before(h.expires) {
			if h != nil {
				close(h.freed) // taken over: its holder's unlock will find another holding
			}
			if l.held == nil {
				l.held = map[string]*localHold{}
			}
			mine := &localHold{expires: now.Add(ttl), freed: make(chan struct{})}
			l.held[name] = mine
			l.mu.Unlock()
			return func() { l.unlock(name, mine) }, nil
		}
		freed, wait := h.freed, h.expires.Sub(now)
		l.mu.Unlock()
		t := time.NewTimer(wait)
		select {
		case <-freed:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
}

// unlock ends mine if it is still the lock's holding (not taken over after its ttl);
// calling it again does nothing.
func (l *localLocks) unlock(name string, mine *localHold) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held[name] == mine {
		delete(l.held, name)
		close(mine.freed)
	}
}

// Redis locks: a key per lock holding a random token, set only if absent (SET NX PX), and
// deleted only by the holder of that token (unlockScript).
const (
	// lockPollMin and lockPollMax bound the wait between attempts on a held lock: it
	// doubles from Min to Max (plus jitter, so that waiters do not move in step).
	lockPollMin = 5 * time.Millisecond
	lockPollMax = 250 * time.Millisecond

	unlockScript = `if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end
return 0`
)

func lockKey(name string) string { return "mcpgw:lock:" + keyEscaper.Replace(name) }

// Lock takes the named lock among every replica that shares the Redis server: SET NX PX
// with a random token, retried with a bounded backoff until ctx ends. The key expires
// after ttl, so a replica that dies holding it frees it then; unlock deletes the key only
// if it still holds this holder's token (a holder past its ttl cannot free a lock that
// another has taken since).
func (s *redisLocks) Lock(ctx context.Context, name string, ttl time.Duration) (func(), error) {
	if ttl <= 0 {
		return nil, errBadTTL
	}
	key, token := lockKey(name), rand.Text()
	for wait := lockPollMin; ; wait = min(2*wait, lockPollMax) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c, cancel := context.WithTimeout(ctx, opTimeout)
		ok, err := s.c.SetNX(c, key, token, ttl).Result()
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, s.wrap("lock "+name, err)
		}
		if ok {
			return func() { s.unlock(key, token) }, nil
		}
		t := time.NewTimer(wait/2 + jitter(wait/2))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
}

// unlock deletes key if it holds token. An error leaves the key to expire after its ttl:
// unlock has nobody to tell.
func (s *redisLocks) unlock(key, token string) {
	ctx, cancel := opCtx()
	defer cancel()
	_ = s.scripts.unlock.Run(ctx, s.c, []string{key}, token).Err()
}

// jitter is a random duration in [0, d].
func jitter(d time.Duration) time.Duration {
	return time.Duration(mrand.Int64N(int64(d) + 1))
}
