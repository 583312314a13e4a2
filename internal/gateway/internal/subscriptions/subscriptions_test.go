package subscriptions

import (
	"errors"
	"strings"
	"testing"
)

// listen is Listen without limits.
func listen(st *Set, uri, server string) bool {
	first, _ := st.Listen(uri, server, Quota{})
	return first
}

// TestSubscribe: a subscription names its server until unsubscribed.
func TestSubscribe(t *testing.T) {
	var st Set
	_ = st.Subscribe("u", "a", Quota{})
	if !st.Subscribed("u", "a") || st.Subscribed("u", "b") || st.Subscribed("v", "a") {
		t.Errorf("Subscribed answers wrong")
	}
	if s, ok := st.Unsubscribe("u"); !ok || s != "a" || st.Subscribed("u", "a") {
		t.Errorf("Unsubscribe: %q %v", s, ok)
	}
	if _, ok := st.Unsubscribe("u"); ok {
		t.Errorf("a second Unsubscribe found one")
	}
}

// TestListeners: the first listener of a URI subscribes, the last one's leaving ends the
// subscription; a URI served in the gateway names no server.
func TestListeners(t *testing.T) {
	var st Set
	if !listen(&st, "u", "a") || listen(&st, "u", "a") {
		t.Errorf("first: the first listener is not first, or the second is")
	}
	if last, s := st.Unlisten("u"); last || s != "a" || !st.Subscribed("u", "a") {
		t.Errorf("one of two left: last %v server %q", last, s)
	}
	if last, s := st.Unlisten("u"); !last || s != "a" || st.Subscribed("u", "a") {
		t.Errorf("the last left: last %v server %q, still subscribed %v", last, s, st.Subscribed("u", "a"))
	}
	if !listen(&st, "mcpgw+plugin://x", "") || st.Subscribed("mcpgw+plugin://x", "") {
		t.Errorf("a gateway URI: subscribed to a server")
	}
	if last, s := st.Unlisten("mcpgw+plugin://x"); !last || s != "" {
		t.Errorf("gateway URI left: %v %q", last, s)
	}
}

// TestWatches: a watch is taken once; Close hands over every stop and keeps no watch
// after.
func TestWatches(t *testing.T) {
	var st Set
	stopped := 0
	stop := func() { stopped++ }
	if !st.Watch("u", stop) || !st.Watch("v", stop) {
		t.Fatal("Watch refused on an open set")
	}
	if st.TakeWatch("u") == nil || st.TakeWatch("u") != nil {
		t.Errorf("TakeWatch: not once")
	}
	for _, s := range st.Close() {
		s()
	}
	if stopped != 1 {
		t.Errorf("Close handed over %d stops, want 1", stopped)
	}
	if st.Watch("w", stop) {
		t.Errorf("a watch was kept after Close")
	}
}

// TestLimits: a session holds at most PerSession URIs and an agent PerAgent over its
// sessions, a URI once however it is held; a URI over URIBytes is refused; letting go of a
// URI, and closing a session, give room back.
func TestLimits(t *testing.T) {
	var agents Agents
	q := Quota{Limits: Limits{PerSession: 2, PerAgent: 3, URIBytes: 10}, Agent: "a", Agents: &agents}
	wantLimit := func(what string, err error, setting string) {
		t.Helper()
		var le *LimitError
		if !errors.As(err, &le) || le.Setting != setting || !strings.Contains(err.Error(), setting) {
			t.Errorf("%s: %v, want a limit error naming %s", what, err, setting)
		}
	}
	var s1, s2, s3 Set
	wantLimit("a long URI", s1.Subscribe("u-12345678901", "a", q), SettingURIBytes)
	if err := s1.Subscribe("u1", "a", q); err != nil {
		t.Fatal(err)
	}
	if _, err := s1.Listen("u1", "a", q); err != nil { // held already: not counted again
		t.Fatal(err)
	}
	if _, err := s1.Listen("u2", "", q); err != nil {
		t.Fatal(err)
	}
	wantLimit("a third URI in one session", s1.Subscribe("u3", "a", q), SettingPerSession)
	if err := s2.Subscribe("v1", "a", q); err != nil {
		t.Fatal(err)
	}
	wantLimit("the agent's fourth URI", s2.Subscribe("v2", "a", q), SettingPerAgent)
	if err := s3.Subscribe("w1", "a", Quota{Limits: q.Limits, Agent: "b", Agents: &agents}); err != nil {
		t.Errorf("another agent: %v", err)
	}
	// u1 is still held by its listener after the unsubscribe; u2 goes with its listener.
	s1.Unsubscribe("u1")
	if s1.Held() != 2 || agents.Of("a") != 3 {
		t.Errorf("after unsubscribing a listened URI: held %d, agent %d; want 2, 3", s1.Held(), agents.Of("a"))
	}
	s1.Unlisten("u2")
	if err := s2.Subscribe("v2", "a", q); err != nil {
		t.Errorf("after u2 was let go: %v", err)
	}
	s1.Close()
	if agents.Of("a") != 2 || s1.Held() != 0 {
		t.Errorf("after Close: agent holds %d, want 2", agents.Of("a"))
	}
	s1.Unlisten("u1") // a listener that ends after its session: nothing is given back twice
	if agents.Of("a") != 2 {
		t.Errorf("after a late Unlisten: agent holds %d, want 2", agents.Of("a"))
	}
}
