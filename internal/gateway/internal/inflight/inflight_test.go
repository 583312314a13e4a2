package inflight

import (
	"context"
	"slices"
	"testing"
)

type call struct{ n int }
type plug struct{ n int }

// TestCalls: a call is found by its id until dropped; dropping a reused id's earlier
// call keeps the later one; a cancellation finds the call, else the wait.
func TestCalls(t *testing.T) {
	var tb Table[*call, *plug]
	a, b := &call{1}, &call{2}
	tb.AddCall("1", a)
	if c, ok, w := tb.Cancelled("1"); !ok || c != a || w != nil {
		t.Fatalf("Cancelled(1) = %v %v %v", c, ok, w)
	}
	tb.AddCall("1", b) // the client reused the id
	tb.DropCall("1", a)
	if c, ok, _ := tb.Cancelled("1"); !ok || c != b {
		t.Errorf("dropping the earlier call dropped the later one")
	}
	tb.DropCall("1", b)
	if _, ok, _ := tb.Cancelled("1"); ok || tb.Busy() {
		t.Errorf("a dropped call is still found (busy %v)", tb.Busy())
	}
	_, cancel := context.WithCancel(context.Background())
	tb.Wait("2", cancel)
	if _, ok, w := tb.Cancelled("2"); ok || w == nil || !tb.Busy() {
		t.Errorf("a waiting request: found %v, cancel %v, busy %v", ok, w != nil, tb.Busy())
	}
	tb.Unwait("2")
	if _, _, w := tb.Cancelled("2"); w != nil || tb.Busy() {
		t.Errorf("a wait that ended is still found")
	}
}

// TestPluginsAndClose: plugin calls are found by id; Close hands over every call and
// plugin call and refuses plugin calls after it.
func TestPluginsAndClose(t *testing.T) {
	var tb Table[*call, *plug]
	p1, p2 := &plug{1}, &plug{2}
	if !tb.AddPlugin("a", p1) || !tb.AddPlugin("b", p2) {
		t.Fatal("AddPlugin refused on an open table")
	}
	tb.DropPlugin("b", p1) // not b's call: kept
	if p, ok := tb.Plugin("b"); !ok || p != p2 {
		t.Errorf("Plugin(b) = %v %v", p, ok)
	}
	c1 := &call{1}
	tb.AddCall("x", c1)
	calls, plugins := tb.Close()
	if !slices.Equal(calls, []*call{c1}) || len(plugins) != 2 || !slices.Contains(plugins, p1) || !slices.Contains(plugins, p2) {
		t.Errorf("Close handed over %v %v", calls, plugins)
	}
	if tb.AddPlugin("c", &plug{3}) || tb.Busy() {
		t.Errorf("a plugin call was added after Close (busy %v)", tb.Busy())
	}
}
