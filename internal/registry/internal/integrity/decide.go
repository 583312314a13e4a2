package integrity

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/mcpgw/mcpgw/internal/store"
)

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
