package integrity

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/mcpgw/mcpgw/internal/store"
)

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
