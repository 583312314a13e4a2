package store

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Bolt is a Store in one bbolt file.
type Bolt struct {
	db   *bolt.DB
	path string
	// migrated names the migrations that ran when the file was opened.
	migrated []string
	// locks are Lock's: the file is open in this process alone.
	locks localLocks
}

var (
	bucketSessions = []byte("sessions")
	bucketTasks    = []byte("tasks")
	bucketConvs    = []byte("conversations")
	bucketConfig   = []byte("config")
	bucketPins     = []byte("pins")
	bucketMeta     = []byte("meta")

	keySchemaVersion = []byte("schema_version")
)

// OpenBolt opens (or creates) the state file at path. A file that is not a bbolt database,
// or is corrupt or truncated, is an error naming the path: the gateway refuses to start
// rather than drop sessions silently, and OpenBolt never panics on such a file. (An empty
// file holds nothing to lose and is initialised, as bbolt does.)
//
// Opening checks the whole file: every page reachable from the meta page is read, and
// bbolt's consistency check runs. The state file is small, so this costs little.
func OpenBolt(path string) (*Bolt, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("state dir: %w", err)
	}
	db, migrated, err := openBoltChecked(path)
	if err != nil {
		return nil, fmt.Errorf("state file %s: %w (move it away to start with no sessions)", path, err)
	}
	// A lone write waits at most 1 ms for company before its fsync.
	db.MaxBatchDelay = time.Millisecond
	return &Bolt{db: db, path: path, migrated: migrated}, nil
}

// Migrated names the layout migrations that ran when the store was opened (none for a
// store already at ConfigSchemaVersion).
func (s *Bolt) Migrated() []string { return s.migrated }

// SchemaVersion reads the store's layout version.
func (s *Bolt) SchemaVersion() (int, error) {
	var v int
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		v, err = strconv.Atoi(string(tx.Bucket(bucketMeta).Get(keySchemaVersion)))
		return err
	})
	return v, err
}

func (s *Bolt) Put(r *Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	// Batch: concurrent session writes share one fsync (the function may run twice).
	return s.db.Batch(func(tx *bolt.Tx) error {
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
	if err != nil {
		return nil, err
	}
	return r, nil
}

func (s *Bolt) Delete(id string) error {
	return s.db.Batch(func(tx *bolt.Tx) error {
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
	if err != nil {
		return nil, err
	}
	return t, nil
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

// convBoltKey is the conversation's key: the agent's length, the agent, the id (so that
// no (agent, id) pair can collide with another whatever bytes they hold).
func convBoltKey(agent, id string) []byte {
	k := binary.AppendUvarint(nil, uint64(len(agent)))
	k = append(k, agent...)
	return append(k, id...)
}

func (s *Bolt) GetConversation(agent, id string) (*Conversation, error) {
	var c *Conversation
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketConvs).Get(convBoltKey(agent, id))
		if v == nil {
			return ErrNotFound
		}
		c = new(Conversation)
		return json.Unmarshal(v, c)
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

func (s *Bolt) PutConversation(c *Conversation) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketConvs).Put(convBoltKey(c.Agent, c.ID), b)
	})
}

func (s *Bolt) Close() error { return s.db.Close() }

func (s *Bolt) PutConfig(e *ConfigEntry) error {
	if !validConfigKey(e.Kind, e.Name) {
		return errBadConfigKey
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketConfig).Put([]byte(configKey(e.Kind, e.Name)), b)
	})
}

func (s *Bolt) GetConfig(kind, name string) (*ConfigEntry, error) {
	var e *ConfigEntry
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketConfig).Get([]byte(configKey(kind, name)))
		if v == nil {
			return ErrNotFound
		}
		e = new(ConfigEntry)
		return json.Unmarshal(v, e)
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

func (s *Bolt) DeleteConfig(kind, name string) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketConfig).Delete([]byte(configKey(kind, name)))
	})
}

func (s *Bolt) ListConfig() ([]*ConfigEntry, error) {
	var out []*ConfigEntry
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketConfig).ForEach(func(k, v []byte) error {
			e := new(ConfigEntry)
			if err := json.Unmarshal(v, e); err != nil {
				return fmt.Errorf("config entry %q: %w", k, err)
			}
			out = append(out, e)
			return nil
		})
	})
	sortEntries(out)
	return out, err
}

func (s *Bolt) PutPin(p *Pin) error {
	if !validPin(p) {
		return errBadPinKey
	}
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketPins).Put([]byte(PinKey(p.Server, p.Kind, p.Name)), b)
	})
}

func (s *Bolt) GetPin(server, kind, name string) (*Pin, error) {
	var p *Pin
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketPins).Get([]byte(PinKey(server, kind, name)))
		if v == nil {
			return ErrNotFound
		}
		p = new(Pin)
		return json.Unmarshal(v, p)
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

func (s *Bolt) DeletePin(server, kind, name string) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketPins).Delete([]byte(PinKey(server, kind, name)))
	})
}

func (s *Bolt) ListPins() ([]*Pin, error) {
	var out []*Pin
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketPins).ForEach(func(k, v []byte) error {
			p := new(Pin)
			if err := json.Unmarshal(v, p); err != nil {
				return fmt.Errorf("pin %q: %w", k, err)
			}
			out = append(out, p)
			return nil
		})
	})
	sortPins(out)
	return out, err
}
