// Package store keeps session, task and conversation records in a store (bbolt, Redis
// or memory) so that sessions outlive the gateway process, and carries events between
// replicas that share a Redis store (Bus).
package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Record is what the gateway remembers of a session.
//
// When adding a field, update cloneRecord (TestCloneRecordCoversEveryField fails until
// you do).
type Record struct {
	ID              string          `json:"id"`
	Transport       string          `json:"transport"`
	Agent           string          `json:"agent,omitempty"`
	Conversation    string          `json:"conversation,omitempty"`
	Task            string          `json:"task,omitempty"`
	Executor        string          `json:"executor,omitempty"`
	ProtocolVersion string          `json:"protocol_version"`
	ClientInfo      json.RawMessage `json:"client_info,omitempty"`
	ClientCaps      json.RawMessage `json:"client_caps,omitempty"`
	Servers         []string        `json:"servers"`
	Handshake       string          `json:"handshake,omitempty"`
	LogLevel        string          `json:"log_level,omitempty"`
	Created         time.Time       `json:"created"`
	LastSeen        time.Time       `json:"last_seen"`
	// Principal is who opened the session; nobody else may use it.
	Principal string `json:"principal"`
	// Overrides are the executor policy's per-server changes (mode, URL, env).
	Overrides map[string]Override `json:"overrides,omitempty"`
	// Narrow is what the session's credential narrowed.
	Narrow *Narrow `json:"narrow,omitempty"`
	// Forms are the tools/list forms served, by view hash (full | thin), so that a revived
	// session keeps validating thin calls (schema-on-error).
	Forms map[string]string `json:"forms,omitempty"`
	// MostUsed is the agent's tool ranking (ToolUseKey keys) taken when the session was
	// first listed tools for a capped client: its lists keep it, on every replica (nil:
	// not taken yet; empty: taken, nothing ranked).
	MostUsed *[]string `json:"most_used,omitempty"`
}

// Override is what an agent's config or its executor's policy changes for one server.
type Override struct {
	Mode string            `json:"mode,omitempty"`
	URL  string            `json:"url,omitempty"`
	Env  map[string]string `json:"env,omitempty"`
	// Runner names the executor whose runner starts this stdio server.
	Runner string `json:"runner,omitempty"`
}

// Narrow is the part of a credential that limits a session.
type Narrow struct {
	Servers  []string `json:"servers,omitempty"`
	Tools    []string `json:"tools,omitempty"`
	ReadOnly bool     `json:"read_only,omitempty"`
	// HasServers and HasTools tell an empty list from no narrowing.
	HasServers bool `json:"has_servers,omitempty"`
	HasTools   bool `json:"has_tools,omitempty"`
	// Connections narrows the plugin connections (HasConnections tells [] from none).
	Connections    []string `json:"connections,omitempty"`
	HasConnections bool     `json:"has_connections,omitempty"`
}

// Task is a unit of work with an explicit set of enabled servers (docs/auth.md).
type Task struct {
	ID                string   `json:"id"`
	EnabledMCPServers []string `json:"enabled_mcp_servers"`
	Agent             string   `json:"agent,omitempty"`
	// Project is the project the task belongs to (config projects): its servers narrow
	// a session of the task before EnabledMCPServers do.
	Project string    `json:"project,omitempty"`
	Created time.Time `json:"created_at"`
	// FileManaged tasks come from the config file; the admin API does not edit them.
	FileManaged bool `json:"file_managed,omitempty"`
}

// Conversation is what the gateway remembers of an (agent, conversation) pair for the
// full/thin handshake (docs/sessions.md): the hash of the view whose full tool list the
// conversation has already been sent.
type Conversation struct {
	Agent        string    `json:"agent"`
	ID           string    `json:"id"`
	FullViewHash string    `json:"full_view_hash"`
	Updated      time.Time `json:"updated"`
}

// ErrNotFound is returned for a session, task or conversation the store does not hold.
// (internal/gateway/health.go compares its text; keep it.)
var ErrNotFound = errors.New("session not found")

// ErrUnavailable wraps errors of a store that cannot be reached right now (Redis down,
// timed out). The gateway answers such requests with HTTP 503; the store recovers by
// itself when its backend comes back.
var ErrUnavailable = errors.New("session store unavailable")

var errBadConfigKey = errors.New("config entry: kind and name must be non-empty and hold no NUL")

var errBadPinKey = errors.New("pin: server and kind must be non-empty, name too unless the kind is server, and none may hold a NUL")

// Store holds session, task and conversation records, the admin API's config entries,
// integrity pins and sealed upstream credentials, and named locks: one interface per
// concern, each of which a caller that needs only that one may take. Every method is safe
// for concurrent use. Records are stored by value: callers may change what they passed to
// Put or got from Get without affecting the store.
type Store interface {
	Sessions
	ConfigEntries
	Pins
	Credentials
	Locker
	Close() error
}

// Sessions keeps session, task and conversation records.
type Sessions interface {
	Put(r *Record) error
	Get(id string) (*Record, error)
	// Delete of an absent record is not an error.
	Delete(id string) error
	// List returns every record (for reaping and the admin API).
	List() ([]*Record, error)
	PutTask(t *Task) error
	GetTask(id string) (*Task, error)
	DeleteTask(id string) error
	ListTasks() ([]*Task, error)
	GetConversation(agent, id string) (*Conversation, error)
	PutConversation(c *Conversation) error
}

// ConfigEntries keeps the configuration entries created through the admin API.
type ConfigEntries interface {
	PutConfig(e *ConfigEntry) error
	GetConfig(kind, name string) (*ConfigEntry, error)
	DeleteConfig(kind, name string) error
	// ListConfig sorts the entries by kind, then name.
	ListConfig() ([]*ConfigEntry, error)
}

// Pins keeps the integrity records of served definitions.
type Pins interface {
	PutPin(p *Pin) error
	GetPin(server, kind, name string) (*Pin, error)
	DeletePin(server, kind, name string) error
	// ListPins sorts the pins by server, kind, name.
	ListPins() ([]*Pin, error)
}

// Credentials keeps sealed upstream credentials.
type Credentials interface {
	// PutCredential writes c if the stored record is the one the caller read: rev 0
	// creates it only if absent (or expired); rev n > 0 replaces it only if its Rev is n.
	// It returns the new Rev (rev+1), or ErrConflict when the stored record differs; c
	// itself is not changed. This is what keeps two replicas from both storing a rotated
	// refresh token: the second one's write conflicts, and it reads the first one's.
	PutCredential(c *Credential, rev int64) (int64, error)
	// GetCredential answers ErrNotFound for a record absent or expired.
	GetCredential(kind, server, subject string) (*Credential, error)
	// DeleteCredential of an absent record is not an error.
	DeleteCredential(kind, server, subject string) error
	// ListCredentials returns kind's records, sorted by server, then subject, expired ones
	// left out.
	ListCredentials(kind string) ([]*Credential, error)
	// TakeCredential gets and deletes a record in one step: of two concurrent Takes of one
	// record (two callbacks carrying one flow's state, on two replicas), one gets it and
	// the other ErrNotFound. An expired record is deleted and answers ErrNotFound.
	TakeCredential(kind, server, subject string) (*Credential, error)
}

// Locker takes named locks.
type Locker interface {
	// Lock takes the lock called name among everything that shares the store (the
	// callers of this store value for memory and bbolt; every replica for Redis), waiting
	// until it is free or ctx ends (then ctx's error). ttl bounds the holding: once it has
	// passed, the lock is free again even if its holder never unlocked it (it died), so a
	// holder must finish within ttl; unlock after that does not free a lock another has
	// taken since. Unlock may be called more than once. A Redis store that cannot be
	// reached answers its error (ErrUnavailable) rather than waiting for it.
	Lock(ctx context.Context, name string, ttl time.Duration) (unlock func(), err error)
}

// Open opens the store named by spec (the config's `store:`): "bolt" is the file
// mcpgw.db in stateDir, "memory" is process memory, and a redis://, rediss:// or unix://
// URL is a Redis server (pinged once: an unreachable server is an error).
func Open(spec, stateDir string) (Store, error) {
	switch {
	case spec == "bolt":
		if stateDir == "" {
			return nil, errors.New("store bolt: no state directory")
		}
		return OpenBolt(filepath.Join(stateDir, "mcpgw.db"))
	case spec == "memory":
		return NewMemory(), nil
	case strings.HasPrefix(spec, "redis://"), strings.HasPrefix(spec, "rediss://"), strings.HasPrefix(spec, "unix://"):
		return OpenRedis(spec)
	}
	return nil, fmt.Errorf("unknown store %q: want bolt, memory or a redis:// URL", redactSpec(spec))
}

// redactSpec hides a password in something that may be a URL.
func redactSpec(spec string) string {
	if i := strings.Index(spec, "://"); i >= 0 {
		if j := strings.LastIndex(spec, "@"); j > i {
			return spec[:i+3] + "xxxxx" + spec[j:]
		}
	}
	return spec
}

// Memory is a Store in process memory (tests, and `store: memory`).
type Memory struct {
	mu    sync.Mutex
	m     map[string]Record
	tasks map[string]Task
	convs map[convKey]Conversation
	// config holds admin API entries by configKey.
	config map[string]ConfigEntry
	// pins holds integrity records by PinKey.
	pins map[string]*Pin
	// creds holds credential records by credKey; a stored value is replaced, never
	// changed in place.
	creds map[string]*Credential
	// locks are Lock's (this store value's users share them).
	locks localLocks
	// use is the agents' tool use (tooluse.go).
	use toolUseMemory
}

type convKey struct{ agent, id string }

// NewMemory returns an empty memory store.
func NewMemory() *Memory {
	return &Memory{m: map[string]Record{}, tasks: map[string]Task{}, convs: map[convKey]Conversation{}}
}

func (s *Memory) PutTask(t *Task) error {
	c := cloneTask(t)
	s.mu.Lock()
	s.tasks[t.ID] = *c
	s.mu.Unlock()
	return nil
}

func (s *Memory) GetTask(id string) (*Task, error) {
	s.mu.Lock()
	t, ok := s.tasks[id]
	s.mu.Unlock()
	if !ok {
		return nil, ErrNotFound
	}
	return cloneTask(&t), nil
}

func (s *Memory) DeleteTask(id string) error {
	s.mu.Lock()
	delete(s.tasks, id)
	s.mu.Unlock()
	return nil
}

func (s *Memory) ListTasks() ([]*Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Task, 0, len(s.tasks))
	for _, t := range s.tasks {
		out = append(out, cloneTask(&t))
	}
	return out, nil
}

func (s *Memory) Put(r *Record) error {
	c := cloneRecord(r)
	s.mu.Lock()
	s.m[r.ID] = *c
	s.mu.Unlock()
	return nil
}

func (s *Memory) Get(id string) (*Record, error) {
	s.mu.Lock()
	r, ok := s.m[id]
	s.mu.Unlock()
	if !ok {
		return nil, ErrNotFound
	}
	// The stored value is never changed in place (Put replaces it), so copying it
	// outside the lock is safe.
	return cloneRecord(&r), nil
}

func (s *Memory) Delete(id string) error {
	s.mu.Lock()
	delete(s.m, id)
	s.mu.Unlock()
	return nil
}

func (s *Memory) List() ([]*Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Record, 0, len(s.m))
	for _, r := range s.m {
		out = append(out, cloneRecord(&r))
	}
	return out, nil
}

func (s *Memory) GetConversation(agent, id string) (*Conversation, error) {
	s.mu.Lock()
	c, ok := s.convs[convKey{agent, id}]
	s.mu.Unlock()
	if !ok {
		return nil, ErrNotFound
	}
	return &c, nil
}

func (s *Memory) PutConversation(c *Conversation) error {
	s.mu.Lock()
	s.convs[convKey{c.Agent, c.ID}] = *c
	s.mu.Unlock()
	return nil
}

func (s *Memory) Close() error { return nil }

// cloneRecord returns a deep copy of r: it shares no slice, map or pointer with r.
func cloneRecord(r *Record) *Record {
	c := *r
	c.ClientInfo = cloneRaw(r.ClientInfo)
	c.ClientCaps = cloneRaw(r.ClientCaps)
	c.Servers = slices.Clone(r.Servers)
	if r.Overrides != nil {
		c.Overrides = make(map[string]Override, len(r.Overrides))
		for k, o := range r.Overrides {
			o.Env = maps.Clone(o.Env)
			c.Overrides[k] = o
		}
	}
	c.Forms = maps.Clone(r.Forms)
	if r.MostUsed != nil {
		m := slices.Clone(*r.MostUsed)
		if m == nil {
			m = []string{}
		}
		c.MostUsed = &m
	}
	if r.Narrow != nil {
		n := *r.Narrow
		n.Servers = slices.Clone(n.Servers)
		n.Tools = slices.Clone(n.Tools)
		n.Connections = slices.Clone(n.Connections)
		c.Narrow = &n
	}
	return &c
}

func cloneRaw(b json.RawMessage) json.RawMessage {
	if b == nil {
		return nil
	}
	return bytes.Clone(b)
}

func cloneTask(t *Task) *Task {
	c := *t
	c.EnabledMCPServers = slices.Clone(t.EnabledMCPServers)
	return &c
}
