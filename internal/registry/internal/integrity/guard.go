package integrity

import (
	"errors"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/mcpgw/mcpgw/internal/store"
)

// The guard and its pins: the records it keeps in memory and in the store, read, listed
// and written here. What it decides with them: verdict.go (what may be served),
// observe.go (what a catalogue pins or holds), decide.go (an admin's approvals and
// rejections).

// Store is where pins are kept (a store.Store).
type Store interface {
	PutPin(p *store.Pin) error
	GetPin(server, kind, name string) (*store.Pin, error)
	ListPins() ([]*store.Pin, error)
}

// Event is one hold, approval or rejection, for the audit log and metrics.
type Event struct {
	Server, Kind, Name string
	Action             string // held | approved | rejected
	Reason             string // for held: a Reason; for approved as accepted (Policy.AcceptedBy): new or changed
	By                 string // for approved and rejected: who
}

// Guard keeps the pins of every server and plugin, decides what may be served, and
// records what is held. Its zero value is not usable: use New.
type Guard struct {
	store Store
	log   *slog.Logger
	// OnEvent, when set before use, observes every hold, approval and rejection.
	OnEvent func(Event)

	// wmu serialises what writes records (Observe, Approve, Reject), so that a listing
	// that read a record before an approval cannot write it back over the approval.
	wmu  sync.Mutex
	mu   sync.RWMutex
	pins map[string]*store.Pin // PinKey → record
	// gen changes whenever a verdict may have changed (approval, rejection, reload).
	gen atomic.Uint64
	// loaded: the store's pins were read. Until they are, nothing is recorded (a first
	// sight cannot be told from a change) and nothing unrecorded is served.
	loaded atomic.Bool
}

// Bounds of a record's history.
const (
	maxApproved = 4
	maxRejected = 8
)

// New returns a guard over st, with the pins already in it. When the store does not
// answer, the guard holds everything until Load succeeds (Loaded).
func New(st Store, log *slog.Logger) *Guard {
	g := &Guard{store: st, log: log, pins: map[string]*store.Pin{}}
	if !g.Load() {
		log.Error("integrity: the pins were not read from the store; definitions are held until they are")
	}
	return g
}

// Loaded reports whether the store's pins have been read.
func (g *Guard) Loaded() bool { return g.loaded.Load() }

// Load reads every pin from the store, replacing what the guard had; false when the
// store did not answer (the guard keeps what it had).
func (g *Guard) Load() bool {
	ps, err := g.store.ListPins()
	if err != nil {
		g.log.Warn("integrity: reading the pins", "err", err)
		return false
	}
	m := make(map[string]*store.Pin, len(ps))
	for _, p := range ps {
		m[store.PinKey(p.Server, p.Kind, p.Name)] = p
	}
	g.mu.Lock()
	g.pins = m
	g.mu.Unlock()
	g.loaded.Store(true)
	g.gen.Add(1)
	return true
}

// Gen changes whenever a verdict may have changed.
func (g *Guard) Gen() uint64 { return g.gen.Load() }

// record is the guard's record of (server, kind, name), read again from the store when
// fresh is set (and kept when found).
func (g *Guard) record(server, kind, name string, fresh bool) *store.Pin {
	key := store.PinKey(server, kind, name)
	if fresh {
		p, err := g.store.GetPin(server, kind, name)
		if err == nil {
			g.mu.Lock()
			g.pins[key] = p
			g.mu.Unlock()
			return p
		}
		if !errors.Is(err, store.ErrNotFound) {
			g.log.Warn("integrity: reading a pin", "server", server, "kind", kind, "name", name, "err", err)
		}
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.pins[key]
}

// put keeps p in memory and in the store (a store that fails is logged: the record holds
// in this process, and is written again on its next change).
func (g *Guard) put(p *store.Pin) {
	g.mu.Lock()
	g.pins[store.PinKey(p.Server, p.Kind, p.Name)] = p
	g.mu.Unlock()
	if err := g.store.PutPin(p); err != nil {
		g.log.Error("integrity: writing a pin", "server", p.Server, "kind", p.Kind, "name", p.Name, "err", err)
	}
}

func (g *Guard) emit(ev Event) {
	if g.OnEvent != nil {
		g.OnEvent(ev)
	}
}

// Reload reads every pin from the store again (another replica decided): what it read
// replaces what the guard had.
func (g *Guard) Reload() { g.Load() }

// List returns copies of every record, sorted by server, kind, name.
func (g *Guard) List() []*store.Pin {
	g.mu.RLock()
	out := make([]*store.Pin, 0, len(g.pins))
	for _, p := range g.pins {
		out = append(out, store.ClonePin(p))
	}
	g.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		return store.PinKey(out[i].Server, out[i].Kind, out[i].Name) < store.PinKey(out[j].Server, out[j].Kind, out[j].Name)
	})
	return out
}

// Held reports whether any definition of server is held now.
func (g *Guard) Held(server string) int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	n := 0
	for _, p := range g.pins {
		if p.Server == server && waiting(p) && !p.Held.Warned {
			n++
		}
	}
	return n
}
