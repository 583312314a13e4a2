package sessionview

import (
	"slices"
	"sync"
	"testing"

	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/registry"
)

// TestView: a view is built once per key, again for another key or after Forget, and
// concurrent callers of one key share one build.
func TestView(t *testing.T) {
	var st State
	builds := 0
	build := func() *registry.View { builds++; return &registry.View{} }
	f1, f2 := &auth.Filter{}, &auth.Filter{}
	a := st.View(Key{Gen: 1, Filter: f1}, build)
	if b := st.View(Key{Gen: 1, Filter: f1}, build); b != a || builds != 1 {
		t.Errorf("same key: %d builds, same view %v", builds, b == a)
	}
	for i, k := range []Key{{Gen: 2, Filter: f1}, {Gen: 2, Down: 1, Filter: f1}, {Gen: 2, Down: 1, Filter: f2}} {
		if st.View(k, build); builds != i+2 {
			t.Errorf("key %+v: %d builds, want %d", k, builds, i+2)
		}
	}
	st.Forget()
	st.View(Key{Gen: 2, Down: 1, Filter: f2}, build)
	if builds != 5 {
		t.Errorf("after Forget: %d builds, want 5", builds)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() { defer wg.Done(); st.View(Key{Gen: 3}, build) }()
	}
	wg.Wait()
	if builds != 6 {
		t.Errorf("8 concurrent callers of one key: %d builds, want 6", builds)
	}
}

// TestFilter: the filter is made again only for a new policy generation.
func TestFilter(t *testing.T) {
	var st State
	made := 0
	mk := func() *auth.Filter { made++; return &auth.Filter{} }
	a := st.Filter(1, mk)
	if st.Filter(1, mk) != a || made != 1 {
		t.Errorf("same generation made %d filters", made)
	}
	if st.Filter(2, mk) == a || made != 2 {
		t.Errorf("a new generation kept the old filter (%d made)", made)
	}
}

// TestForms: the first form kept for a view stays; a restored record's forms count; the
// form served is the view's, else the last list's.
func TestForms(t *testing.T) {
	var st State
	st.Restore(map[string]string{"h1": "thin"})
	if f, fresh := st.KeepForm("h1", "full"); f != "thin" || fresh {
		t.Errorf("restored form: %q fresh %v", f, fresh)
	}
	if f, fresh := st.KeepForm("h2", "full"); f != "full" || !fresh {
		t.Errorf("new form: %q fresh %v", f, fresh)
	}
	if f, ok := st.Form("h2"); !ok || f != "full" {
		t.Errorf("Form(h2) = %q %v", f, ok)
	}
	// SetForm replaces (a stateless request's form is chosen anew each time), and says so
	// only when the form changed.
	if !st.SetForm("h2", "thin") || st.SetForm("h2", "thin") || !st.SetForm("h4", "search") {
		t.Errorf("SetForm does not report its changes")
	}
	if f, _ := st.Form("h2"); f != "thin" {
		t.Errorf("SetForm(h2, thin) kept %q", f)
	}
	st.SetForm("h2", "full")
	if st.ServedForm("h3") != "" {
		t.Errorf("nothing listed yet, but a form was served")
	}
	st.ListedTools("t1", "o1", "search")
	if st.ServedForm("h3") != "search" || st.ServedForm("h1") != "thin" {
		t.Errorf("ServedForm: %q %q", st.ServedForm("h3"), st.ServedForm("h1"))
	}
	if form, n := st.Summary(); form != "search" || n != 0 {
		t.Errorf("Summary: %q %d", form, n)
	}
}

// TestChanged: nothing shown, nothing to tell; a change of what was shown is told once.
func TestChanged(t *testing.T) {
	var st State
	if tt, to := st.Changed("t1", "o1"); tt || to {
		t.Errorf("told before anything was shown: %v %v", tt, to)
	}
	st.ListedTools("t1", "o1", "full")
	if tt, to := st.Changed("t1", "o1"); tt || to {
		t.Errorf("told with nothing changed: %v %v", tt, to)
	}
	if tt, to := st.Changed("t2", "o1"); !tt || to {
		t.Errorf("tools changed: told %v %v", tt, to)
	}
	if tt, _ := st.Changed("t2", "o1"); tt {
		t.Errorf("told twice")
	}
	st.ListedOthers("o2")
	if _, to := st.Changed("t2", "o3"); !to {
		t.Errorf("others changed: not told")
	}
	var b State
	b.Baseline("t1", "o1")
	b.Baseline("t9", "o9")
	if tt, to := b.Changed("t9", "o9"); !tt || !to {
		t.Errorf("Baseline kept the second call's fingerprints")
	}
}

// TestOwn: each change of a server's down state or catalogue moves Gen; a state set
// twice does not; a snapshot is a copy.
func TestOwn(t *testing.T) {
	var o Own
	g0 := o.Gen()
	if !o.SetDown("a", true) || o.SetDown("a", true) || o.Gen() != g0+1 {
		t.Errorf("SetDown: gen %d, want %d", o.Gen(), g0+1)
	}
	cat := &registry.Catalog{}
	o.SetCatalog("b", cat)
	down, cats := o.Snapshot()
	if !down["a"] || cats["b"] != cat || o.Gen() != g0+2 {
		t.Errorf("Snapshot: %v %v gen %d", down, cats, o.Gen())
	}
	down["z"] = true
	if !o.SetDown("a", false) {
		t.Errorf("SetDown(false) of a down server changed nothing")
	}
	o.DropCatalogs([]string{"b"})
	if d, c := o.Snapshot(); len(d) != 0 || len(c) != 0 {
		t.Errorf("after clearing: %v %v (a snapshot's change leaked back?)", d, c)
	}
}

// TestOwnAwaited: a server's catalogue is waited for once; again after its instance
// stopped (DropCatalogs) or after it left the session's set and came back.
func TestOwnAwaited(t *testing.T) {
	var o Own
	if got := o.Unawaited([]string{"a", "b"}); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("nothing awaited yet: %v", got)
	}
	o.Awaited([]string{"a", "b"})
	if got := o.Unawaited([]string{"a", "b", "c"}); !slices.Equal(got, []string{"c"}) {
		t.Errorf("a server that joined: %v, want [c]", got)
	}
	o.DropCatalogs([]string{"a"})
	if got := o.Unawaited([]string{"a", "b"}); !slices.Equal(got, []string{"a"}) {
		t.Errorf("after a's instance stopped: %v, want [a]", got)
	}
	o.Awaited([]string{"a"})
	o.Unawaited([]string{"a"}) // b left the set
	if got := o.Unawaited([]string{"a", "b"}); !slices.Equal(got, []string{"b"}) {
		t.Errorf("b came back: %v, want [b]", got)
	}
}
