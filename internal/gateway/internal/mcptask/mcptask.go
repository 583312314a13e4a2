// Package mcptask keeps the routes of MCP tasks (SEP-1686) started through the gateway:
// the opaque task id a client sees, mapped to the server that runs the task, the
// upstream's own task id and the owner (identity and session) that created it. Routes
// live in the store (kind "mcptask" of its expiring records), so that a task started
// before a restart, or on another replica, is polled like any other; they expire with
// the task's ttl, and an owner holds a bounded number of them. (Not the operator's work
// items of X-Task-ID: those are store.Task.)
package mcptask

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpgw/mcpgw/internal/store"
)

// Kind is the kind of the store records that hold task routes.
const Kind = "mcptask"

// idPrefix starts every gateway task id; the rest is 128 random bits, base64url.
const idPrefix = "mcpgw-task-"

// Limits of the table.
const (
	// MaxPerOwner is how many live tasks one owner may hold; one more is refused.
	MaxPerOwner = 256
	// MaxTTL is the longest a task (and its route) lives: a longer ttl asked upstream is
	// cut to it, and a task whose upstream keeps it forever is forgotten after it.
	MaxTTL = 24 * time.Hour
	// DefaultTTL is how long a route lives when the upstream names no ttl.
	DefaultTTL = time.Hour
)

// taskError is an error of the table compared with errors.Is: a constant.
type taskError string

func (e taskError) Error() string { return string(e) }

// ErrTooMany is Add's answer to an owner that holds MaxPerOwner tasks already.
const ErrTooMany taskError = "too many MCP tasks: this caller holds 256 live tasks (the most one may); wait for some to end or expire"

// Route is where a gateway task id leads.
type Route struct {
	Server     string    `json:"server"`
	UpstreamID string    `json:"upstream_id"`
	Session    string    `json:"session"`
	Created    time.Time `json:"created"`
	// Where the task runs (instance.go): Instance names the upstream instance that created
	// it, in the process that did (Table.Instance); UpSession and UpVersion are that
	// instance's streamable HTTP session (Mcp-Session-Id) and protocol version, by which
	// the task is reached again once the instance is gone. All empty on a route of a
	// stateless upstream, whose tasks are the server's, not a session's, and on routes
	// recorded before they were kept.
	Instance  string `json:"instance,omitempty"`
	UpSession string `json:"up_session,omitempty"`
	UpVersion string `json:"up_version,omitempty"`
	// Bridge marks a task mcpgw made for a stateless caller of the Tasks extension on an
	// upstream of a session revision (SEP-1686): its requests are translated
	// (dispatch/mcptaskbridge.go).
	Bridge bool `json:"bridge,omitempty"`
}

// Entry is a route with its gateway id.
type Entry struct {
	ID string
	Route
}

// Table is the gateway's MCP task routes over a store, and the way back from the
// instances that run them (back.go).
type Table struct {
	st   store.Credentials
	back backIndex
	// live are this process's instances that created tasks, by id (instance.go).
	live liveInstances
}

// New is a table over st.
func New(st store.Credentials) *Table {
	return &Table{st: st, back: backIndex{m: map[backKey]backEntry{}}}
}

// Owner is the owner key of a principal, agent and session (session empty for a
// stateless caller, whose tasks belong to its identity): a digest, so that no character
// of theirs can make two owners one.
func Owner(principal, agent, session string) string {
	h := sha256.New()
	for _, s := range []string{principal, agent, session} {
		h.Write([]byte(strconv.Itoa(len(s)) + ":" + s))
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// NewID is a fresh gateway task id: not guessable, and saying nothing of the upstream.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return idPrefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// ValidID reports whether id has the shape of a gateway task id (others are unknown
// without asking the store).
func ValidID(id string) bool {
	return strings.HasPrefix(id, idPrefix) && len(id) == len(idPrefix)+22
}

// Add records a route for owner, living ttl (cut to MaxTTL; zero or less: DefaultTTL),
// and returns its new gateway id.
func (t *Table) Add(owner string, r Route, ttl time.Duration) (string, error) {
	list, err := t.List(owner)
	if err != nil {
		return "", err
	}
	if len(list) >= MaxPerOwner {
		return "", ErrTooMany
	}
	ttl = Life(ttl)
	if r.Created.IsZero() {
		r.Created = time.Now().UTC()
	}
	b, _ := json.Marshal(r)
	id := NewID()
	exp := time.Now().Add(ttl)
	if _, err := t.st.PutCredential(&store.Credential{Kind: Kind, Server: owner, Subject: id, Sealed: b, Expires: exp}, 0); err != nil {
		return "", err
	}
	return id, nil
}

// Life is how long a route of a task of ttl lives: ttl cut to MaxTTL; DefaultTTL when
// ttl is zero or less.
func Life(ttl time.Duration) time.Duration {
	if ttl <= 0 {
		return DefaultTTL
	}
	return min(ttl, MaxTTL)
}

// Get is owner's route of id; ok is false for an id owner does not hold (unknown,
// expired, or another's: the same answer).
func (t *Table) Get(owner, id string) (Route, bool, error) {
	if !ValidID(id) {
		return Route{}, false, nil
	}
	c, err := t.st.GetCredential(Kind, owner, id)
	if errors.Is(err, store.ErrNotFound) {
		return Route{}, false, nil
	}
	if err != nil {
		return Route{}, false, err
	}
	var r Route
	if json.Unmarshal(c.Sealed, &r) != nil {
		return Route{}, false, nil
	}
	return r, true, nil
}

// List is owner's live routes, oldest first.
func (t *Table) List(owner string) ([]Entry, error) {
	all, err := t.st.ListCredentials(Kind)
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, c := range all {
		if c.Server != owner {
			continue
		}
		var r Route
		if json.Unmarshal(c.Sealed, &r) == nil {
			out = append(out, Entry{ID: c.Subject, Route: r})
		}
	}
	sortEntries(out)
	return out, nil
}

// Delete forgets owner's route of id.
func (t *Table) Delete(owner, id string) error {
	return t.st.DeleteCredential(Kind, owner, id)
}

func sortEntries(es []Entry) {
	slices.SortFunc(es, func(a, b Entry) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}
