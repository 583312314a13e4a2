package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// backends are the stores every Store test runs against. setup runs once per backend
// (the redis one starts a server, or skips) and returns how to open a fresh, empty store.
var backends = []struct {
	name  string
	setup func(t *testing.T) func(t *testing.T) Store
}{
	{"memory", func(*testing.T) func(*testing.T) Store {
		return func(*testing.T) Store { return NewMemory() }
	}},
	{"bolt", func(*testing.T) func(*testing.T) Store {
		return func(t *testing.T) Store {
			s, err := OpenBolt(filepath.Join(t.TempDir(), "state", "mcpgw.db"))
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
	}},
	{"redis", func(t *testing.T) func(*testing.T) Store {
		srv := startRedis(t)
		return func(t *testing.T) Store {
			s := srv.open(t)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := s.c.FlushDB(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			return s
		}
	}},
	{"cached/memory", func(*testing.T) func(*testing.T) Store {
		return func(*testing.T) Store { return NewCached(NewMemory(), 100) }
	}},
	{"cached/redis", func(t *testing.T) func(*testing.T) Store {
		srv := startRedis(t)
		return func(t *testing.T) Store {
			s := srv.open(t)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := s.c.FlushDB(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			return NewCached(s, 100)
		}
	}},
}

func record(id string) *Record {
	now := time.Date(2025, 11, 25, 10, 0, 0, 123456789, time.UTC)
	return &Record{
		ID: id, Transport: "streamable", Agent: "claude-code", Conversation: "c1", Task: "task-42",
		ProtocolVersion: "2025-11-25",
		ClientInfo:      json.RawMessage(`{"name":"client","version":"1"}`),
		ClientCaps:      json.RawMessage(`{"sampling":{}}`),
		Servers:         []string{"docs", "everything"},
		LogLevel:        "info",
		Created:         now, LastSeen: now.Add(time.Minute),
	}
}

func TestStore(t *testing.T) {
	for _, st := range backends {
		t.Run(st.name, func(t *testing.T) {
			open := st.setup(t)
			t.Run("put get", func(t *testing.T) {
				s := open(t)
				defer s.Close()
				want := record("s1")
				if err := s.Put(want); err != nil {
					t.Fatal(err)
				}
				got, err := s.Get("s1")
				if err != nil {
					t.Fatal(err)
				}
				sameRecord(t, got, want)
			})
			t.Run("missing", func(t *testing.T) {
				s := open(t)
				defer s.Close()
				if r, err := s.Get("nope"); !errors.Is(err, ErrNotFound) || r != nil {
					t.Fatalf("Get(missing) = %v, %v; want nil, ErrNotFound", r, err)
				}
				if err := s.Delete("nope"); err != nil {
					t.Fatalf("Delete(missing) = %v", err)
				}
			})
			t.Run("overwrite", func(t *testing.T) {
				s := open(t)
				defer s.Close()
				r := record("s1")
				_ = s.Put(r)
				r.LogLevel, r.Servers = "debug", []string{"docs"}
				if err := s.Put(r); err != nil {
					t.Fatal(err)
				}
				got, _ := s.Get("s1")
				sameRecord(t, got, r)
			})
			t.Run("delete", func(t *testing.T) {
				s := open(t)
				defer s.Close()
				_ = s.Put(record("s1"))
				_ = s.Put(record("s2"))
				if err := s.Delete("s1"); err != nil {
					t.Fatal(err)
				}
				if _, err := s.Get("s1"); !errors.Is(err, ErrNotFound) {
					t.Fatalf("deleted record: %v", err)
				}
				if _, err := s.Get("s2"); err != nil {
					t.Fatalf("other record gone: %v", err)
				}
			})
			t.Run("list", func(t *testing.T) {
				s := open(t)
				defer s.Close()
				if l, err := s.List(); err != nil || len(l) != 0 {
					t.Fatalf("empty List = %v, %v", l, err)
				}
				for i := 0; i < 5; i++ {
					_ = s.Put(record(fmt.Sprintf("s%d", i)))
				}
				_ = s.Delete("s3")
				l, err := s.List()
				if err != nil {
					t.Fatal(err)
				}
				var ids []string
				for _, r := range l {
					ids = append(ids, r.ID)
				}
				sort.Strings(ids)
				if !slices.Equal(ids, []string{"s0", "s1", "s2", "s4"}) {
					t.Fatalf("List ids = %v", ids)
				}
			})
			t.Run("stored by value", func(t *testing.T) {
				s := open(t)
				defer s.Close()
				r := record("s1")
				_ = s.Put(r)
				r.Servers[0] = "changed-after-put"
				r.LogLevel = "changed-after-put"
				got, _ := s.Get("s1")
				got.Servers[1] = "changed-after-get"
				again, _ := s.Get("s1")
				sameRecord(t, again, record("s1"))
			})
			t.Run("concurrent", func(t *testing.T) {
				s := open(t)
				defer s.Close()
				var wg sync.WaitGroup
				for i := 0; i < 8; i++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for j := 0; j < 20; j++ {
							id := fmt.Sprintf("g%d-%d", i, j)
							if err := s.Put(record(id)); err != nil {
								t.Error(err)
								return
							}
							if _, err := s.Get(id); err != nil {
								t.Error(err)
								return
							}
							if j%2 == 0 {
								_ = s.Delete(id)
							}
							_, _ = s.List()
						}
					}()
				}
				wg.Wait()
				if l, _ := s.List(); len(l) != 8*10 {
					t.Fatalf("%d records left, want 80", len(l))
				}
			})
			t.Run("tasks", func(t *testing.T) {
				s := open(t)
				defer s.Close()
				task := &Task{ID: "task-42", EnabledMCPServers: []string{"docs"}, Agent: "claude-code", Created: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), FileManaged: true}
				if err := s.PutTask(task); err != nil {
					t.Fatal(err)
				}
				got, err := s.GetTask("task-42")
				if err != nil || !reflect.DeepEqual(got, task) {
					t.Fatalf("GetTask = %+v, %v; want %+v", got, err, task)
				}
				if _, err := s.GetTask("nope"); !errors.Is(err, ErrNotFound) {
					t.Fatalf("GetTask(missing) = %v", err)
				}
				if l, err := s.ListTasks(); err != nil || len(l) != 1 {
					t.Fatalf("ListTasks = %v, %v", l, err)
				}
				// Tasks and sessions are separate namespaces.
				if _, err := s.Get("task-42"); !errors.Is(err, ErrNotFound) {
					t.Fatalf("a task is visible as a session: %v", err)
				}
				if err := s.DeleteTask("task-42"); err != nil {
					t.Fatal(err)
				}
				if _, err := s.GetTask("task-42"); !errors.Is(err, ErrNotFound) {
					t.Fatalf("deleted task: %v", err)
				}
			})
			t.Run("task list and value", func(t *testing.T) {
				s := open(t)
				defer s.Close()
				if l, err := s.ListTasks(); err != nil || len(l) != 0 {
					t.Fatalf("empty ListTasks = %v, %v", l, err)
				}
				for _, id := range []string{"a", "b:1", "c%2"} {
					if err := s.PutTask(&Task{ID: id, EnabledMCPServers: []string{"docs", id}}); err != nil {
						t.Fatal(err)
					}
				}
				task := &Task{ID: "a", EnabledMCPServers: []string{"x", "y"}}
				_ = s.PutTask(task)
				task.EnabledMCPServers[0] = "changed-after-put"
				got, _ := s.GetTask("a")
				got.EnabledMCPServers[1] = "changed-after-get"
				if again, _ := s.GetTask("a"); !slices.Equal(again.EnabledMCPServers, []string{"x", "y"}) {
					t.Fatalf("task shares memory with callers: %v", again.EnabledMCPServers)
				}
				if err := s.DeleteTask("nope"); err != nil {
					t.Fatalf("DeleteTask(missing) = %v", err)
				}
				_ = s.DeleteTask("b:1")
				l, err := s.ListTasks()
				if err != nil {
					t.Fatal(err)
				}
				var ids []string
				for _, t := range l {
					ids = append(ids, t.ID)
				}
				sort.Strings(ids)
				if !slices.Equal(ids, []string{"a", "c%2"}) {
					t.Fatalf("ListTasks ids = %v", ids)
				}
			})
			t.Run("conversations", func(t *testing.T) {
				s := open(t)
				defer s.Close()
				if c, err := s.GetConversation("claude-code", "c1"); !errors.Is(err, ErrNotFound) || c != nil {
					t.Fatalf("GetConversation(missing) = %v, %v; want nil, ErrNotFound", c, err)
				}
				want := &Conversation{Agent: "claude-code", ID: "c1", FullViewHash: "h1", Updated: time.Date(2025, 3, 4, 5, 6, 7, 8, time.UTC)}
				if err := s.PutConversation(want); err != nil {
					t.Fatal(err)
				}
				got, err := s.GetConversation("claude-code", "c1")
				if err != nil || got.Agent != want.Agent || got.ID != want.ID || got.FullViewHash != "h1" || !got.Updated.Equal(want.Updated) {
					t.Fatalf("GetConversation = %+v, %v; want %+v", got, err, want)
				}
				want.FullViewHash = "h2"
				if err := s.PutConversation(want); err != nil {
					t.Fatal(err)
				}
				if got, _ := s.GetConversation("claude-code", "c1"); got == nil || got.FullViewHash != "h2" {
					t.Fatalf("overwritten conversation = %+v", got)
				}
				// (agent, id) pairs that join to the same string stay apart, and
				// conversations are their own namespace.
				pairs := [][2]string{{"a:b", "c"}, {"a", "b:c"}, {"a%3Ab", "c"}, {"", "a:b:c"}, {"a:b:c", ""}}
				for i, p := range pairs {
					if err := s.PutConversation(&Conversation{Agent: p[0], ID: p[1], FullViewHash: fmt.Sprint(i)}); err != nil {
						t.Fatal(err)
					}
				}
				for i, p := range pairs {
					if got, err := s.GetConversation(p[0], p[1]); err != nil || got.FullViewHash != fmt.Sprint(i) || got.Agent != p[0] || got.ID != p[1] {
						t.Errorf("GetConversation(%q, %q) = %+v, %v; want hash %d", p[0], p[1], got, err, i)
					}
				}
				if _, err := s.GetConversation("codex", "c1"); !errors.Is(err, ErrNotFound) {
					t.Fatalf("another agent's conversation: %v", err)
				}
				if _, err := s.Get("c1"); !errors.Is(err, ErrNotFound) {
					t.Fatalf("a conversation is visible as a session: %v", err)
				}
			})
			t.Run("json names", func(t *testing.T) {
				// Records cross processes and versions (Redis, bbolt): the field names
				// are part of the format.
				b, _ := json.Marshal(&Conversation{Agent: "a", ID: "i", FullViewHash: "h"})
				for _, k := range []string{`"agent"`, `"id"`, `"full_view_hash"`, `"updated"`} {
					if !strings.Contains(string(b), k) {
						t.Errorf("conversation JSON %s lacks %s", b, k)
					}
				}
			})
		})
	}
}

func sameRecord(t *testing.T, got, want *Record) {
	t.Helper()
	if got == nil {
		t.Fatal("nil record")
	}
	if !got.Created.Equal(want.Created) || !got.LastSeen.Equal(want.LastSeen) {
		t.Errorf("times: created %v last_seen %v; want %v %v", got.Created, got.LastSeen, want.Created, want.LastSeen)
	}
	g, w := *got, *want
	g.Created, g.LastSeen, w.Created, w.LastSeen = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("record:\n got  %+v\n want %+v", g, w)
	}
}

func TestBoltSurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcpgw.db")
	s, err := OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	want := record("persisted")
	if err := s.Put(want); err != nil {
		t.Fatal(err)
	}
	_ = s.PutTask(&Task{ID: "t1", EnabledMCPServers: []string{"docs"}})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = OpenBolt(path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	got, err := s.Get("persisted")
	if err != nil {
		t.Fatalf("record lost across reopen: %v", err)
	}
	sameRecord(t, got, want)
	if _, err := s.GetTask("t1"); err != nil {
		t.Fatalf("task lost across reopen: %v", err)
	}
}

func TestBoltCorruptFileNamesPath(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string][]byte{
		"text":           []byte("this is not a bbolt database\n"),
		"garbage":        []byte(strings.Repeat("\xde\xad\xbe\xef", 4096)),
		"bad meta pages": nil, // filled below from a real database
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name+".db")
			if content == nil {
				s, err := OpenBolt(path)
				if err != nil {
					t.Fatal(err)
				}
				_ = s.Put(record("x"))
				_ = s.Close()
				b, _ := os.ReadFile(path)
				// Keep the first page, wipe the meta pages' checksums.
				for i := 0; i < len(b) && i < 8192; i++ {
					if i >= 16 {
						b[i] ^= 0xff
					}
				}
				content = b
			}
			if err := os.WriteFile(path, content, 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := OpenBolt(path)
			if err == nil {
				s.Close()
				t.Fatalf("OpenBolt accepted a corrupt file (%s)", name)
			}
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error does not name the file %s: %v", path, err)
			}
		})
	}
}

func TestBoltCreatesStateDir(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "mcpgw.db")
	s, err := OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm()&0o077 != 0 {
		t.Fatalf("state file %v, %v: want it private (0600)", fi, err)
	}
}

// A truncated database (a copy cut short, a full disk) is refused with an error naming
// the file, whatever the length: bbolt alone panics or faults on most of them.
func TestBoltTruncatedFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "full.db")
	s, err := OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 400; i++ {
		_ = s.Put(record(fmt.Sprintf("session-%04d", i)))
	}
	_ = s.PutTask(&Task{ID: "t1"})
	_ = s.Close()
	full, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var hwm int // bytes in use: the file's tail past them is preallocated, unused space
	{
		s, _ := OpenBolt(path)
		_ = s.db.View(func(tx *bolt.Tx) error { hwm = int(tx.Size()); return nil })
		_ = s.Close()
	}
	pg := 4096
	for _, n := range []int{1, 100, pg, pg + 100, 2 * pg, 2*pg + 1, 3 * pg, 5 * pg, hwm / 2, hwm - pg, hwm - 1, hwm, hwm + 1, len(full) - 1} {
		if n <= 0 || n >= len(full) {
			continue
		}
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			p := filepath.Join(dir, fmt.Sprintf("cut-%d.db", n))
			if err := os.WriteFile(p, full[:n], 0o600); err != nil {
				t.Fatal(err)
			}
			if n >= hwm {
				s, err := OpenBolt(p)
				if err != nil {
					t.Fatalf("cut in the unused tail (%d of %d bytes used): %v", n, hwm, err)
				}
				defer s.Close()
				if l, err := s.List(); err != nil || len(l) != 400 {
					t.Fatalf("List = %d records, %v", len(l), err)
				}
				return
			}
			for try := 0; try < 2; try++ { // a failed open must not keep the file locked
				start := time.Now()
				s, err := OpenBolt(p)
				if err == nil {
					s.Close()
					t.Fatalf("OpenBolt accepted a file cut to %d of %d bytes", n, hwm)
				}
				if !strings.Contains(err.Error(), p) {
					t.Fatalf("error does not name the file: %v", err)
				}
				if time.Since(start) > 2*time.Second {
					t.Fatalf("OpenBolt took %v (file left locked?): %v", time.Since(start), err)
				}
			}
			// Never silently recreated.
			if b, _ := os.ReadFile(p); !bytes.Equal(b, full[:n]) {
				t.Fatal("OpenBolt changed the corrupt file")
			}
		})
	}
}

// Corruption inside the tree (not the meta pages) is found at open, not at the first Get.
func TestBoltCorruptPages(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "full.db")
	s, err := OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 400; i++ {
		_ = s.Put(record(fmt.Sprintf("session-%04d", i)))
	}
	_ = s.Close()
	full, _ := os.ReadFile(path)
	pg := 4096
	for page := 2; page*pg < len(full) && page < 40; page++ {
		b := bytes.Clone(full)
		for i := page * pg; i < page*pg+64; i++ {
			b[i] ^= 0xa5
		}
		p := filepath.Join(dir, fmt.Sprintf("page-%d.db", page))
		_ = os.WriteFile(p, b, 0o600)
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("page %d: OpenBolt panicked: %v", page, r)
				}
			}()
			s, err := OpenBolt(p)
			if err != nil {
				if !strings.Contains(err.Error(), p) {
					t.Errorf("page %d: error does not name the file: %v", page, err)
				}
				start := time.Now()
				if _, err := OpenBolt(p); err == nil || !strings.Contains(err.Error(), p) || time.Since(start) > 2*time.Second {
					t.Errorf("page %d: second open: %v after %v", page, err, time.Since(start))
				}
				if _, poisoned := panickedPaths.Load(p); poisoned {
					t.Logf("page %d: bbolt's open panicked: %v", page, err)
				}
				return
			}
			// Pages not in use (free) may be damaged harmlessly; the data must still read.
			defer s.Close()
			if l, err := s.List(); err != nil || len(l) != 400 {
				t.Errorf("page %d: OpenBolt accepted the file but List = %d records, %v", page, len(l), err)
			}
		}()
	}
}

func TestBoltConversationsSurviveReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcpgw.db")
	s, _ := OpenBolt(path)
	_ = s.PutConversation(&Conversation{Agent: "a", ID: "c", FullViewHash: "h"})
	_ = s.Close()
	s, err := OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if c, err := s.GetConversation("a", "c"); err != nil || c.FullViewHash != "h" {
		t.Fatalf("conversation lost across reopen: %+v, %v", c, err)
	}
}

// A damaged freelist page makes bbolt's Open itself panic (it loads the freelist): the
// panic is an error naming the file, and opening it again in the same process is one too
// (not a wait on the lock the half-open database still holds).
func TestBoltCorruptFreelist(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcpgw.db")
	s, err := OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		_ = s.Put(record(fmt.Sprintf("session-%04d", i)))
		_ = s.Delete(fmt.Sprintf("session-%04d", i-1))
	}
	_ = s.Close()
	b, _ := os.ReadFile(path)
	m0, ok0 := parseBoltMeta(b[boltPageHeader:])
	m1, ok1 := parseBoltMeta(b[4096+boltPageHeader:])
	if !ok0 || !ok1 {
		t.Fatal("cannot read the meta pages")
	}
	m := m0
	if m1.tx > m0.tx {
		m = m1
	}
	off := int(m.freelist) * int(m.pageSize)
	for i := off + 8; i < off+16; i++ { // flags, count: no longer a freelist page
		b[i] = 0xff
	}
	_ = os.WriteFile(path, b, 0o600)
	for try := 0; try < 2; try++ {
		start := time.Now()
		s, err := OpenBolt(path)
		if err == nil {
			s.Close()
			t.Fatal("OpenBolt accepted a database whose freelist page is damaged")
		}
		if !strings.Contains(err.Error(), path) || time.Since(start) > 2*time.Second {
			t.Fatalf("try %d: %v after %v", try, err, time.Since(start))
		}
		t.Logf("try %d: %v", try, err)
	}
}
