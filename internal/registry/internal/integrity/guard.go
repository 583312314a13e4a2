package integrity

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgw/mcpgw/internal/store"
)

// The kinds of definitions pinned, and a server's own record.
const (
	KindTool     = "tool"
	KindPrompt   = "prompt"
	KindTemplate = "template"
	// KindInstructions is a server's instructions from its initialize result (name
	// "initialize"): they reach the model as they are, like a description.
	KindInstructions = "instructions"
	KindServer       = "server"
)

// Why a definition is held.
const (
	ReasonFirstUse   = "first_use"  // the server's first catalogue, under first_use: hold
	ReasonChanged    = "changed"    // a pinned definition changed
	ReasonNew        = "new"        // a definition that was not there, on an established server
	ReasonSuspicious = "suspicious" // the heuristics flagged it, under suspicious: hold
	ReasonAmbiguous  = "ambiguous"  // it names a member twice: clients may read it otherwise
)

// Policy is how one server's or plugin's definitions are treated (config integrity).
type Policy struct {
	Mode       string // pin | warn | off
	FirstUse   string // trust | hold
	OnChange   string // hold_new | keep_old
	Suspicious string // flag | hold
	// MaxHeldBytes bounds the JSON of the server's definitions that wait (held, warned or
	// rejected); one past it is not recorded, and so not served (0: no bound).
	MaxHeldBytes int64
	// AcceptedBy, when set, names who accepts a new or changed definition without an
	// admin's review: a plugin's catalogue that follows its data source ("plugin
	// catalogue"), or the admin act that caused the change ("config reload", an admin API
	// call). Such a definition is pinned as it comes and recorded as approved by that
	// name, unless the heuristics flag its text: what a rug pull looks like is held
	// (reason suspicious) whoever accepts the rest. A first catalogue is judged by
	// FirstUse and Suspicious as without it. The heuristics' comparison of description
	// lengths (RuleLong) is left out where it is set: see textFlags.
	AcceptedBy string
}

// Def is one definition as a server serves it now.
type Def struct {
	Kind string
	Name string // the server's own name (a template's uriTemplate)
	Hash string
	Raw  json.RawMessage // canonical JSON
	// Ambiguous: it names a member twice (Raw is then as written, compacted).
	Ambiguous bool
}

// Canonical returns the canonical JSON of a definition (members in key order at every
// depth, compact, no HTML escaping) and its fingerprint, "sha256:" and the hex digest. JSON
// that does not parse is fingerprinted as it is.
func Canonical(raw json.RawMessage) (json.RawMessage, string) {
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	out := raw
	if d.Decode(&v) == nil {
		var b bytes.Buffer
		e := json.NewEncoder(&b)
		e.SetEscapeHTML(false)
		if e.Encode(v) == nil {
			out = bytes.TrimSuffix(b.Bytes(), []byte("\n"))
		}
	}
	sum := sha256.Sum256(out)
	return out, "sha256:" + hex.EncodeToString(sum[:])
}

// NewDef is the Def of raw. An ambiguous definition (one that names a member twice) is
// kept and fingerprinted as it was written, compacted, since its canonical form would
// keep one of the two.
func NewDef(kind, name string, raw json.RawMessage) Def {
	if Ambiguous(raw) {
		var b bytes.Buffer
		c := raw
		if json.Compact(&b, raw) == nil {
			c = b.Bytes()
		}
		sum := sha256.Sum256(c)
		return Def{Kind: kind, Name: name, Hash: "sha256:" + hex.EncodeToString(sum[:]), Raw: c, Ambiguous: true}
	}
	c, h := Canonical(raw)
	return Def{Kind: kind, Name: name, Hash: h, Raw: c}
}

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

// MaxUnapproved bounds the records of one server's definitions that no admin approved
// yet: an upstream that lists new names on every listing adds no more records past it
// (and what it lists beyond is not served).
const MaxUnapproved = 512

// unapproved counts server's records that were never approved, and the bytes of the
// definitions of server that wait (held, warned or rejected).
func (g *Guard) unapproved(server string) (n int, heldBytes int64) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	for _, p := range g.pins {
		if p.Server != server || p.Kind == KindServer {
			continue
		}
		if p.Hash == "" {
			n++
		}
		if p.Held != nil {
			heldBytes += int64(len(p.Held.Def))
		}
	}
	return n, heldBytes
}

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

// Verdict says whether the definition (server, kind, name) with fingerprint hash may be
// served under p: serve, or (keep_old) the approved definition to serve instead (old).
// A definition the guard has no record of is not served (Observe records every one a
// catalogue holds before the catalogue is used).
func (g *Guard) Verdict(server, kind, name, hash string, p Policy) (serve bool, old json.RawMessage) {
	if p.Mode == "off" {
		return true, nil
	}
	g.mu.RLock()
	rec := g.pins[store.PinKey(server, kind, name)]
	g.mu.RUnlock()
	switch {
	case rec == nil:
		return p.Mode == "warn", nil
	case approved(rec, hash) && superseded(rec, hash, p):
		// A catalogue read before the change (a new session's, a stateless caller's, an
		// instance that was not told): the server runs the held version now, so a call
		// would reach what no admin approved.
		return false, nil
	case approved(rec, hash):
		return true, nil
	case p.Mode == "warn" && !slices.Contains(rec.Rejected, hash) && (rec.Held == nil || rec.Held.Hash != hash || rec.Held.Warned):
		return true, nil
	case p.OnChange == "keep_old" && rec.Hash != "":
		return false, rec.Def
	}
	return false, nil
}

// superseded reports whether the server serves, in hash's place, a version of rec that
// is held (waiting, or rejected) and not served while it waits: under pin with hold_new,
// hash, though approved, is not what a call would run. With keep_old the approved version
// is served while the new one waits (the admin chose that), and under warn the new one is
// served anyway.
func superseded(rec *store.Pin, hash string, p Policy) bool {
	h := rec.Held
	return h != nil && h.Hash != hash && !h.Warned && p.Mode != "warn" && p.OnChange != "keep_old"
}

// waiting reports whether rec holds a definition that waits for an admin's decision.
func waiting(rec *store.Pin) bool { return rec.Held != nil && !rec.Held.Rejected }

func approved(rec *store.Pin, hash string) bool {
	return hash != "" && (rec.Hash == hash || slices.Contains(rec.Approved, hash))
}

// Observe records what server serves now (every definition of one catalogue), under p,
// by (config, or api:<who> for a server added through the admin API): on the server's
// first catalogue its definitions are pinned (first_use: trust) or held; afterwards a
// changed or new one is held. It returns how many definitions it held now.
func (g *Guard) Observe(server string, p Policy, defs []Def, by string) int {
	held, _ := g.ObserveAccepting(server, p, defs, by)
	return held
}

// ObserveAccepting is Observe that also counts the new or changed definitions p.AcceptedBy
// accepted (pinned in place of what was approved, or recorded on an established server):
// an acceptance that accepted nothing is still pending for the caller.
func (g *Guard) ObserveAccepting(server string, p Policy, defs []Def, by string) (held, accepted int) {
	if p.Mode == "off" || !g.loaded.Load() {
		return 0, 0 // unread pins: nothing is recorded, and nothing unrecorded is served
	}
	g.wmu.Lock()
	defer g.wmu.Unlock()
	o := observation{g: g, server: server, p: p, by: by, now: time.Now().UTC(),
		established: g.record(server, KindServer, "", false) != nil,
		norm:        descriptionNorm(defs)}
	o.unapproved, o.heldBytes = g.unapproved(server)
	for _, d := range defs {
		if o.one(d) {
			held++
		}
	}
	if !o.established {
		g.put(&store.Pin{Server: server, Kind: KindServer, At: o.now, By: by, Version: 1})
	}
	if held > 0 || o.cleared {
		g.gen.Add(1) // views built before may serve a version this changes (superseded)
	}
	return held, o.accepted
}

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

// textFlags keeps the flags that judge a definition's text itself (phrases addressed to
// the model, invisible or bidirectional characters, text too deep to scan), leaving out
// the comparison of description lengths: a catalogue that is accepted as it comes is
// generated by code the host runs, whose long descriptions (a wide table's find tool) are
// no sign of a rug pull, while the data source's text in it is.
func textFlags(fs []Flag) []Flag {
	return slices.DeleteFunc(fs, func(f Flag) bool { return f.Rule == RuleLong })
}

// descriptionNorm is the median length of the tools' descriptions in defs (0: none).
func descriptionNorm(defs []Def) int {
	var ls []int
	for _, d := range defs {
		if d.Kind == KindTool {
			if n := DescriptionLength(d.Raw); n > 0 {
				ls = append(ls, n)
			}
		}
	}
	if len(ls) < 3 {
		return 0
	}
	slices.Sort(ls)
	return ls[len(ls)/2]
}
