package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/mcpgw/mcpgw/internal/statedir"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

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
