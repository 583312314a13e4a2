package mcptask

import (
	"strconv"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/store"
)

// conn stands for an upstream connection (the dispatcher keys by a weak pointer to it).
type conn struct{ name string }

// Two instances of one server (two agents' per_agent instances, or two sessions' own)
// may both number their tasks "1": a status notification for one instance's task "1"
// must not reach the session of the other's.
func TestBackKeepsInstancesApart(t *testing.T) {
	tb := New(store.NewMemory())
	ca, cb := &conn{"ev"}, &conn{"ev"}
	a, err := tb.Add(Owner("", "alice", "s1"), Route{Server: "ev", UpstreamID: "1", Session: "s1"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	tb.Bind(ca, "1", a, "s1", time.Minute)
	b, err := tb.Add(Owner("", "bob", "s2"), Route{Server: "ev", UpstreamID: "1", Session: "s2"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	tb.Bind(cb, "1", b, "s2", time.Minute)
	// Alice's instance says its task "1" moved on.
	if gw, sid, ok := tb.Back(ca, "1"); !ok || gw != a || sid != "s1" {
		t.Errorf("alice's instance's status for its task 1 goes to session %q (task %q, %v), not alice's", sid, gw, ok)
	}
	if gw, sid, ok := tb.Back(cb, "1"); !ok || gw != b || sid != "s2" {
		t.Errorf("bob's instance's status for its task 1 goes to session %q (task %q, %v), not bob's", sid, gw, ok)
	}
	if _, _, ok := tb.Back(&conn{"ev"}, "1"); ok {
		t.Error("a third instance's task 1 was routed to a session")
	}
}

// An upstream that gives one id to two live tasks of one connection (two sessions on a
// shared instance) has its notifications for that id reach nobody, not the later task's
// session.
func TestBackRefusesAnIDGivenTwice(t *testing.T) {
	tb := New(store.NewMemory())
	c := &conn{"ev"}
	tb.Bind(c, "1", NewID(), "s1", time.Minute)
	tb.Bind(c, "1", NewID(), "s2", time.Minute)
	if id, sid, ok := tb.Back(c, "1"); ok {
		t.Errorf("an id given twice routes to %q (task %q)", sid, id)
	}
	// The same task bound again (a retried answer) stays routed.
	id := NewID()
	tb.Bind(c, "2", id, "s1", time.Minute)
	tb.Bind(c, "2", id, "s1", time.Minute)
	if got, sid, ok := tb.Back(c, "2"); !ok || got != id || sid != "s1" {
		t.Errorf("a task bound twice: %q %q %v", got, sid, ok)
	}
}

// An expired binding routes nowhere, and the index stays bounded.
func TestBackExpiresAndIsBounded(t *testing.T) {
	tb := New(store.NewMemory())
	c := &conn{"ev"}
	tb.Bind(c, "old", NewID(), "s1", time.Minute)
	tb.back.mu.Lock()
	e := tb.back.m[backKey{conn: c, up: "old"}]
	e.expires = time.Now().Add(-time.Second)
	tb.back.m[backKey{conn: c, up: "old"}] = e
	tb.back.mu.Unlock()
	if _, _, ok := tb.Back(c, "old"); ok {
		t.Error("an expired task still routes")
	}
	for i := range backCap + 10 {
		tb.Bind(c, strconv.Itoa(i), "x", "s", time.Minute)
	}
	tb.back.mu.Lock()
	n := len(tb.back.m)
	tb.back.mu.Unlock()
	if n > backCap {
		t.Errorf("the index holds %d entries, more than %d", n, backCap)
	}
}
