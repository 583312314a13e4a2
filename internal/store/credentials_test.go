package store

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// bounded runs f and fails the test if it has not returned within d, with every
// goroutine's stack (a wait that never ends is the bug these tests look for).
func bounded(t *testing.T, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		buf := make([]byte, 1<<20)
		t.Fatalf("not done within %v; goroutines:\n%s", d, buf[:runtime.Stack(buf, true)])
	}
}

func cred(kind, server, subject, sealed string) *Credential {
	return &Credential{Kind: kind, Server: server, Subject: subject, Sealed: []byte(sealed),
		Updated: time.Date(2026, 11, 27, 1, 0, 0, 0, time.UTC)}
}

// TestCredentialCAS: rev 0 creates only, rev n replaces only the Rev n record, the
// store keeps its own copy and sets Rev, keys with ':' and '%' stay apart, List sorts one
// kind's records, Delete is idempotent and bad keys are refused.
func TestCredentialCAS(t *testing.T) {
	for _, st := range backends {
		t.Run(st.name, func(t *testing.T) {
			s := st.setup(t)(t)
			defer s.Close()
			bounded(t, 20*time.Second, func() { testCredentialCAS(t, s) })
		})
	}
}

func testCredentialCAS(t *testing.T, s Store) {
	c := cred(CredentialGrant, "github", "alice", "sealed-1")
	c.Rev = 99 // ignored: the store sets it
	if rev, err := s.PutCredential(c, 0); err != nil || rev != 1 {
		t.Fatalf("create: %d, %v; want 1", rev, err)
	}
	c.Sealed[0] = 'X' // the store keeps its own copy
	if rev, err := s.PutCredential(cred(CredentialGrant, "github", "alice", "other"), 0); !errors.Is(err, ErrConflict) || rev != 0 {
		t.Fatalf("second create: %d, %v; want ErrConflict", rev, err)
	}
	got, err := s.GetCredential(CredentialGrant, "github", "alice")
	if err != nil || string(got.Sealed) != "sealed-1" || got.Rev != 1 || !got.Updated.Equal(c.Updated) || got.Kind != "grant" {
		t.Fatalf("get after create: %+v, %v", got, err)
	}
	if rev, err := s.PutCredential(cred(CredentialGrant, "github", "alice", "sealed-2"), 1); err != nil || rev != 2 {
		t.Fatalf("CAS from 1: %d, %v; want 2", rev, err)
	}
	for _, stale := range []int64{1, 3, 7} {
		if _, err := s.PutCredential(cred(CredentialGrant, "github", "alice", "lost"), stale); !errors.Is(err, ErrConflict) {
			t.Errorf("CAS from %d with Rev 2 stored: %v, want ErrConflict", stale, err)
		}
	}
	if got, _ := s.GetCredential(CredentialGrant, "github", "alice"); got == nil || string(got.Sealed) != "sealed-2" || got.Rev != 2 {
		t.Fatalf("after conflicts: %+v", got)
	}
	if _, err := s.PutCredential(cred(CredentialGrant, "nobody", "x", "s"), 1); !errors.Is(err, ErrConflict) {
		t.Errorf("CAS from 1 of an absent record: %v, want ErrConflict", err)
	}
	// Updated left zero is set by the store.
	z := cred(CredentialClient, "github", "", "reg")
	z.Updated = time.Time{}
	if _, err := s.PutCredential(z, 0); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetCredential(CredentialClient, "github", ""); err != nil || got.Updated.IsZero() || time.Since(got.Updated) > time.Minute {
		t.Errorf("server-wide record: %+v, %v", got, err)
	}
	// Parts holding ':' and '%' stay apart; List sorts one kind by server, subject.
	for _, k := range [][2]string{{"a:b", "c"}, {"a", "b:c"}, {"a", "b%3Ac"}, {"a", ""}, {"a:b", ""}} {
		if _, err := s.PutCredential(cred(CredentialGrant, k[0], k[1], k[0]+"|"+k[1]), 0); err != nil {
			t.Fatalf("%q: %v", k, err)
		}
	}
	if _, err := s.PutCredential(cred(CredentialFlow, "a", "state1", "flow"), 0); err != nil {
		t.Fatal(err)
	}
	cs, err := s.ListCredentials(CredentialGrant)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, c := range cs {
		if string(c.Sealed) != c.Server+"|"+c.Subject && c.Server != "github" {
			t.Errorf("%s/%s holds %q", c.Server, c.Subject, c.Sealed)
		}
		keys = append(keys, c.Server+"/"+c.Subject)
	}
	if want := "[a/ a/b%3Ac a/b:c a:b/ a:b/c github/alice]"; fmtList(keys) != want {
		t.Errorf("ListCredentials(grant) = %v, want %s", keys, want)
	}
	if cs, err := s.ListCredentials("none"); err != nil || len(cs) != 0 {
		t.Errorf("ListCredentials(none) = %v, %v", cs, err)
	}
	// Delete, then create again from 1; a CAS from the deleted Rev conflicts.
	if err := s.DeleteCredential(CredentialGrant, "github", "alice"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteCredential(CredentialGrant, "github", "alice"); err != nil {
		t.Fatalf("delete of an absent record: %v", err)
	}
	if _, err := s.GetCredential(CredentialGrant, "github", "alice"); !errors.Is(err, ErrNotFound) {
		t.Errorf("after delete: %v, want ErrNotFound", err)
	}
	if _, err := s.PutCredential(cred(CredentialGrant, "github", "alice", "x"), 2); !errors.Is(err, ErrConflict) {
		t.Errorf("CAS from the deleted Rev: %v, want ErrConflict", err)
	}
	if rev, err := s.PutCredential(cred(CredentialGrant, "github", "alice", "x"), 0); err != nil || rev != 1 {
		t.Errorf("create after delete: %d, %v", rev, err)
	}
	for _, bad := range []*Credential{cred("", "s", "x", ""), cred("grant", "", "x", ""), cred("gr\x00ant", "s", "x", ""),
		cred("grant", "s\x00", "x", ""), cred("grant", "s", "x\x00y", "")} {
		if _, err := s.PutCredential(bad, 0); err == nil || errors.Is(err, ErrConflict) {
			t.Errorf("PutCredential(%q/%q/%q) = %v, want a refusal", bad.Kind, bad.Server, bad.Subject, err)
		}
	}
	if _, err := s.PutCredential(cred("grant", "s", "x", ""), -1); err == nil || errors.Is(err, ErrConflict) {
		t.Errorf("rev -1: %v, want a refusal", err)
	}
}

// TestCredentialConcurrentCAS: each round, 8 writers that read the same Rev race to
// replace it; exactly one wins and the others conflict.
func TestCredentialConcurrentCAS(t *testing.T) {
	for _, st := range backends {
		t.Run(st.name, func(t *testing.T) {
			s := st.setup(t)(t)
			defer s.Close()
			bounded(t, 30*time.Second, func() { raceCAS(t, []Store{s}, 20) })
		})
	}
}

// raceCAS runs rounds of 8 concurrent compare-and-sets from one Rev, spread over stores.
func raceCAS(t *testing.T, stores []Store, rounds int) {
	t.Helper()
	rev, err := stores[0].PutCredential(cred(CredentialGrant, "srv", "bob", "r0"), 0)
	if err != nil {
		t.Fatal(err)
	}
	for round := range rounds {
		var wins, conflicts atomic.Int32
		var winner atomic.Value
		start := make(chan struct{})
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				<-start
				v := fmt.Sprintf("round %d writer %d", round, w)
				_, err := stores[w%len(stores)].PutCredential(cred(CredentialGrant, "srv", "bob", v), rev)
				switch {
				case err == nil:
					wins.Add(1)
					winner.Store(v)
				case errors.Is(err, ErrConflict):
					conflicts.Add(1)
				default:
					t.Error(err)
				}
			})
		}
		close(start)
		wg.Wait()
		if wins.Load() != 1 || conflicts.Load() != 7 {
			t.Fatalf("round %d: %d won, %d conflicted; want 1 and 7", round, wins.Load(), conflicts.Load())
		}
		got, err := stores[len(stores)-1].GetCredential(CredentialGrant, "srv", "bob")
		if err != nil || got.Rev != rev+1 || string(got.Sealed) != winner.Load() {
			t.Fatalf("round %d: stored %+v, %v; want Rev %d by %v", round, got, err, rev+1, winner.Load())
		}
		rev = got.Rev
	}
}

// TestCredentialExpiry: a record past its Expires is absent to Get, List and CAS (rev 0
// creates it afresh; its old Rev conflicts), whatever is left of it.
func TestCredentialExpiry(t *testing.T) {
	for _, st := range backends {
		t.Run(st.name, func(t *testing.T) {
			s := st.setup(t)(t)
			defer s.Close()
			bounded(t, 20*time.Second, func() { testCredentialExpiry(t, s) })
		})
	}
}

func testCredentialExpiry(t *testing.T, s Store) {
	past := cred(CredentialFlow, "srv", "gone", "p")
	past.Expires = time.Now().Add(-time.Second)
	soon := cred(CredentialFlow, "srv", "soon", "s")
	soon.Expires = time.Now().Add(400 * time.Millisecond)
	later := cred(CredentialFlow, "srv", "later", "l")
	later.Expires = time.Now().Add(time.Hour)
	for _, c := range []*Credential{past, soon, later, cred(CredentialFlow, "srv", "never", "n")} {
		if _, err := s.PutCredential(c, 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.GetCredential(CredentialFlow, "srv", "gone"); !errors.Is(err, ErrNotFound) {
		t.Errorf("record written expired: %v, want ErrNotFound", err)
	}
	got, err := s.GetCredential(CredentialFlow, "srv", "soon")
	if err != nil || !got.Expires.Equal(soon.Expires) {
		t.Fatalf("record not yet expired: %+v, %v", got, err)
	}
	listed := func() string {
		cs, err := s.ListCredentials(CredentialFlow)
		if err != nil {
			t.Fatal(err)
		}
		var ks []string
		for _, c := range cs {
			ks = append(ks, c.Subject)
		}
		return fmtList(ks)
	}
	if l := listed(); l != "[later never soon]" {
		t.Errorf("List before expiry: %s", l)
	}
	time.Sleep(time.Until(soon.Expires) + 20*time.Millisecond)
	if _, err := s.GetCredential(CredentialFlow, "srv", "soon"); !errors.Is(err, ErrNotFound) {
		t.Errorf("after expiry: %v, want ErrNotFound", err)
	}
	if l := listed(); l != "[later never]" {
		t.Errorf("List after expiry: %s", l)
	}
	if _, err := s.TakeCredential(CredentialFlow, "srv", "soon"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Take after expiry: %v, want ErrNotFound", err)
	}
	if _, err := s.PutCredential(cred(CredentialFlow, "srv", "gone", "again"), 1); !errors.Is(err, ErrConflict) {
		t.Errorf("CAS from an expired record's Rev: %v, want ErrConflict", err)
	}
	if rev, err := s.PutCredential(cred(CredentialFlow, "srv", "gone", "again"), 0); err != nil || rev != 1 {
		t.Errorf("create over an expired record: %d, %v", rev, err)
	}
	if got, err := s.GetCredential(CredentialFlow, "srv", "gone"); err != nil || string(got.Sealed) != "again" || !got.Expires.IsZero() {
		t.Errorf("re-created record: %+v, %v", got, err)
	}
}

// TestCredentialTake: a record is taken once: of two concurrent Takes, one gets it and
// the other ErrNotFound, round after round.
func TestCredentialTake(t *testing.T) {
	for _, st := range backends {
		t.Run(st.name, func(t *testing.T) {
			s := st.setup(t)(t)
			defer s.Close()
			bounded(t, 20*time.Second, func() { raceTake(t, []Store{s, s}, 20) })
		})
	}
}

// raceTake puts a flow record and takes it from two goroutines at once (one per store).
func raceTake(t *testing.T, stores []Store, rounds int) {
	t.Helper()
	if _, err := stores[0].TakeCredential(CredentialFlow, "srv", "absent"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Take of an absent record: %v", err)
	}
	for round := range rounds {
		state := fmt.Sprint("state-", round)
		c := cred(CredentialFlow, "srv", state, "verifier")
		c.Expires = time.Now().Add(time.Minute)
		if _, err := stores[0].PutCredential(c, 0); err != nil {
			t.Fatal(err)
		}
		var got, missed atomic.Int32
		start := make(chan struct{})
		var wg sync.WaitGroup
		for _, s := range stores {
			wg.Go(func() {
				<-start
				c, err := s.TakeCredential(CredentialFlow, "srv", state)
				switch {
				case err == nil && string(c.Sealed) == "verifier" && c.Rev == 1:
					got.Add(1)
				case errors.Is(err, ErrNotFound):
					missed.Add(1)
				default:
					t.Errorf("Take: %+v, %v", c, err)
				}
			})
		}
		close(start)
		wg.Wait()
		if got.Load() != 1 || missed.Load() != int32(len(stores)-1) {
			t.Fatalf("round %d: %d Takes got the record, %d missed", round, got.Load(), missed.Load())
		}
		if _, err := stores[0].GetCredential(CredentialFlow, "srv", state); !errors.Is(err, ErrNotFound) {
			t.Fatalf("round %d: after Take: %v", round, err)
		}
	}
	if cs, err := stores[0].ListCredentials(CredentialFlow); err != nil || len(cs) != 0 {
		t.Errorf("flows left after every Take: %d, %v", len(cs), err)
	}
}

// TestLock: holders of one lock never overlap; the lock of a holder that never unlocks
// is free after its ttl, and that holder's late unlock does not free its successor's; a
// waiter gives up when its ctx ends; other names do not wait.
func TestLock(t *testing.T) {
	for _, st := range backends {
		t.Run(st.name, func(t *testing.T) {
			s := st.setup(t)(t)
			defer s.Close()
			t.Run("exclusion", func(t *testing.T) {
				bounded(t, 30*time.Second, func() { lockExclusion(t, []Store{s}) })
			})
			t.Run("ttl", func(t *testing.T) { bounded(t, 10*time.Second, func() { lockTTL(t, s) }) })
			t.Run("ctx", func(t *testing.T) { bounded(t, 10*time.Second, func() { lockCtx(t, s) }) })
		})
	}
}

// lockExclusion runs 4 goroutines per store that take the lock 10 times each and check,
// inside, that nobody else is.
func lockExclusion(t *testing.T, stores []Store) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var inside, peak, total atomic.Int32
	var wg sync.WaitGroup
	for w := range 4 * len(stores) {
		wg.Go(func() {
			for range 10 {
				unlock, err := stores[w%len(stores)].Lock(ctx, "refresh:srv:bob", 5*time.Second)
				if err != nil {
					t.Error(err)
					return
				}
				n := inside.Add(1)
				if n > peak.Load() {
					peak.Store(n)
				}
				time.Sleep(time.Millisecond)
				total.Add(1)
				inside.Add(-1)
				unlock()
			}
		})
	}
	wg.Wait()
	if peak.Load() != 1 || total.Load() != int32(40*len(stores)) {
		t.Fatalf("%d holders at once (want 1), %d holdings of %d", peak.Load(), total.Load(), 40*len(stores))
	}
}

func lockTTL(t *testing.T, s Store) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	deadUnlock, err := s.Lock(ctx, "ttl", 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	// The holder "dies": it never unlocks in time. A waiter gets the lock after the ttl.
	t0 := time.Now()
	unlock, err := s.Lock(ctx, "ttl", 5*time.Second)
	if err != nil {
		t.Fatalf("lock of a dead holder: %v", err)
	}
	if waited := time.Since(t0); waited < 200*time.Millisecond || waited > 3*time.Second {
		t.Errorf("waited %v for a lock with a 300ms ttl", waited)
	}
	deadUnlock() // late: the lock is another's now
	short, cancelShort := context.WithTimeout(ctx, 150*time.Millisecond)
	defer cancelShort()
	if _, err := s.Lock(short, "ttl", time.Second); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a late unlock freed its successor's lock: %v", err)
	}
	unlock()
	unlock() // a second unlock does nothing
	again, err := s.Lock(ctx, "ttl", time.Second)
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	again()
	if _, err := s.Lock(ctx, "ttl", 0); err == nil {
		t.Error("Lock with ttl 0 accepted")
	}
}

func lockCtx(t *testing.T, s Store) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	unlock, err := s.Lock(ctx, "held", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	short, cancelShort := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancelShort()
	t0 := time.Now()
	if _, err := s.Lock(short, "held", time.Second); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Lock past its ctx's deadline: %v, want DeadlineExceeded", err)
	}
	if waited := time.Since(t0); waited > 2*time.Second {
		t.Errorf("Lock returned %v after its ctx's deadline", waited)
	}
	canceled, cancelNow := context.WithCancel(ctx)
	go func() { time.Sleep(50 * time.Millisecond); cancelNow() }()
	if _, err := s.Lock(canceled, "held", time.Second); !errors.Is(err, context.Canceled) {
		t.Errorf("Lock with its ctx canceled: %v, want Canceled", err)
	}
	other, err := s.Lock(ctx, "other", time.Second)
	if err != nil {
		t.Fatalf("another name waited for a held lock: %v", err)
	}
	other()
}

// TestRedisReplicasShareCredentials: two store values on one redis-server, as two
// replicas: their lock excludes across them, of their concurrent CAS from one Rev one
// wins, and of their Takes of one flow one gets it.
func TestRedisReplicasShareCredentials(t *testing.T) {
	srv := startRedis(t)
	a, b := srv.open(t), srv.open(t)
	stores := []Store{a, b}
	t.Run("lock", func(t *testing.T) { bounded(t, 30*time.Second, func() { lockExclusion(t, stores) }) })
	t.Run("cas", func(t *testing.T) { bounded(t, 30*time.Second, func() { raceCAS(t, stores, 20) }) })
	t.Run("take", func(t *testing.T) { bounded(t, 30*time.Second, func() { raceTake(t, stores, 20) }) })
}

// TestRedisCredentialKeys: the documented keys, escaped; an expiring record has a Redis
// TTL and vanishes by itself, and List drops its id from the index.
func TestRedisCredentialKeys(t *testing.T) {
	s := startRedis(t).open(t)
	bounded(t, 20*time.Second, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c := cred(CredentialFlow, "a:b", "st%te", "x")
		c.Expires = time.Now().Add(300 * time.Millisecond)
		if _, err := s.PutCredential(c, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutCredential(cred(CredentialGrant, "a:b", "", "g"), 0); err != nil {
			t.Fatal(err)
		}
		key := "mcpgw:cred:flow:a%3Ab:st%25te"
		if ttl, err := s.c.PTTL(ctx, key).Result(); err != nil || ttl <= 0 || ttl > 400*time.Millisecond {
			t.Errorf("PTTL %s = %v, %v; want the record's expiry", key, ttl, err)
		}
		if ttl, err := s.c.PTTL(ctx, "mcpgw:cred:grant:a%3Ab:").Result(); err != nil || ttl != -1 {
			t.Errorf("a record with no expiry has PTTL %v, %v; want -1 (none)", ttl, err)
		}
		if m, err := s.c.SMembers(ctx, "mcpgw:creds:flow").Result(); err != nil || fmtList(m) != "[a%3Ab:st%25te]" {
			t.Errorf("flow index: %v, %v", m, err)
		}
		unlock, err := s.Lock(ctx, "refresh:a:b", time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := s.c.Exists(ctx, "mcpgw:lock:refresh%3Aa%3Ab").Result(); err != nil || n != 1 {
			t.Errorf("lock key: %d, %v", n, err)
		}
		unlock()
		if n, err := s.c.Exists(ctx, "mcpgw:lock:refresh%3Aa%3Ab").Result(); err != nil || n != 0 {
			t.Errorf("lock key after unlock: %d, %v", n, err)
		}
		eventually(t, 3*time.Second, "expired record gone from Redis", func() error {
			if n, err := s.c.Exists(ctx, key).Result(); err != nil || n != 0 {
				return fmt.Errorf("%d, %v", n, err)
			}
			return nil
		})
		if cs, err := s.ListCredentials(CredentialFlow); err != nil || len(cs) != 0 {
			t.Errorf("List after expiry: %v, %v", cs, err)
		}
		if n, err := s.c.SCard(ctx, "mcpgw:creds:flow").Result(); err != nil || n != 0 {
			t.Errorf("index after List: %d ids, %v; want the expired one dropped", n, err)
		}
	})
}

// TestPruneCredentials: pruning (PruneConversations, as the gateway runs it, and
// PruneCredentials) deletes expired credentials from memory and bbolt, and keeps others.
func TestPruneCredentials(t *testing.T) {
	b, err := OpenBolt(t.TempDir() + "/mcpgw.db")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	m := NewMemory()
	for name, s := range map[string]interface {
		Store
		PruneCredentials(time.Time) (int, error)
	}{"memory": m, "bolt": b} {
		t.Run(name, func(t *testing.T) {
			bounded(t, 10*time.Second, func() {
				put := func(subject string, expires time.Time) {
					c := cred(CredentialFlow, "srv", subject, "x")
					c.Expires = expires
					if _, err := s.PutCredential(c, 0); err != nil {
						t.Fatal(err)
					}
				}
				now := time.Now()
				put("old1", now.Add(-time.Hour))
				put("old2", now.Add(-time.Second))
				put("new", now.Add(time.Hour))
				put("never", time.Time{})
				if n, err := s.PruneCredentials(now); err != nil || n != 2 {
					t.Errorf("PruneCredentials = %d, %v; want 2", n, err)
				}
				if n, err := s.PruneCredentials(now); err != nil || n != 0 {
					t.Errorf("PruneCredentials again = %d, %v; want 0", n, err)
				}
				if n, err := s.PruneCredentials(now.Add(2 * time.Hour)); err != nil || n != 1 {
					t.Errorf("PruneCredentials 2h later = %d, %v; want 1 (new)", n, err)
				}
				put("old3", time.Now().Add(-time.Second))
				if _, err := PrunerOf(NewCached(s, 8)).PruneConversations(time.Now(), 100); err != nil {
					t.Fatal(err)
				}
				if n, err := s.PruneCredentials(time.Now()); err != nil || n != 0 {
					t.Errorf("PruneConversations left %d expired credentials (%v)", n, err)
				}
				if cs, err := s.ListCredentials(CredentialFlow); err != nil || len(cs) != 1 || cs[0].Subject != "never" {
					t.Errorf("left after pruning: %v, %v", cs, err)
				}
			})
		})
	}
	if len(m.creds) != 1 {
		t.Errorf("memory store holds %d credentials after pruning, want 1", len(m.creds))
	}
}

// TestCachedPassesCredentialsThrough: the cache never serves a credential: a write that
// bypasses it (another replica's) is seen at once.
func TestCachedPassesCredentialsThrough(t *testing.T) {
	m := NewMemory()
	c := NewCached(m, 8)
	if _, err := c.PutCredential(cred(CredentialGrant, "s", "u", "v1"), 0); err != nil {
		t.Fatal(err)
	}
	if got, err := c.GetCredential(CredentialGrant, "s", "u"); err != nil || string(got.Sealed) != "v1" {
		t.Fatalf("%+v, %v", got, err)
	}
	if _, err := m.PutCredential(cred(CredentialGrant, "s", "u", "v2"), 1); err != nil {
		t.Fatal(err)
	}
	if got, err := c.GetCredential(CredentialGrant, "s", "u"); err != nil || string(got.Sealed) != "v2" || got.Rev != 2 {
		t.Errorf("through the cache after another's write: %+v, %v", got, err)
	}
}

// TestBoltCredentialsSurviveReopen: records and their Revs are in the file.
func TestBoltCredentialsSurviveReopen(t *testing.T) {
	path := t.TempDir() + "/mcpgw.db"
	s, err := OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	must(t, firstErr(s.PutCredential(cred(CredentialGrant, "srv", "alice", "t1"), 0)))
	must(t, firstErr(s.PutCredential(cred(CredentialGrant, "srv", "alice", "t2"), 1)))
	must(t, s.Close())
	s, err = OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, err := s.GetCredential(CredentialGrant, "srv", "alice"); err != nil || string(got.Sealed) != "t2" || got.Rev != 2 {
		t.Fatalf("after reopen: %+v, %v", got, err)
	}
	if rev, err := s.PutCredential(cred(CredentialGrant, "srv", "alice", "t3"), 2); err != nil || rev != 3 {
		t.Errorf("CAS after reopen: %d, %v", rev, err)
	}
}

func firstErr(_ int64, err error) error { return err }
