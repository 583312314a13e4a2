// Package shown keeps what a client session has been shown: its view (cached until the
// registry, the servers down for it or its policy change), the tools/list form it was
// served for each view, and the list fingerprints it last saw or was told about, which
// decide its list_changed notifications.
package sessionview

import (
	"maps"
	"sync"

	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/registry"
)

// Key is what a session's view is built from: the registry's generation, the session's
// own down-servers generation, and its filter.
type Key struct {
	Gen, Down uint64
	Filter    *auth.Filter
}

// State is one session's. The zero value is ready.
type State struct {
	mu      sync.Mutex
	view    *registry.View
	key     Key
	filt    *auth.Filter
	filtGen uint64
	// forms are the list forms served, by view hash; lastForm the last one served.
	forms    map[string]string
	lastForm string
	// sentTools and sentOthers are the fingerprints of the lists the session was last
	// shown or told about ("": none yet, so no change to tell).
	sentTools, sentOthers string
}

// View is the view kept for k, or the one build makes (kept for k). build runs under the
// state's lock: two callers do not build one view twice.
func (st *State) View(k Key, build func() *registry.View) *registry.View {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.view != nil && st.key == k {
		return st.view
	}
	st.view, st.key = build(), k
	return st.view
}

// Forget drops the kept view: the next is built again (the session's servers or client
// changed).
func (st *State) Forget() {
	st.mu.Lock()
	st.view = nil
	st.mu.Unlock()
}

// Filter is the filter kept for policy generation gen, or the one make makes.
func (st *State) Filter(gen uint64, make func() *auth.Filter) *auth.Filter {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.filt == nil || st.filtGen != gen {
		st.filt, st.filtGen = make(), gen
	}
	return st.filt
}

// Restore starts from the forms a stored session record kept, by view hash.
func (st *State) Restore(forms map[string]string) {
	st.mu.Lock()
	st.forms = maps.Clone(forms)
	st.mu.Unlock()
}

// Form is the list form served for view hash, if one was.
func (st *State) Form(hash string) (string, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	f, ok := st.forms[hash]
	return f, ok
}

// KeepForm keeps form as the one of view hash unless one is kept already, and returns
// the kept one; fresh reports that it is form, kept now.
func (st *State) KeepForm(hash, form string) (kept string, fresh bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if f, ok := st.forms[hash]; ok {
		return f, false
	}
	if st.forms == nil {
		st.forms = map[string]string{}
	}
	st.forms[hash] = form
	return form, true
}

// SetForm makes form the one of view hash, kept or not before; changed reports that
// another (or none) was.
func (st *State) SetForm(hash, form string) (changed bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.forms[hash] == form {
		return false
	}
	if st.forms == nil {
		st.forms = map[string]string{}
	}
	st.forms[hash] = form
	return true
}

// ServedForm reports the form of view hash, else of the last list served ("": none).
func (st *State) ServedForm(hash string) string {
	st.mu.Lock()
	defer st.mu.Unlock()
	if f, ok := st.forms[hash]; ok {
		return f
	}
	return st.lastForm
}

// ListedTools notes a tools/list page served in form, of lists with these fingerprints.
func (st *State) ListedTools(tools, others, form string) {
	st.mu.Lock()
	st.sentTools = tools
	if st.sentOthers == "" {
		st.sentOthers = others
	}
	st.lastForm = form
	st.mu.Unlock()
}

// ListedOthers notes a prompts or resources list served, of lists with fingerprint others.
func (st *State) ListedOthers(others string) {
	st.mu.Lock()
	st.sentOthers = others
	st.mu.Unlock()
}

// Baseline starts comparing from these fingerprints where nothing was shown yet.
func (st *State) Baseline(tools, others string) {
	st.mu.Lock()
	if st.sentTools == "" {
		st.sentTools = tools
	}
	if st.sentOthers == "" {
		st.sentOthers = others
	}
	st.mu.Unlock()
}

// Changed compares the lists' fingerprints with those last shown: each that differs (and
// was shown) is to be told, and is noted as told.
func (st *State) Changed(tools, others string) (toldTools, toldOthers bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	toldTools = st.sentTools != "" && st.sentTools != tools
	toldOthers = st.sentOthers != "" && st.sentOthers != others
	if toldTools {
		st.sentTools = tools
	}
	if toldOthers {
		st.sentOthers = others
	}
	return toldTools, toldOthers
}

// Summary is the last form served and the kept view's tool count, for the admin API.
func (st *State) Summary() (form string, tools int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.view != nil {
		tools = len(st.view.Tools)
	}
	return st.lastForm, tools
}
