package integrity

import (
	"encoding/json"
	"slices"

	"github.com/mcpgw/mcpgw/internal/store"
)

// Verdicts: whether a definition may be served now, under its server's policy.

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
