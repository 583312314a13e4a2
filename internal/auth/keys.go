package auth

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcpgw/mcpgw/internal/statedir"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// APIKeyPrefix starts every key NewAPIKey makes, so a leaked key is easy to recognise.
const APIKeyPrefix = "mcpgw_"

// NewAPIKey makes a key ("mcpgw_" + 32 random bytes, base64url) and its hex SHA-256.
func NewAPIKey() (key string, sha256hex string) {
	var b [32]byte
	rand.Read(b[:]) // never fails (crypto/rand, Go ≥ 1.24)
	key = APIKeyPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	return key, HashAPIKey(key)
}

// HashAPIKey is the hex SHA-256 of the whole key: what key files and config store.
func HashAPIKey(key string) string {
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:])
}

// APIKeyRecord is one line of a key file. It holds no key material.
type APIKeyRecord struct {
	ID      string    `json:"id"`
	Agent   string    `json:"agent"`
	SHA256  string    `json:"sha256"`
	Created time.Time `json:"created"`
	// Admin keys open the admin API and the web UI, and nothing else: they name no agent
	// and are refused on /mcp.
	Admin bool `json:"admin,omitempty"`
	// ReadOnly and ConnectionScope narrow the key's holder, as the agent's read_only and
	// connection_scope do: the narrower of the agent and the key wins.
	ReadOnly        bool     `json:"read_only,omitempty"`
	ConnectionScope []string `json:"connection_scope,omitempty"`
}

// KeyScope narrows what an agent key's holder may use (AddScoped).
type KeyScope struct {
	ReadOnly        bool
	ConnectionScope []string // nil: no narrowing; empty: no plugin connection
}

// keyFileCheckInterval bounds how often Lookup looks at the file for changes.
const keyFileCheckInterval = time.Second

// KeyFile is an append-only JSON-lines file of APIKeyRecords (mode 0600). The daemon and the
// CLI may both have it open: Lookup notices lines another process appended.
type KeyFile struct {
	path string
	now  func() time.Time // tests replace it

	mu      sync.RWMutex
	byHash  map[string]APIKeyRecord
	records []APIKeyRecord

	loadMu    sync.Mutex  // serialises reloads and appends
	stamp     os.FileInfo // what the loaded content came from (nil: no file); guarded by loadMu
	lastCheck atomic.Int64
}

// OpenKeyFile loads path. A missing file is an empty key set (Add creates it).
func OpenKeyFile(path string) (*KeyFile, error) {
	f := &KeyFile{path: path, now: time.Now, byHash: map[string]APIKeyRecord{}}
	f.loadMu.Lock()
	defer f.loadMu.Unlock()
	if err := f.loadLocked(); err != nil {
		return nil, err
	}
	f.lastCheck.Store(f.now().UnixNano())
	return f, nil
}

// Path is the file's path.
func (f *KeyFile) Path() string { return f.path }

// loadLocked reads the file and installs its records. The caller holds loadMu.
func (f *KeyFile) loadLocked() error {
	fh, err := os.OpenFile(f.path, os.O_RDONLY|statedir.NoFollow, 0)
	if errors.Is(err, fs.ErrNotExist) {
		f.install(nil)
		f.stamp = nil
		return nil
	}
	if err != nil {
		return fmt.Errorf("key file: %w", err)
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return fmt.Errorf("key file: %w", err)
	}
	// Read only what the stat saw, so the stamp matches the content: a line appended after
	// this point changes the size and is read at the next check.
	data, err := io.ReadAll(io.LimitReader(fh, fi.Size()))
	if err != nil {
		return fmt.Errorf("key file %s: %w", f.path, err)
	}
	recs, err := parseKeyLines(data)
	if err != nil {
		return fmt.Errorf("key file %s: %w", f.path, err)
	}
	f.install(recs)
	f.stamp = fi
	return nil
}

// parseKeyLines reads JSON lines. A last line without its newline that does not parse is a
// write in progress and is left for the next read.
func parseKeyLines(data []byte) ([]APIKeyRecord, error) {
	var recs []APIKeyRecord
	for n := 1; len(data) > 0; n++ {
		line, rest, complete := bytes.Cut(data, []byte("\n"))
		data = rest
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var r APIKeyRecord
		err := json.Unmarshal(line, &r)
		if err == nil {
			err = checkRecord(r)
		}
		if err != nil {
			if !complete {
				break
			}
			return nil, fmt.Errorf("line %d: %v", n, err)
		}
		recs = append(recs, r)
	}
	return recs, nil
}

func checkRecord(r APIKeyRecord) error {
	if r.Agent == "" && !r.Admin {
		return errors.New("missing agent")
	}
	if len(r.SHA256) != 64 {
		return errors.New("sha256 must be 64 hex digits")
	}
	if _, err := hex.DecodeString(r.SHA256); err != nil {
		return errors.New("sha256 must be 64 hex digits")
	}
	return nil
}

func (f *KeyFile) install(recs []APIKeyRecord) {
	m := make(map[string]APIKeyRecord, len(recs))
	for _, r := range recs {
		m[toLowerHex(r.SHA256)] = r // a later line for the same hash wins
	}
	f.mu.Lock()
	f.byHash, f.records = m, recs
	f.mu.Unlock()
}

func toLowerHex(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'F' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}

// Add makes a new key for agent, appends its record and returns the key. The key is not
// stored anywhere: this is the only time it is seen.
func (f *KeyFile) Add(agent string) (key string, rec APIKeyRecord, err error) {
	if agent == "" {
		return "", rec, errors.New("key file: agent is empty")
	}
	return f.add(agent, false, KeyScope{})
}

// AddScoped is Add for a key narrowed to read-only and/or some plugin connections.
func (f *KeyFile) AddScoped(agent string, sc KeyScope) (key string, rec APIKeyRecord, err error) {
	if agent == "" {
		return "", rec, errors.New("key file: agent is empty")
	}
	return f.add(agent, false, sc)
}

// AddAdmin makes an admin key (it opens the admin API, not /mcp) and appends its record.
func (f *KeyFile) AddAdmin() (key string, rec APIKeyRecord, err error) {
	return f.add("", true, KeyScope{})
}

func (f *KeyFile) add(agent string, admin bool, sc KeyScope) (key string, rec APIKeyRecord, err error) {
	key, sum := NewAPIKey()
	var id [6]byte
	rand.Read(id[:])
	prefix := "key_"
	if admin {
		prefix = "admin_"
	}
	rec = APIKeyRecord{ID: prefix + hex.EncodeToString(id[:]), Agent: agent, SHA256: sum, Created: f.now().UTC().Truncate(time.Second), Admin: admin,
		ReadOnly: sc.ReadOnly, ConnectionScope: sc.ConnectionScope}
	line, err := json.Marshal(rec)
	if err != nil {
		return "", APIKeyRecord{}, err
	}
	line = append(line, '\n')

	f.loadMu.Lock()
	defer f.loadMu.Unlock()
	if err := os.MkdirAll(filepath.Dir(f.path), 0o700); err != nil {
		return "", APIKeyRecord{}, fmt.Errorf("key file: %w", err)
	}
	fh, err := os.OpenFile(f.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|statedir.NoFollow, 0o600)
	if err != nil {
		return "", APIKeyRecord{}, fmt.Errorf("key file: %w", err)
	}
	if fi, err := fh.Stat(); err == nil && fi.Mode().Perm() != 0o600 {
		fh.Chmod(0o600) // best effort; a file someone made wider is narrowed
	}
	// One write with O_APPEND: concurrent writers do not interleave inside a line.
	_, werr := fh.Write(line)
	cerr := fh.Close()
	if werr != nil {
		return "", APIKeyRecord{}, fmt.Errorf("key file %s: %w", f.path, werr)
	}
	if cerr != nil {
		return "", APIKeyRecord{}, fmt.Errorf("key file %s: %w", f.path, cerr)
	}
	f.mu.Lock()
	f.byHash[sum] = rec
	f.records = append(f.records[:len(f.records):len(f.records)], rec)
	f.mu.Unlock()
	return key, rec, nil
}

// Lookup returns the agent a key belongs to. It looks at the file at most once per second and
// reloads it when its size, mtime or identity changed (keys added by the CLI while the daemon
// runs; a deleted file revokes every key).
func (f *KeyFile) Lookup(key string) (agent string, ok bool) {
	r, ok := f.LookupRecord(key)
	return r.Agent, ok
}

// LookupRecord returns the record of an agent key (with its narrowing), as Lookup finds it.
func (f *KeyFile) LookupRecord(key string) (APIKeyRecord, bool) {
	f.maybeReload()
	sum := HashAPIKey(key)
	f.mu.RLock()
	r, ok := f.byHash[sum]
	f.mu.RUnlock()
	if r.Admin {
		return APIKeyRecord{}, false // an admin key is no agent's key
	}
	return r, ok
}

// LookupAdmin reports whether key is an admin key, and its id.
func (f *KeyFile) LookupAdmin(key string) (id string, ok bool) {
	f.maybeReload()
	sum := HashAPIKey(key)
	f.mu.RLock()
	r, ok := f.byHash[sum]
	f.mu.RUnlock()
	return r.ID, ok && r.Admin
}

// Records returns the records in file order.
func (f *KeyFile) Records() []APIKeyRecord {
	f.maybeReload()
	f.mu.RLock()
	defer f.mu.RUnlock()
	return append([]APIKeyRecord(nil), f.records...)
}

func (f *KeyFile) maybeReload() {
	now := f.now().UnixNano()
	last := f.lastCheck.Load()
	if now-last < int64(keyFileCheckInterval) || !f.lastCheck.CompareAndSwap(last, now) {
		return
	}
	f.loadMu.Lock()
	defer f.loadMu.Unlock()
	fi, err := os.Stat(f.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if f.stamp != nil {
			f.install(nil)
			f.stamp = nil
		}
		return
	case err != nil:
		return // keep what we have
	}
	if f.stamp != nil && os.SameFile(fi, f.stamp) && fi.Size() == f.stamp.Size() && fi.ModTime().Equal(f.stamp.ModTime()) {
		return
	}
	_ = f.loadLocked() // on a bad file keep the previous keys; the next check tries again
}
