package auth

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestNewAPIKey(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		key, sum := NewAPIKey()
		if !regexp.MustCompile(`^mcpgw_[A-Za-z0-9_-]{43}$`).MatchString(key) {
			t.Fatalf("key %q has the wrong shape", key)
		}
		if sum != HashAPIKey(key) || len(sum) != 64 {
			t.Fatalf("hash %q", sum)
		}
		if seen[key] {
			t.Fatal("duplicate key")
		}
		seen[key] = true
	}
	// Known answer: sha256("abc").
	if got := HashAPIKey("abc"); got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Fatalf("HashAPIKey = %s", got)
	}
}

func openAt(t *testing.T, path string, clock *fakeClock) *KeyFile {
	t.Helper()
	f, err := OpenKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f.now = clock.Now
	f.lastCheck.Store(clock.Now().UnixNano())
	return f
}

func TestKeyFileAddLookup(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "keys.jsonl")
	clock := newClock(testNow)
	f := openAt(t, path, clock)

	if _, ok := f.Lookup("mcpgw_nothing"); ok {
		t.Fatal("lookup in an empty file succeeded")
	}
	k1, r1, err := f.Add("alice")
	if err != nil {
		t.Fatal(err)
	}
	k2, r2, err := f.Add("bob")
	if err != nil {
		t.Fatal(err)
	}
	if r1.Agent != "alice" || r1.SHA256 != HashAPIKey(k1) || r1.ID == "" || r1.ID == r2.ID || !r1.Created.Equal(testNow) {
		t.Fatalf("records %+v %+v", r1, r2)
	}
	tests := []struct {
		key   string
		agent string
		ok    bool
	}{
		{k1, "alice", true},
		{k2, "bob", true},
		{k1 + "x", "", false},
		{"", "", false},
	}
	for _, tc := range tests {
		if agent, ok := f.Lookup(tc.key); agent != tc.agent || ok != tc.ok {
			t.Fatalf("Lookup(%q) = %q, %v; want %q, %v", tc.key, agent, ok, tc.agent, tc.ok)
		}
	}

	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", fi.Mode().Perm())
	}
	// The file holds records only: no key material.
	data, _ := os.ReadFile(path)
	if strings.Contains(string(data), k1) || strings.Contains(string(data), k2) {
		t.Fatal("key file contains a key")
	}
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	var lines int
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		if len(m) != 4 || m["id"] == nil || m["agent"] == nil || m["sha256"] == nil || m["created"] == nil {
			t.Fatalf("line %q", sc.Text())
		}
		lines++
	}
	if lines != 2 {
		t.Fatalf("%d lines", lines)
	}

	// A fresh open sees both; Records keeps file order.
	g := openAt(t, path, clock)
	if agent, ok := g.Lookup(k2); !ok || agent != "bob" {
		t.Fatal("reopened file lost a key")
	}
	if recs := g.Records(); len(recs) != 2 || recs[0].ID != r1.ID || recs[1].ID != r2.ID {
		t.Fatalf("Records = %+v", recs)
	}
	if _, _, err := f.Add(""); err == nil {
		t.Fatal("Add with no agent succeeded")
	}
}

func TestKeyFileReloadByAnotherWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.jsonl")
	clock := newClock(testNow)
	daemon := openAt(t, path, clock) // the file does not exist yet
	cli, err := OpenKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}

	key, _, err := cli.Add("carol")
	if err != nil {
		t.Fatal(err)
	}
	// Checked at most once per second.
	if _, ok := daemon.Lookup(key); ok {
		t.Fatal("daemon saw the new key before the check interval")
	}
	clock.Advance(1100 * time.Millisecond)
	if agent, ok := daemon.Lookup(key); !ok || agent != "carol" {
		t.Fatal("daemon did not pick up the key the CLI added")
	}

	// A half-written line (another process mid-append) is left for later.
	key2, sum2 := NewAPIKey()
	line, _ := json.Marshal(APIKeyRecord{ID: "key_x", Agent: "dave", SHA256: sum2, Created: testNow})
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	fh.Write(line[:20])
	clock.Advance(1100 * time.Millisecond)
	if _, ok := daemon.Lookup(key); !ok {
		t.Fatal("partial line broke the loaded keys")
	}
	fh.Write(append(line[20:], '\n'))
	fh.Close()
	clock.Advance(1100 * time.Millisecond)
	if agent, ok := daemon.Lookup(key2); !ok || agent != "dave" {
		t.Fatal("completed line not picked up")
	}

	// A corrupt file keeps the previous keys.
	if err := os.WriteFile(path+".tmp", []byte("{not json}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Rename(path+".tmp", path)
	clock.Advance(1100 * time.Millisecond)
	if _, ok := daemon.Lookup(key2); !ok {
		t.Fatal("corrupt file dropped the loaded keys")
	}
	if _, err := OpenKeyFile(path); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("OpenKeyFile on a corrupt file: %v", err)
	}

	// Deleting the file revokes every key.
	os.Remove(path)
	clock.Advance(1100 * time.Millisecond)
	if _, ok := daemon.Lookup(key); ok {
		t.Fatal("key still valid after the file was deleted")
	}
}

func TestKeyFileConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.jsonl")
	clock := newClock(testNow)
	daemon := openAt(t, path, clock)
	writers := []*KeyFile{openAt(t, path, clock), openAt(t, path, clock)}
	var wg sync.WaitGroup
	var mu sync.Mutex
	keys := map[string]string{}
	for i, w := range writers {
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				agent := []string{"x", "y"}[i]
				k, _, err := w.Add(agent)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				keys[k] = agent
				mu.Unlock()
				daemon.Lookup(k) // races with the appends
				clock.Advance(100 * time.Millisecond)
			}()
		}
	}
	wg.Wait()
	clock.Advance(2 * time.Second)
	for k, agent := range keys {
		if got, ok := daemon.Lookup(k); !ok || got != agent {
			t.Fatalf("Lookup = %q, %v; want %q", got, ok, agent)
		}
	}
	if n := len(daemon.Records()); n != 40 {
		t.Fatalf("%d records, want 40", n)
	}
}
