package stateless

import (
	"strconv"
	"testing"
)

type sess struct {
	name  string
	ended bool
}

func newTable() *Table[*sess] { return NewTable(func(s *sess) bool { return !s.ended }) }

func TestTableGetAdd(t *testing.T) {
	tb := newTable()
	if _, ok := tb.Get("k"); ok {
		t.Fatal("empty table has k")
	}
	a := &sess{name: "a"}
	if w, ev := tb.Add("k", "c", a); w != a || len(ev) != 0 {
		t.Fatalf("Add = %v %v", w, ev)
	}
	if s, ok := tb.Get("k"); !ok || s != a {
		t.Fatal("Get after Add")
	}
	// A second first request of the same key loses to the live one.
	b := &sess{name: "b"}
	if w, _ := tb.Add("k", "c", b); w != a {
		t.Errorf("racing Add kept %s, want a", w.name)
	}
	// An ended session is not returned, and its key can be taken.
	a.ended = true
	if _, ok := tb.Get("k"); ok {
		t.Error("Get returned an ended session")
	}
	if w, _ := tb.Add("k", "c", b); w != b {
		t.Errorf("Add over an ended session kept %s", w.name)
	}
}

// TestTableVariants: a caller holds at most Variants sessions; the oldest goes first, and
// other callers are not touched.
func TestTableVariants(t *testing.T) {
	tb := newTable()
	other := &sess{name: "other"}
	tb.Add("o", "c2", other)
	var all []*sess
	var evicted []*sess
	for i := range Variants + 3 {
		s := &sess{name: strconv.Itoa(i)}
		all = append(all, s)
		_, ev := tb.Add("k"+strconv.Itoa(i), "c1", s)
		evicted = append(evicted, ev...)
	}
	if len(evicted) != 3 || evicted[0] != all[0] || evicted[2] != all[2] {
		t.Fatalf("evicted %v, want the three oldest", evicted)
	}
	if _, ok := tb.Get("k0"); ok {
		t.Error("an evicted session is still in the table")
	}
	if s, ok := tb.Get("o"); !ok || s != other {
		t.Error("another caller's session was evicted")
	}
	if n := tb.Len(); n != Variants+1 {
		t.Errorf("table holds %d, want %d", n, Variants+1)
	}
	// Ended sessions are swept on the next Add and free their caller's places.
	for _, s := range all[3:] {
		s.ended = true
	}
	if _, ev := tb.Add("new", "c1", &sess{name: "new"}); len(ev) != 0 {
		t.Errorf("evicted %v although the caller's sessions had ended", ev)
	}
	if n := tb.Len(); n != 2 {
		t.Errorf("after the sweep the table holds %d, want 2", n)
	}
}
