package sessions

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Bolt is a Store in one bbolt file.
type Bolt struct {
	db   *bolt.DB
	path string
}

var (
	bucketSessions = []byte("sessions")
	bucketTasks    = []byte("tasks")
	bucketConvs    = []byte("conversations")
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
	db, err := openBoltChecked(path)
	if err != nil {
		return nil, fmt.Errorf("state file %s: %w (move it away to start with no sessions)", path, err)
	}
	return &Bolt{db: db, path: path}, nil
}

// openBoltChecked opens path with bbolt and verifies it. bbolt trusts the file's meta page:
// on a corrupt file it may index out of range, and on a truncated one it reads past the
// end of the mapping (SIGBUS), which kills the process unless the goroutine asked for
// faults to panic. Both become errors here.
func openBoltChecked(path string) (db *bolt.DB, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			// The half-open DB (file lock, mapping) cannot be closed safely; it is leaked,
			// which is fine for an error the gateway exits on.
			db, err = nil, fmt.Errorf("corrupt bbolt database: %v", p)
		}
	}()
	fi, err := os.Stat(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		if errors.Is(err, bolt.ErrTimeout) {
			return nil, fmt.Errorf("locked by another process (is another gateway running?): %w", err)
		}
		return nil, fmt.Errorf("not a valid bbolt database: %w", err)
	}
	if err := checkBolt(db, fi); err != nil {
		db.Close()
		return nil, err
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketSessions, bucketTasks, bucketConvs} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// checkBolt verifies an opened database (fi is the file as it was before opening, nil if
// it did not exist).
func checkBolt(db *bolt.DB, fi os.FileInfo) error {
	return db.View(func(tx *bolt.Tx) error {
		// The high-water mark must lie within the file, or reading pages faults.
		if fi != nil && fi.Size() > 0 && tx.Size() > fi.Size() {
			return fmt.Errorf("truncated: the database claims %d bytes, the file has %d", tx.Size(), fi.Size())
		}
		// Touch every reachable page from this goroutine (which turns faults into panics).
		var walk func(b *bolt.Bucket, depth int) error
		walk = func(b *bolt.Bucket, depth int) error {
			if depth > 8 {
				return errors.New("buckets nested too deep")
			}
			return b.ForEach(func(k, v []byte) error {
				if v == nil {
					if sub := b.Bucket(k); sub != nil {
						return walk(sub, depth+1)
					}
				}
				return nil
			})
		}
		err := tx.ForEach(func(name []byte, b *bolt.Bucket) error { return walk(b, 0) })
		if err != nil {
			return err
		}
		for err := range tx.Check() {
			return fmt.Errorf("inconsistent: %w", err)
		}
		return nil
	})
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
	if err != nil {
		return nil, err
	}
	return r, nil
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
