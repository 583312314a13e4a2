package store

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"time"
)

// Credential is one sealed upstream credential record. Kind "grant" is an identity's
// tokens at a server; "client" is mcpgw's own registration at a server's authorization
// server; "flow" is a pending authorization, keyed by its state, short-lived.
//
// Records are written by compare-and-set (PutCredential): Rev is the store's count of the
// record's writes, and a writer names the Rev it read, so that two replicas that both
// refreshed a token cannot both store their rotated refresh token.
type Credential struct {
	Kind    string    `json:"kind"`
	Server  string    `json:"server"`
	Subject string    `json:"subject"`           // the identity ("" for a server-wide record); a flow's state
	Sealed  []byte    `json:"sealed"`            // opaque to the store (sealbox output)
	Expires time.Time `json:"expires,omitempty"` // zero: none; past: Get answers ErrNotFound and prune deletes it
	Updated time.Time `json:"updated"`
	Rev     int64     `json:"rev"` // set by the store: 1 on create, +1 on every write
}

// The credential kinds the gateway writes. The store keeps any non-empty kind.
const (
	CredentialGrant  = "grant"
	CredentialClient = "client"
	CredentialFlow   = "flow"
)

// storeError is an error of the store compared with errors.Is: a constant, so that no
// package variable holds it.
type storeError string

func (e storeError) Error() string { return string(e) }

// ErrConflict is PutCredential's answer when the stored record is not the one the caller
// named: it exists though rev 0 asked to create it, or its Rev is not rev (someone else
// wrote it since it was read, or it was deleted or expired). Read it again and decide.
const ErrConflict storeError = "credential changed since it was read (conflict)"

const (
	errBadCredKey storeError = "credential: kind and server must be non-empty, and neither they nor the subject may hold a NUL"
	errBadRev     storeError = "credential: rev must be 0 (create) or the Rev read"
)

// credKey is a credential's key in the memory and bbolt stores: kind, server and subject,
// NUL-separated (none may hold a NUL), so that one kind's records sort by server, then
// subject, after the prefix kind+NUL.
func credKey(kind, server, subject string) string {
	return kind + "\x00" + server + "\x00" + subject
}

func validCredKey(kind, server, subject string) bool {
	return kind != "" && server != "" && !strings.ContainsRune(kind, 0) &&
		!strings.ContainsRune(server, 0) && !strings.ContainsRune(subject, 0)
}

// checkPut validates a PutCredential call.
func checkPut(c *Credential, rev int64) error {
	if !validCredKey(c.Kind, c.Server, c.Subject) {
		return errBadCredKey
	}
	if rev < 0 {
		return errBadRev
	}
	return nil
}

// nextCredential is the record PutCredential stores when the stored one has Rev rev: a
// copy of c with Rev rev+1 and Updated set to now when the caller left it zero.
func nextCredential(c *Credential, rev int64, now time.Time) *Credential {
	n := CloneCredential(c)
	n.Rev = rev + 1
	if n.Updated.IsZero() {
		n.Updated = now
	}
	return n
}

// expired reports whether c has an expiry that is not after now.
func (c *Credential) expired(now time.Time) bool {
	return !c.Expires.IsZero() && !now.Before(c.Expires)
}

// CloneCredential returns a deep copy of c.
func CloneCredential(c *Credential) *Credential {
	n := *c
	n.Sealed = bytes.Clone(c.Sealed)
	return &n
}

func sortCredentials(cs []*Credential) {
	slices.SortFunc(cs, func(a, b *Credential) int {
		if c := strings.Compare(a.Server, b.Server); c != 0 {
			return c
		}
		return strings.Compare(a.Subject, b.Subject)
	})
}

// casRev is the Rev a stored record has for compare-and-set: 0 when it is absent or
// expired (as if it were absent).
func casRev(stored *Credential, now time.Time) int64 {
	if stored == nil || stored.expired(now) {
		return 0
	}
	return stored.Rev
}

func (s *Memory) PutCredential(c *Credential, rev int64) (int64, error) {
	if err := checkPut(c, rev); err != nil {
		return 0, err
	}
	k := credKey(c.Kind, c.Server, c.Subject)
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if casRev(s.creds[k], now) != rev {
		return 0, ErrConflict
	}
	if s.creds == nil {
		s.creds = map[string]*Credential{}
	}
	n := nextCredential(c, rev, now)
	s.creds[k] = n
	return n.Rev, nil
}

func (s *Memory) GetCredential(kind, server, subject string) (*Credential, error) {
	s.mu.Lock()
	c, ok := s.creds[credKey(kind, server, subject)]
	s.mu.Unlock()
	if !ok || c.expired(time.Now()) {
		return nil, ErrNotFound
	}
	return CloneCredential(c), nil
}

func (s *Memory) DeleteCredential(kind, server, subject string) error {
	s.mu.Lock()
	delete(s.creds, credKey(kind, server, subject))
	s.mu.Unlock()
	return nil
}

func (s *Memory) ListCredentials(kind string) ([]*Credential, error) {
	now := time.Now()
	s.mu.Lock()
	var out []*Credential
	for _, c := range s.creds {
		if c.Kind == kind && !c.expired(now) {
			out = append(out, CloneCredential(c))
		}
	}
	s.mu.Unlock()
	sortCredentials(out)
	return out, nil
}

func (s *Memory) TakeCredential(kind, server, subject string) (*Credential, error) {
	k := credKey(kind, server, subject)
	s.mu.Lock()
	c, ok := s.creds[k]
	delete(s.creds, k)
	s.mu.Unlock()
	if !ok || c.expired(time.Now()) {
		return nil, ErrNotFound
	}
	// A Get that read the pointer before the delete may still be copying it.
	return CloneCredential(c), nil
}

// Lock is held by one caller at a time among the users of this store value (see
// Store.Lock).
func (s *Memory) Lock(ctx context.Context, name string, ttl time.Duration) (func(), error) {
	return s.locks.lock(ctx, name, ttl)
}
