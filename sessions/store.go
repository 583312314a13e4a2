// Package sessions keeps session and conversation records in a store (bbolt, Redis or
// memory) so that sessions outlive the gateway process.
package sessions

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Record is what the gateway remembers of a session.
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
}

// Override is what an agent's config or its executor's policy changes for one server.
type Override struct {
	Mode string            `json:"mode,omitempty"`
	URL  string            `json:"url,omitempty"`
	Env  map[string]string `json:"env,omitempty"`
}

// Narrow is the part of a credential that limits a session.
type Narrow struct {
	Servers  []string `json:"servers,omitempty"`
	Tools    []string `json:"tools,omitempty"`
	ReadOnly bool     `json:"read_only,omitempty"`
	// HasServers and HasTools tell an empty list from no narrowing.
	HasServers bool `json:"has_servers,omitempty"`
	HasTools   bool `json:"has_tools,omitempty"`
}

// Task is a unit of work with an explicit set of enabled servers (DESIGN.md §2).
type Task struct {
	ID                string    `json:"id"`
	EnabledMCPServers []string  `json:"enabled_mcp_servers"`
	Agent             string    `json:"agent,omitempty"`
	Created           time.Time `json:"created_at"`
	// FileManaged tasks come from the config file; the admin API does not edit them.
	FileManaged bool `json:"file_managed,omitempty"`
}

// ErrNotFound is returned for a session the store does not hold.
var ErrNotFound = errors.New("session not found")

// Store holds session records.
type Store interface {
	Put(r *Record) error
	Get(id string) (*Record, error)
	Delete(id string) error
	// List returns every record (for reaping and the admin API).
	List() ([]*Record, error)
	PutTask(t *Task) error
	GetTask(id string) (*Task, error)
	DeleteTask(id string) error
	ListTasks() ([]*Task, error)
	Close() error
}

// Memory is a Store in process memory (tests, and `store: memory`).
type Memory struct {
	mu    sync.Mutex
	m     map[string]Record
	tasks map[string]Task
}

// NewMemory returns an empty memory store.
func NewMemory() *Memory { return &Memory{m: map[string]Record{}, tasks: map[string]Task{}} }

func (s *Memory) PutTask(t *Task) error {
	s.mu.Lock()
	s.tasks[t.ID] = *t
	s.mu.Unlock()
	return nil
}

func (s *Memory) GetTask(id string) (*Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tasks[id]
	if !ok {
		return nil, ErrNotFound
	}
	return &t, nil
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
		t := t
		out = append(out, &t)
	}
	return out, nil
}

func (s *Memory) Put(r *Record) error {
	s.mu.Lock()
	s.m[r.ID] = *r
	s.mu.Unlock()
	return nil
}

func (s *Memory) Get(id string) (*Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.m[id]
	if !ok {
		return nil, ErrNotFound
	}
	return &r, nil
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
		r := r
		out = append(out, &r)
	}
	return out, nil
}

func (s *Memory) Close() error { return nil }

// Bolt is a Store in one bbolt file.
type Bolt struct {
	db   *bolt.DB
	path string
}

var (
	bucketSessions = []byte("sessions")
	bucketTasks    = []byte("tasks")
)

// OpenBolt opens (or creates) the state file at path. A file that is not a bbolt database,
// or is corrupt, is an error naming the path: the gateway refuses to start rather than
// drop sessions silently.
func OpenBolt(path string) (*Bolt, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("state dir: %w", err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("open state file %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if _, err := tx.CreateBucketIfNotExists(bucketSessions); err != nil {
			return err
		}
		_, err := tx.CreateBucketIfNotExists(bucketTasks)
		return err
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("state file %s: %w", path, err)
	}
	return &Bolt{db: db, path: path}, nil
}

func (s *Bolt) Put(r *Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketSessions).Put([]byte(r.ID), b)
	})
}

func (s *Bolt) Get(id string) (*Record, error) {
	var r *Record
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketSessions).Get([]byte(id))
		if v == nil {
			return ErrNotFound
		}
		r = new(Record)
		return json.Unmarshal(v, r)
	})
	return r, err
}

func (s *Bolt) Delete(id string) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketSessions).Delete([]byte(id))
	})
}

func (s *Bolt) List() ([]*Record, error) {
	var out []*Record
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketSessions).ForEach(func(k, v []byte) error {
			r := new(Record)
			if err := json.Unmarshal(v, r); err != nil {
				return fmt.Errorf("session %q: %w", k, err)
			}
			out = append(out, r)
			return nil
		})
	})
	return out, err
}

func (s *Bolt) PutTask(t *Task) error {
	b, err := json.Marshal(t)
	if err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketTasks).Put([]byte(t.ID), b) })
}

func (s *Bolt) GetTask(id string) (*Task, error) {
	var t *Task
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketTasks).Get([]byte(id))
		if v == nil {
			return ErrNotFound
		}
		t = new(Task)
		return json.Unmarshal(v, t)
	})
	return t, err
}

func (s *Bolt) DeleteTask(id string) error {
	return s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketTasks).Delete([]byte(id)) })
}

func (s *Bolt) ListTasks() ([]*Task, error) {
	var out []*Task
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketTasks).ForEach(func(k, v []byte) error {
			t := new(Task)
			if err := json.Unmarshal(v, t); err != nil {
				return fmt.Errorf("task %q: %w", k, err)
			}
			out = append(out, t)
			return nil
		})
	})
	return out, err
}

func (s *Bolt) Close() error { return s.db.Close() }
