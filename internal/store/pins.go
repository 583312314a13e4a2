package store

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"time"
)

// Pin is the integrity record of one definition a server or plugin serves (a tool, a
// prompt or a resource template), kept in the store so that pins survive restarts and are
// shared by replicas. Kind "server" with an empty Name is the server's own record: it
// exists once the server's first catalogue was seen (the server is established).
type Pin struct {
	Server string `json:"server"`
	Kind   string `json:"kind"` // tool | prompt | template | server
	Name   string `json:"name"` // the upstream's own name (a template's uriTemplate)
	// Hash and Def are the approved definition (none yet: ""): its fingerprint and its
	// canonical JSON. Approved lists the fingerprints approved before it (bounded).
	Hash     string          `json:"hash,omitempty"`
	Def      json.RawMessage `json:"def,omitempty"`
	Approved []string        `json:"approved,omitempty"`
	// Flags are what the injection heuristics found in the approved definition (JSON).
	Flags json.RawMessage `json:"flags,omitempty"`
	At    time.Time       `json:"at"`
	By    string          `json:"by,omitempty"`
	// Held is a definition seen since and not approved.
	Held *HeldDef `json:"held,omitempty"`
	// Rejected are fingerprints an admin rejected (bounded): seen again, they stay held
	// without asking again.
	Rejected []string `json:"rejected,omitempty"`
	// Version counts the record's writes, from 1.
	Version int64 `json:"version"`
}

// HeldDef is a definition waiting for an admin.
type HeldDef struct {
	Hash   string          `json:"hash"`
	Def    json.RawMessage `json:"def"`
	Reason string          `json:"reason"` // first_use | changed | new | suspicious
	Since  time.Time       `json:"since"`
	Flags  json.RawMessage `json:"flags,omitempty"`
	// Warned: the policy is warn, so the definition is served while it waits.
	Warned bool `json:"warned,omitempty"`
	// Rejected: an admin rejected it; it stays out, and waits for nothing, until the
	// server serves another version.
	Rejected bool `json:"rejected,omitempty"`
}

// ClonePin returns a deep copy of p.
func ClonePin(p *Pin) *Pin {
	c := *p
	c.Def = bytes.Clone(p.Def)
	c.Flags = bytes.Clone(p.Flags)
	c.Approved = slices.Clone(p.Approved)
	c.Rejected = slices.Clone(p.Rejected)
	if p.Held != nil {
		h := *p.Held
		h.Def = bytes.Clone(p.Held.Def)
		h.Flags = bytes.Clone(p.Held.Flags)
		c.Held = &h
	}
	return &c
}

// PinKey is a pin's key in a store: server, kind and name, NUL-separated.
func PinKey(server, kind, name string) string { return server + "\x00" + kind + "\x00" + name }

func validPin(p *Pin) bool {
	return p.Server != "" && p.Kind != "" && !strings.ContainsRune(p.Server, 0) &&
		!strings.ContainsRune(p.Kind, 0) && !strings.ContainsRune(p.Name, 0) && (p.Name != "" || p.Kind == "server")
}

func sortPins(ps []*Pin) {
	slices.SortFunc(ps, func(a, b *Pin) int {
		return strings.Compare(PinKey(a.Server, a.Kind, a.Name), PinKey(b.Server, b.Kind, b.Name))
	})
}

func (s *Memory) PutPin(p *Pin) error {
	if !validPin(p) {
		return errBadPinKey
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pins == nil {
		s.pins = map[string]*Pin{}
	}
	s.pins[PinKey(p.Server, p.Kind, p.Name)] = ClonePin(p)
	return nil
}

func (s *Memory) GetPin(server, kind, name string) (*Pin, error) {
	s.mu.Lock()
	p, ok := s.pins[PinKey(server, kind, name)]
	s.mu.Unlock()
	if !ok {
		return nil, ErrNotFound
	}
	return ClonePin(p), nil
}

func (s *Memory) DeletePin(server, kind, name string) error {
	s.mu.Lock()
	delete(s.pins, PinKey(server, kind, name))
	s.mu.Unlock()
	return nil
}

func (s *Memory) ListPins() ([]*Pin, error) {
	s.mu.Lock()
	out := make([]*Pin, 0, len(s.pins))
	for _, p := range s.pins {
		out = append(out, ClonePin(p))
	}
	s.mu.Unlock()
	sortPins(out)
	return out, nil
}
