// size: being split (issue 41)
package integrity

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
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

// observation is one Observe: what holds for each definition of the catalogue.
type observation struct {
	g           *Guard
	server, by  string
	p           Policy
	now         time.Time
	established bool
	norm        int   // the description norm of the catalogue (Suspicious)
	cleared     bool  // a rejected version is no longer served: verdicts changed
	unapproved  int   // the server's records no admin approved, bounded by MaxUnapproved
	heldBytes   int64 // the bytes of the server's definitions that wait, bounded by p.MaxHeldBytes
	overBytes   bool  // a definition was left out for MaxHeldBytes (logged once)
	accepted    int   // new or changed definitions p.AcceptedBy accepted
}

// known reports whether rec already says what to do with a definition of fingerprint
// hash: approved, or held as it is.
func known(rec *store.Pin, hash string) bool {
	return rec != nil && (approved(rec, hash) || rec.Held != nil && rec.Held.Hash == hash)
}

// one records one definition and reports whether it held it now.
func (o *observation) one(d Def) bool {
	g := o.g
	if rec := g.record(o.server, d.Kind, d.Name, false); rec != nil && rec.Held != nil && rec.Held.Rejected && approved(rec, d.Hash) {
		// The server serves an approved version again: the rejected one it kept out is no
		// longer what it serves (superseded), and approved catalogues are served again.
		next := store.ClonePin(rec)
		next.Held = nil
		next.Version++
		g.put(next)
		o.cleared = true
		return false
	}
	if known(g.record(o.server, d.Kind, d.Name, false), d.Hash) {
		return false
	}
	// Another replica may have pinned or approved it since this one read it.
	rec := g.record(o.server, d.Kind, d.Name, true)
	if known(rec, d.Hash) {
		return false
	}
	if rec == nil && o.established {
		if o.unapproved >= MaxUnapproved {
			return false // not recorded, so not served (Verdict): the store stays bounded
		}
		o.unapproved++
	}
	flags := Suspicious(d.Raw, o.norm)
	if o.p.AcceptedBy != "" {
		flags = textFlags(flags)
	}
	var flagJSON json.RawMessage
	if len(flags) > 0 {
		flagJSON, _ = json.Marshal(flags)
	}
	next := &store.Pin{Server: o.server, Kind: d.Kind, Name: d.Name, At: o.now}
	if rec != nil {
		next = store.ClonePin(rec)
	}
	next.Version++
	reason := o.reason(d, rec, len(flags) > 0)
	if reason == "" {
		o.pin(next, rec, d, flagJSON)
		return false
	}
	if slices.Contains(next.Rejected, d.Hash) {
		return false // rejected before: it stays out, without asking again
	}
	if !o.fits(rec, d) {
		if rec == nil && o.established {
			o.unapproved-- // not recorded after all
		}
		return false // not recorded, so not served (Verdict): the store stays bounded
	}
	next.Held = &store.HeldDef{Hash: d.Hash, Def: d.Raw, Reason: reason, Since: o.now, Flags: flagJSON,
		Warned: o.p.Mode == "warn" && reason != ReasonAmbiguous}
	g.put(next)
	g.log.Warn("integrity: a definition is held until an admin approves it", "server", o.server, "kind", d.Kind, "name", d.Name, "reason", reason)
	g.emit(Event{Server: o.server, Kind: d.Kind, Name: d.Name, Action: "held", Reason: reason})
	return true
}

// pin records d as rec's approved version (next is rec's copy to write): pinned as it is
// on first sight, or accepted (Policy.AcceptedBy) in place of what rec approved, recorded
// and announced as approved by whoever accepts it. A version an admin rejected stays out.
func (o *observation) pin(next, rec *store.Pin, d Def, flags json.RawMessage) {
	by := o.by
	if o.p.AcceptedBy != "" && slices.Contains(next.Rejected, d.Hash) {
		return // an admin rejected this version: accepting changes does not undo that
	}
	if o.p.AcceptedBy != "" && o.established {
		// Accepted without a review: the approved version before it kept as approved.
		by = o.p.AcceptedBy
		o.accepted++
		if next.Hash != "" && next.Hash != d.Hash {
			next.Approved = append(next.Approved, next.Hash)
			if len(next.Approved) > maxApproved {
				next.Approved = next.Approved[len(next.Approved)-maxApproved:]
			}
		}
		next.Held = nil
	}
	next.Hash, next.Def, next.Flags, next.By, next.At = d.Hash, d.Raw, flags, by, o.now
	o.g.put(next)
	if by == o.by {
		return
	}
	what := ReasonChanged // what it would have been held for
	if rec == nil || rec.Hash == "" {
		what = ReasonNew
	}
	o.g.emit(Event{Server: o.server, Kind: d.Kind, Name: d.Name, Action: "approved", Reason: what, By: by})
	o.cleared = true // views built before judged the record as it was
}

// fits reports whether holding d (in place of what rec holds) keeps the server's waiting
// definitions within p.MaxHeldBytes, and counts it if so.
func (o *observation) fits(rec *store.Pin, d Def) bool {
	size := o.heldBytes + int64(len(d.Raw))
	if rec != nil && rec.Held != nil {
		size -= int64(len(rec.Held.Def))
	}
	if o.p.MaxHeldBytes > 0 && size > o.p.MaxHeldBytes {
		if !o.overBytes {
			o.overBytes = true
			o.g.log.Warn("integrity: the server's definitions that wait for an admin reached integrity.max_held_bytes; what it serves past that is not recorded and not served until some are approved or rejected",
				"server", o.server, "kind", d.Kind, "name", d.Name, "bytes", len(d.Raw), "max_held_bytes", o.p.MaxHeldBytes)
		}
		return false
	}
	o.heldBytes = size
	return true
}

// reason is why d is held ("": it is pinned as it is, on first sight).
func (o *observation) reason(d Def, rec *store.Pin, flagged bool) string {
	switch {
	case d.Ambiguous:
		return ReasonAmbiguous
	case flagged && o.p.Suspicious == "hold":
		return ReasonSuspicious
	case !o.established && o.p.FirstUse == "hold":
		return ReasonFirstUse
	case !o.established:
		return ""
	case flagged && o.p.AcceptedBy != "":
		return ReasonSuspicious // accepted changes do not take what a rug pull looks like
	case o.p.AcceptedBy != "":
		return ""
	case rec == nil || rec.Hash == "":
		return ReasonNew
	}
	return ReasonChanged
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

// ErrNotHeld is what Approve and Reject answer for a definition that waits for nothing.
var ErrNotHeld = errors.New("nothing of that name is held")

// Approve makes the held definitions of server that match (kind and name; "" matches
// every one) the pinned ones, by who. It returns how many it approved.
// It approves whatever is held when it runs: the admin API approves what was reviewed
// (ApproveReviewed); this is for the host's own code.
func (g *Guard) Approve(server, kind, name, by string) (int, error) {
	return g.decide(server, kind, name, by, "approved", approve(by))
}

// approve makes a record's held definition the approved one, by who.
func approve(by string) func(*store.Pin) {
	return func(p *store.Pin) {
		if p.Hash != "" {
			p.Approved = append(p.Approved, p.Hash)
			if len(p.Approved) > maxApproved {
				p.Approved = p.Approved[len(p.Approved)-maxApproved:]
			}
		}
		p.Hash, p.Def, p.Flags, p.At, p.By = p.Held.Hash, p.Held.Def, p.Held.Flags, time.Now().UTC(), by
		p.Rejected = slices.DeleteFunc(p.Rejected, func(h string) bool { return h == p.Hash })
		p.Held = nil
	}
}

// Reject keeps the held definitions of server that match out for good (until they
// change again), by who. It returns how many it rejected.
func (g *Guard) Reject(server, kind, name, by string) (int, error) {
	return g.decide(server, kind, name, by, "rejected", func(p *store.Pin) {
		p.Rejected = append(p.Rejected, p.Held.Hash)
		if len(p.Rejected) > maxRejected {
			p.Rejected = p.Rejected[len(p.Rejected)-maxRejected:]
		}
		p.Held.Rejected = true // kept, so that the record says what the server serves
	})
}

// Reviewed is one held definition as an admin reviewed it: its fingerprint is the one
// the admin read (GET /api/integrity's held.hash).
type Reviewed struct {
	Kind, Name, Hash string
}

// ChangedError is an approval of a definition whose held version is no longer the one
// reviewed: the upstream served another since. Nothing was approved.
type ChangedError struct {
	Kind, Name string
	Reviewed   string // the fingerprint the approval named
	Held       string // the fingerprint held now ("": nothing of it waits)
}

func (e *ChangedError) Error() string {
	if e.Held == "" {
		return fmt.Sprintf("%s %q: nothing of it waits for a decision (the fingerprint reviewed was %s)", e.Kind, e.Name, e.Reviewed)
	}
	return fmt.Sprintf("%s %q changed since it was reviewed: %s was reviewed, %s is held now; read it again (GET /api/integrity) and approve what you read", e.Kind, e.Name, e.Reviewed, e.Held)
}

// ApproveReviewed approves the held definitions of server that the admin reviewed, each
// only if what is held now is the version reviewed (its fingerprint): otherwise nothing
// is approved and the answer is a *ChangedError, so that a version the upstream served
// after the review stays held. It returns how many it approved.
func (g *Guard) ApproveReviewed(server string, reviewed []Reviewed, by string) (int, error) {
	if len(reviewed) == 0 {
		return 0, ErrNotHeld
	}
	g.wmu.Lock()
	defer g.wmu.Unlock()
	g.Reload()
	want := make(map[string]string, len(reviewed))
	for _, r := range reviewed {
		rec := g.record(server, r.Kind, r.Name, false)
		if rec == nil || !waiting(rec) || rec.Held.Hash != r.Hash {
			held := ""
			if rec != nil && waiting(rec) {
				held = rec.Held.Hash
			}
			return 0, &ChangedError{Kind: r.Kind, Name: r.Name, Reviewed: r.Hash, Held: held}
		}
		want[store.PinKey(server, r.Kind, r.Name)] = r.Hash
	}
	return g.decideLocked(server, "approved", by, func(p *store.Pin) bool {
		h, ok := want[store.PinKey(p.Server, p.Kind, p.Name)]
		return ok && p.Held.Hash == h
	}, approve(by))
}

func (g *Guard) decide(server, kind, name, by, action string, apply func(*store.Pin)) (int, error) {
	g.wmu.Lock()
	defer g.wmu.Unlock()
	g.Reload()
	return g.decideLocked(server, action, by, func(p *store.Pin) bool {
		return (kind == "" || p.Kind == kind) && (name == "" || p.Name == name)
	}, apply)
}

// decideLocked applies a decision to every waiting record of server that match admits
// (under wmu, the pins just read again).
func (g *Guard) decideLocked(server, action, by string, match func(*store.Pin) bool, apply func(*store.Pin)) (int, error) {
	n := 0
	for _, p := range g.List() {
		if p.Server != server || !waiting(p) || !match(p) {
			continue
		}
		apply(p)
		p.Version++
		if err := g.store.PutPin(p); err != nil {
			return n, err
		}
		g.mu.Lock()
		g.pins[store.PinKey(p.Server, p.Kind, p.Name)] = p
		g.mu.Unlock()
		n++
		g.emit(Event{Server: server, Kind: p.Kind, Name: p.Name, Action: action, By: by})
	}
	if n == 0 {
		return 0, ErrNotHeld
	}
	g.gen.Add(1)
	return n, nil
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
