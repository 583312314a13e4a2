package mcptask

import (
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/store"
)

func TestIDsAreOpaqueAndDistinct(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := NewID()
		if !ValidID(id) {
			t.Fatalf("NewID %q is not ValidID", id)
		}
		if seen[id] {
			t.Fatalf("NewID repeated %q", id)
		}
		seen[id] = true
	}
	for _, bad := range []string{"", "mcpgw-task-", "mcpgw-task-short", "task-1", strings.Repeat("x", 33)} {
		if ValidID(bad) {
			t.Errorf("ValidID(%q) = true", bad)
		}
	}
}

func TestOwnerKeysKeepCallersApart(t *testing.T) {
	a := Owner("alice", "agent", "s1")
	for _, o := range []string{Owner("alice", "agent", "s2"), Owner("alice", "agentx", "s1"), Owner("alic", "eagent", "s1"), Owner("alice", "", "")} {
		if o == a {
			t.Errorf("two owners share a key %s", a)
		}
	}
	if Owner("alice", "agent", "s1") != a {
		t.Error("Owner is not a function of its inputs")
	}
}

func TestOwnershipAndUnknownReadAlike(t *testing.T) {
	tb := New(store.NewMemory())
	alice, bob := Owner("alice", "", "s1"), Owner("bob", "", "s2")
	id, err := tb.Add(alice, Route{Server: "ev", UpstreamID: "up-1", Session: "s1"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(id, "up-1") || strings.Contains(id, "ev") && !strings.HasPrefix(id, idPrefix) {
		t.Errorf("id %q tells of the upstream", id)
	}
	r, ok, err := tb.Get(alice, id)
	if err != nil || !ok || r.Server != "ev" || r.UpstreamID != "up-1" {
		t.Fatalf("owner's Get = %+v %v %v", r, ok, err)
	}
	if _, ok, err := tb.Get(bob, id); ok || err != nil {
		t.Errorf("another owner's Get = %v %v, want not found", ok, err)
	}
	if _, ok, err := tb.Get(alice, NewID()); ok || err != nil {
		t.Errorf("unknown id's Get = %v %v", ok, err)
	}
	if l, _ := tb.List(bob); len(l) != 0 {
		t.Errorf("another owner lists %v", l)
	}
	if l, _ := tb.List(alice); len(l) != 1 || l[0].ID != id {
		t.Errorf("owner lists %v", l)
	}
	if gw, sid, ok := tb.Back("ev", "up-1"); ok {
		t.Errorf("Back of a task no connection was bound for = %q %q", gw, sid)
	}
}

func TestPerOwnerCap(t *testing.T) {
	tb := New(store.NewMemory())
	o := Owner("p", "a", "s")
	for i := range MaxPerOwner {
		if _, err := tb.Add(o, Route{Server: "ev", UpstreamID: NewID()}, time.Minute); err != nil {
			t.Fatalf("task %d: %v", i, err)
		}
	}
	if !strings.Contains(ErrTooMany.Error(), " "+strconv.Itoa(MaxPerOwner)+" ") {
		t.Errorf("ErrTooMany says %q, not the cap %d", ErrTooMany, MaxPerOwner)
	}
	if _, err := tb.Add(o, Route{Server: "ev", UpstreamID: "one-more"}, time.Minute); !errors.Is(err, ErrTooMany) {
		t.Fatalf("task past the cap: %v, want ErrTooMany", err)
	}
	if _, err := tb.Add(Owner("p", "a", "other"), Route{Server: "ev", UpstreamID: "x"}, time.Minute); err != nil {
		t.Fatalf("another owner is held by the first's cap: %v", err)
	}
}

func TestRoutesExpireWithTTL(t *testing.T) {
	tb := New(store.NewMemory())
	o := Owner("p", "", "s")
	id, err := tb.Add(o, Route{Server: "ev", UpstreamID: "u"}, 30*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, ok, _ := tb.Get(o, id)
		if !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a route outlived its ttl by 5 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRoutesOutliveTheProcessOnBolt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcpgw.db")
	st, err := store.OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	o := Owner("p", "", "s")
	id, err := New(st).Add(o, Route{Server: "ev", UpstreamID: "u", Session: "s"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st, err = store.OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, ok, err := New(st).Get(o, id)
	if err != nil || !ok || r.UpstreamID != "u" {
		t.Fatalf("after reopening: %+v %v %v", r, ok, err)
	}
}

// TestBridgedRouteOutlivesTheProcessOnBolt: a translated task's route (a stateless caller's
// task on a session-revision upstream) keeps its mark and where it runs across a restart,
// so that the restarted gateway still translates it and reattaches to its session.
func TestBridgedRouteOutlivesTheProcessOnBolt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcpgw.db")
	st, err := store.OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	o := Owner("p", "a", "")
	want := Route{Server: "ev", UpstreamID: "u", Session: "st", Instance: "i-1", UpSession: "up-s", UpVersion: "2025-11-25", Bridge: true}
	id, err := New(st).Add(o, want, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st, err = store.OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, ok, err := New(st).Get(o, id)
	r.Created = time.Time{}
	if err != nil || !ok || r != want {
		t.Fatalf("after reopening: %+v %v %v, want %+v", r, ok, err, want)
	}
}
