// size: being split (issue 41)
package store

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcpgw/mcpgw/internal/statedir"
	"hash/fnv"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
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

// boltMigration brings a store from layout From to From+1. They run in order, each in the
// same transaction as the version bump, when the file is opened.
type boltMigration struct {
	From int
	Name string
	Run  func(tx *bolt.Tx) error
}

// boltMigrations are every layout change since the first release. Layout 1 had the
// buckets sessions, tasks and conversations and no schema version; its files are kept in
// testdata/store-v1.db; a layout 3 file, written just before layout 4, in
// testdata/store-v3.db.
var boltMigrations = []boltMigration{
	{From: 1, Name: "v1-to-v2-config-bucket", Run: func(tx *bolt.Tx) error {
		// Admin API config entries (servers, agents, executors, settings).
		_, err := tx.CreateBucketIfNotExists(bucketConfig)
		return err
	}},
	{From: 2, Name: "v2-to-v3-pins-bucket", Run: func(tx *bolt.Tx) error {
		// Integrity records of served definitions.
		_, err := tx.CreateBucketIfNotExists(bucketPins)
		return err
	}},
	{From: 3, Name: "v3-to-v4-credentials-bucket", Run: func(tx *bolt.Tx) error {
		// Sealed upstream credentials (OAuth grants, client registrations, pending flows).
		_, err := tx.CreateBucketIfNotExists([]byte(bucketCredentialsName))
		return err
	}},
}

// migrateBolt reads the file's layout version (1 when it has none: the first release
// wrote none) and runs the migrations up to ConfigSchemaVersion. A file written by a
// newer release is refused rather than half understood.
func migrateBolt(tx *bolt.Tx) ([]string, error) {
	meta, err := tx.CreateBucketIfNotExists(bucketMeta)
	if err != nil {
		return nil, err
	}
	v := 1
	if raw := meta.Get(keySchemaVersion); raw != nil {
		n, err := strconv.Atoi(string(raw))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("schema_version %q is not a layout version", raw)
		}
		v = n
	}
	if v > ConfigSchemaVersion {
		return nil, fmt.Errorf("written by a newer mcpgw (store layout %d; this one reads up to %d)", v, ConfigSchemaVersion)
	}
	var ran []string
	for _, m := range boltMigrations {
		if m.From < v {
			continue
		}
		if err := m.Run(tx); err != nil {
			return nil, fmt.Errorf("migration %s: %w", m.Name, err)
		}
		ran = append(ran, m.Name)
		v = m.From + 1
	}
	if err := meta.Put(keySchemaVersion, []byte(strconv.Itoa(v))); err != nil {
		return nil, err
	}
	return ran, nil
}

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

// openBoltChecked opens path with bbolt and verifies it. bbolt trusts the file's meta page:
// on a corrupt file it may index out of range, and on a truncated one it reads past the
// end of the mapping (SIGBUS), which kills the process unless the goroutine asked for
// faults to panic. Both become errors here.
func openBoltChecked(path string) (db *bolt.DB, migrated []string, err error) {
	var file *os.File
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			// The half-open DB cannot be closed through bbolt; closing its file releases
			// the lock (the mapping is leaked, which is fine for an error the gateway
			// exits on).
			if file != nil {
				file.Close()
			}
			// Its mapping still holds the file's lock: a later open in this process
			// would wait for it and then blame another process.
			panickedPaths.Store(path, true)
			db, migrated, err = nil, nil, fmt.Errorf("corrupt bbolt database: %v", p)
		}
	}()
	fi, err := os.Stat(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, nil, err
	}
	if err == nil && fi.Size() > 0 {
		if err := checkBoltMeta(path, fi.Size()); err != nil {
			return nil, nil, err
		}
	}
	if _, bad := panickedPaths.Load(path); bad {
		return nil, nil, errors.New("corrupt bbolt database (an earlier open of it in this process failed)")
	}
	db, err = bolt.Open(path, 0o600, &bolt.Options{
		Timeout: 5 * time.Second,
		OpenFile: func(name string, flag int, mode os.FileMode) (*os.File, error) {
			f, err := os.OpenFile(name, flag|statedir.NoFollow, mode) // no link: the state dir is the gateway's only
			file = f
			return f, err
		},
	})
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return nil, nil, fmt.Errorf("locked by another process (is another gateway running?): %w", err)
		}
		return nil, nil, fmt.Errorf("not a valid bbolt database: %w", err)
	}
	if err := checkBolt(db, fi); err != nil {
		db.Close() // the check's transaction is rolled back, even after a panic
		return nil, nil, err
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketSessions, bucketTasks, bucketConvs} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		migrated, err = migrateBolt(tx)
		return err
	})
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return db, migrated, nil
}

// panickedPaths are files whose bbolt open panicked in this process.
var panickedPaths sync.Map

// bbolt's meta page (go.etcd.io/bbolt/internal/common.Meta), after the 16-byte page
// header: magic, version, page size, flags u32; root bucket (root, sequence), freelist,
// high-water mark (pgid), txid, checksum u64 (FNV-64a of what precedes it). Native byte
// order, as bbolt writes it.
const (
	boltMagic          = 0xED0CDAED
	boltVersion        = 2
	boltPageHeader     = 16
	boltMetaSize       = 64
	boltNoFreelist     = ^uint64(0)
	boltMetaChecksumAt = 56
)

type boltMeta struct {
	pageSize                 uint32
	root, freelist, pgid, tx uint64
}

func parseBoltMeta(b []byte) (m boltMeta, ok bool) {
	if len(b) < boltMetaSize {
		return m, false
	}
	e := binary.NativeEndian
	if e.Uint32(b[0:]) != boltMagic || e.Uint32(b[4:]) != boltVersion {
		return m, false
	}
	h := fnv.New64a()
	h.Write(b[:boltMetaChecksumAt])
	if h.Sum64() != e.Uint64(b[boltMetaChecksumAt:]) {
		return m, false
	}
	return boltMeta{pageSize: e.Uint32(b[8:]), root: e.Uint64(b[16:]), freelist: e.Uint64(b[32:]),
		pgid: e.Uint64(b[40:]), tx: e.Uint64(b[48:])}, true
}

// checkBoltMeta reads the meta page bbolt will use, as bbolt picks it (the valid one with
// the higher txid), and refuses a file shorter than its high-water mark or whose meta
// points past it: bbolt would read past the end of the file. A file with no valid meta
// page is left to bbolt to reject.
func checkBoltMeta(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_RDONLY|statedir.NoFollow, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	read := func(off int64) []byte {
		b := make([]byte, boltMetaSize)
		if _, err := f.ReadAt(b, off+boltPageHeader); err != nil {
			return nil
		}
		return b
	}
	m0, ok0 := parseBoltMeta(read(0))
	var m1 boltMeta
	var ok1 bool
	if ok0 {
		m1, ok1 = parseBoltMeta(read(int64(m0.pageSize)))
	} else {
		for ps := int64(1024); ps <= 64<<10 && ps < size; ps *= 2 {
			if m1, ok1 = parseBoltMeta(read(ps)); ok1 {
				break
			}
		}
	}
	m := m0
	switch {
	case ok0 && ok1 && m1.tx > m0.tx, !ok0 && ok1:
		m = m1
	case !ok0 && !ok1:
		return nil
	}
	if m.pageSize < 512 || m.pageSize > 1<<20 {
		return fmt.Errorf("corrupt bbolt database: page size %d", m.pageSize)
	}
	if hwm := m.pgid * uint64(m.pageSize); m.pgid < 2 || hwm > uint64(size) || hwm/uint64(m.pageSize) != m.pgid {
		return fmt.Errorf("truncated bbolt database: it claims %d pages of %d bytes, the file has %d bytes", m.pgid, m.pageSize, size)
	}
	if m.root >= m.pgid || (m.freelist >= m.pgid && m.freelist != boltNoFreelist) {
		return fmt.Errorf("corrupt bbolt database: root page %d, freelist page %d, %d pages", m.root, m.freelist, m.pgid)
	}
	return nil
}

// checkBolt verifies an opened database (fi is the file as it was before opening, nil if
// it did not exist).
func checkBolt(db *bolt.DB, fi os.FileInfo) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("corrupt bbolt database: %v", p)
		}
	}()
	return db.View(func(tx *bolt.Tx) error {
		// The high-water mark must lie within the file, or reading pages faults
		// (checkBoltMeta already refused such a file; this is the same check on what
		// bbolt actually uses).
		if fi != nil && fi.Size() > 0 && tx.Size() > fi.Size() {
			return fmt.Errorf("truncated bbolt database: it claims %d bytes, the file has %d", tx.Size(), fi.Size())
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
