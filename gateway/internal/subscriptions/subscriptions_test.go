package subscriptions

import "testing"

// TestSubscribe: a subscription names its server until unsubscribed.
func TestSubscribe(t *testing.T) {
	var st Set
	st.Subscribe("u", "a")
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
	if !st.Listen("u", "a") || st.Listen("u", "a") {
		t.Errorf("first: the first listener is not first, or the second is")
	}
	if last, s := st.Unlisten("u"); last || s != "a" || !st.Subscribed("u", "a") {
		t.Errorf("one of two left: last %v server %q", last, s)
	}
	if last, s := st.Unlisten("u"); !last || s != "a" || st.Subscribed("u", "a") {
		t.Errorf("the last left: last %v server %q, still subscribed %v", last, s, st.Subscribed("u", "a"))
	}
	if !st.Listen("mcpgw+plugin://x", "") || st.Subscribed("mcpgw+plugin://x", "") {
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
