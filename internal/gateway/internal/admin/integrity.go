package admin

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/store"
)

// integrityAPI is the admin API's integrity records (/api/integrity): pinned and held
// definitions, and the approval or rejection of held ones.
type integrityAPI struct{ port Port }

// PinRow is one definition's integrity record as GET /api/integrity shows it.
type PinRow struct {
	Server string `json:"server"`
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	// State is pinned (served as approved), held (waiting for an admin, not served),
	// warned (waiting for review, served: policy warn) or rejected (an admin rejected what
	// the server serves now: not served, waiting for nothing).
	State      string               `json:"state"`
	Hash       string               `json:"hash,omitempty"`
	ApprovedAt time.Time            `json:"approved_at"`
	ApprovedBy string               `json:"approved_by,omitempty"`
	Flags      json.RawMessage      `json:"flags,omitempty"`
	Held       *HeldRow             `json:"held,omitempty"`
	Diff       []registry.DefChange `json:"diff,omitempty"`
	Rejected   int                  `json:"rejected,omitempty"`
}

// HeldRow is the definition that waits.
type HeldRow struct {
	Hash   string          `json:"hash"`
	Reason string          `json:"reason"`
	Since  time.Time       `json:"since"`
	Flags  json.RawMessage `json:"flags,omitempty"`
	Def    json.RawMessage `json:"definition"`
	// Old is the approved definition it would replace (none: a new one).
	Old json.RawMessage `json:"approved_definition,omitempty"`
}

// ServeIntegrity lists the integrity records a page at a time: every definition pinned or
// held, with a field-level diff for each held one (?server= narrows to one server or
// plugin, ?state=held to what waits; ?limit= rows a page, ?cursor= the next_cursor of the
// page before).
func (a integrityAPI) ServeIntegrity(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	iq := IntegrityQuery{Server: q.Get("server"), State: q.Get("state"), Cursor: q.Get("cursor")}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > MaxIntegrityPage {
			Error(w, http.StatusBadRequest, fmt.Sprintf("limit %q is not a number from 1 to %d", l, MaxIntegrityPage))
			return
		}
		iq.Limit = n
	}
	pg, err := a.rows(iq)
	if err != nil {
		Error(w, http.StatusBadRequest, err.Error())
		return
	}
	body := map[string]any{"definitions": pg.Rows, "held_by_server": pg.HeldByServer}
	if pg.Next != "" {
		body["next_cursor"] = pg.Next
	}
	JSON(w, http.StatusOK, body)
}

// Integrity pages: rows a page unless ?limit= says otherwise, and at most.
const (
	DefaultIntegrityPage = 50
	MaxIntegrityPage     = 500
)

// IntegrityQuery narrows and pages the integrity records.
type IntegrityQuery struct {
	Server, State string // "": all
	Cursor        string // a page's Next: the rows after it ("": from the first)
	Limit         int    // rows a page (0: DefaultIntegrityPage)
}

// IntegrityPage is one page of integrity records: heldByServer counts the held
// definitions of every server or plugin that has pins (0: none held), over every page.
type IntegrityPage struct {
	Rows         []PinRow
	HeldByServer map[string]int
	Next         string // the cursor of the next page ("": this is the last)
}

// rows are the integrity records GET /api/integrity lists (also the web UI's
// Integrity page), a page of them: each held definition's diff is computed for the rows
// of the page only.
func (a integrityAPI) rows(q IntegrityQuery) (IntegrityPage, error) {
	after := ""
	if q.Cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(q.Cursor)
		if err != nil {
			return IntegrityPage{}, fmt.Errorf("cursor %q is not one this API gave (next_cursor)", q.Cursor)
		}
		after = string(b)
	}
	limit := cmp.Or(q.Limit, DefaultIntegrityPage)
	pg := IntegrityPage{Rows: []PinRow{}, HeldByServer: map[string]int{}}
	for _, p := range a.port.Integrity().Pins() {
		if q.Server != "" && p.Server != q.Server {
			continue
		}
		if p.Kind == "server" {
			if _, ok := pg.HeldByServer[p.Server]; !ok {
				pg.HeldByServer[p.Server] = 0
			}
			continue
		}
		state := pinState(p)
		if state == "held" {
			pg.HeldByServer[p.Server]++
		}
		if q.State != "" && state != q.State {
			continue
		}
		key := store.PinKey(p.Server, p.Kind, p.Name)
		switch {
		case key <= after:
		case len(pg.Rows) < limit:
			pg.Rows = append(pg.Rows, pinRow(p))
		case pg.Next == "":
			last := pg.Rows[len(pg.Rows)-1]
			pg.Next = base64.RawURLEncoding.EncodeToString([]byte(store.PinKey(last.Server, last.Kind, last.Name)))
		}
	}
	return pg, nil
}

// pinState is a record's state as GET /api/integrity shows it.
func pinState(p *store.Pin) string {
	switch h := p.Held; {
	case h == nil:
		return "pinned"
	case h.Rejected:
		return "rejected" // kept out until the server serves another version
	case h.Warned:
		return "warned"
	}
	return "held"
}

func pinRow(p *store.Pin) PinRow {
	row := PinRow{Server: p.Server, Kind: p.Kind, Name: p.Name, State: "pinned", Hash: p.Hash, ApprovedAt: p.At,
		ApprovedBy: p.By, Flags: p.Flags, Rejected: len(p.Rejected)}
	if p.Hash == "" {
		row.ApprovedAt = time.Time{}
	}
	if h := p.Held; h != nil {
		row.State = pinState(p)
		row.Held = &HeldRow{Hash: h.Hash, Reason: h.Reason, Since: h.Since, Flags: h.Flags, Def: h.Def, Old: p.Def}
		row.Diff = registry.DiffDefs(p.Def, h.Def)
	}
	return row
}

// decision is the body of an approval or a rejection. An approval names every definition
// it approves with the fingerprint the admin reviewed (held.hash of GET /api/integrity):
// one ({kind, name, hash}) or several ({definitions: [...]}); what the upstream served
// after the review stays held. A rejection names one definition (kind and name; hash, if
// given, must be the version held), every held one of a kind, or (empty) every held one
// of the server: keeping something out needs no review.
type decision struct {
	Kind        string        `json:"kind"`
	Name        string        `json:"name"`
	Hash        string        `json:"hash"`
	Definitions []reviewedDef `json:"definitions"`
}

// reviewedDef is one definition of an approval, as reviewed.
type reviewedDef struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
	Hash string `json:"hash"`
}

// ServeApprove approves held definitions of a server or plugin; ServeReject rejects
// them. The sessions whose views change are told (list_changed), here and on the other
// replicas.
func (a integrityAPI) ServeApprove(w http.ResponseWriter, r *http.Request) {
	a.decide(w, r, "approved")
}

// ServeReject keeps held definitions out until they change again.
func (a integrityAPI) ServeReject(w http.ResponseWriter, r *http.Request) { a.decide(w, r, "rejected") }

// checkKind is the problem with a decision's kind and name ("": none).
func checkKind(kind, name string) string {
	if name != "" && kind == "" {
		return "a name needs its kind (tool, prompt, template, skill or instructions)"
	}
	switch kind {
	case "", "tool", "prompt", "template", "skill", "instructions":
		return ""
	}
	return fmt.Sprintf("kind %q is not one of tool, prompt, template, skill, instructions", kind)
}

// reviewed is what an approval names, or the problem with it.
func (d *decision) reviewed() ([]registry.ReviewedDef, string) {
	defs := d.Definitions
	if d.Kind != "" || d.Name != "" || d.Hash != "" {
		if len(defs) > 0 {
			return nil, "give either kind, name and hash, or definitions, not both"
		}
		defs = []reviewedDef{{Kind: d.Kind, Name: d.Name, Hash: d.Hash}}
	}
	if len(defs) == 0 {
		return nil, "an approval names what was reviewed: {\"kind\", \"name\", \"hash\"} or {\"definitions\": [...]}, each hash the held.hash of GET /api/integrity; approving everything unseen is not offered"
	}
	out := make([]registry.ReviewedDef, 0, len(defs))
	for i, r := range defs {
		if r.Kind == "" || r.Name == "" || r.Hash == "" {
			return nil, fmt.Sprintf("definition %d: an approval needs kind, name and hash (the fingerprint reviewed: held.hash of GET /api/integrity)", i)
		}
		if msg := checkKind(r.Kind, r.Name); msg != "" {
			return nil, fmt.Sprintf("definition %d: %s", i, msg)
		}
		out = append(out, registry.ReviewedDef{Kind: r.Kind, Name: r.Name, Hash: r.Hash})
	}
	return out, ""
}

func (a integrityAPI) decide(w http.ResponseWriter, r *http.Request, action string) {
	server := r.PathValue("name")
	var d decision
	if body, ok := ReadBody(w, r); !ok {
		return
	} else if len(body) > 0 {
		if errs := DecodeStrict(body, &d, nil); len(errs) > 0 {
			FieldErrors(w, http.StatusBadRequest, "invalid body: "+errs[0].WithField(), errs, nil)
			return
		}
	}
	in := a.port.Integrity()
	var n int
	var err error
	if action == "approved" {
		reviewed, msg := d.reviewed()
		if msg != "" {
			Error(w, http.StatusBadRequest, msg)
			return
		}
		n, err = in.ApproveReviewed(server, reviewed, Actor(r))
	} else {
		if msg := checkKind(d.Kind, d.Name); msg != "" || len(d.Definitions) > 0 {
			Error(w, http.StatusBadRequest, cmp.Or(msg, "a rejection names one definition (kind, name) or none; definitions is for approvals"))
			return
		}
		if d.Hash != "" && heldHash(in, server, d.Kind, d.Name) != d.Hash {
			err = &registry.ChangedError{Kind: d.Kind, Name: d.Name, Reviewed: d.Hash, Held: heldHash(in, server, d.Kind, d.Name)}
		} else {
			n, err = in.Reject(server, d.Kind, d.Name, Actor(r))
		}
	}
	if n > 0 {
		a.port.IntegrityDecided(server)
	}
	var changed *registry.ChangedError
	switch {
	case errors.As(err, &changed) && changed.Held != "":
		Error(w, http.StatusConflict, fmt.Sprintf("%s: %s", server, changed.Error()))
		return
	case changed != nil:
		Error(w, http.StatusNotFound, fmt.Sprintf("%s: %s", server, changed.Error()))
		return
	case errors.Is(err, registry.ErrNotHeld):
		Error(w, http.StatusNotFound, fmt.Sprintf("nothing of %q matching kind %q, name %q waits for a decision", server, d.Kind, d.Name))
		return
	case err != nil:
		Error(w, http.StatusServiceUnavailable, "store: "+err.Error())
		return
	}
	AuditWrite(a.port, r, "integrity/"+server, action, nil, d)
	JSON(w, http.StatusOK, map[string]any{action: n, "server": server})
}

// heldHash is the fingerprint of server's definition (kind, name) that waits ("": none).
func heldHash(in *registry.Integrity, server, kind, name string) string {
	for _, p := range in.Pins() {
		if p.Server == server && p.Kind == kind && p.Name == name && p.Held != nil && !p.Held.Rejected {
			return p.Held.Hash
		}
	}
	return ""
}
