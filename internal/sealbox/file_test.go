package sealbox

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// TestLoadOrCreate: an absent file is created 0600 (its directory too) with one key, and
// the next load reads the same key back; a file with a rotated ring is read as a ring.
func TestLoadOrCreate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "sealbox.key")
	r1, err := LoadOrCreate(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("created with mode %04o, want 0600", fi.Mode().Perm())
	}
	sealed := r1.Seal([]byte("token"), []byte("aad"))
	r2, err := LoadOrCreate(path)
	if err != nil {
		t.Fatal(err)
	}
	if r2.SealingKeyID() != r1.SealingKeyID() {
		t.Fatalf("reload: key %s, created %s", r2.SealingKeyID(), r1.SealingKeyID())
	}
	if got, err := r2.Open(sealed, []byte("aad")); err != nil || string(got) != "token" {
		t.Errorf("open after reload: %q, %v", got, err)
	}
	left, _ := os.ReadDir(filepath.Dir(path))
	if len(left) != 1 {
		t.Errorf("state dir holds %d entries, want the key file alone", len(left))
	}
	// An operator rotates by putting a new key first.
	old, _ := os.ReadFile(path)
	if err := os.WriteFile(path, []byte(NewKeyText()+",\n"+string(old)), 0o600); err != nil {
		t.Fatal(err)
	}
	r3, err := LoadOrCreate(path)
	if err != nil {
		t.Fatal(err)
	}
	if r3.SealingKeyID() == r1.SealingKeyID() || !r3.NeedsReseal(sealed) {
		t.Errorf("rotated file: sealing key %s, old record needs reseal %v", r3.SealingKeyID(), r3.NeedsReseal(sealed))
	}
}

// TestLoadOrCreateConcurrent: processes (here goroutines) that create the file at once
// all end up with the one key the file holds.
func TestLoadOrCreateConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sealbox.key")
	ids := make([]string, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			r, err := LoadOrCreate(path)
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = r.SealingKeyID()
		})
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("concurrent creators got keys %v", ids)
		}
	}
}

// TestLoadOrCreatePermissions: a key file group or others may read is refused, as ssh
// refuses such a private key, naming the file and the mode; so is one that is not a
// regular file, or holds bad text (named, not quoted).
func TestLoadOrCreatePermissions(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no mode bits on Windows")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "sealbox.key")
	if _, err := LoadOrCreate(path); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []os.FileMode{0o640, 0o604, 0o644, 0o660} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		_, err := LoadOrCreate(path)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "group or others") {
			t.Errorf("mode %04o: %v, want a refusal naming the file", mode, err)
		}
	}
	if err := os.Chmod(path, 0o400); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreate(path); err != nil {
		t.Errorf("mode 0400: %v", err)
	}

	bad := filepath.Join(dir, "bad.key")
	if err := os.WriteFile(bad, []byte("not-a-key-at-all"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadOrCreate(bad)
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "key 1 of 1") || strings.Contains(err.Error(), "not-a-key") {
		t.Errorf("bad key text: %v", err)
	}
	if _, err := LoadOrCreate(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory as key file: %v", err)
	}
	if _, err := LoadOrCreate(filepath.Join(bad, "sub.key")); err == nil {
		t.Error("a key file under a regular file was created")
	}
}

// TestLoadOrCreateFollowsNoLink: a symbolic link in the key file's place (to a key its
// maker knows) is refused, not read, and no key is created in its stead.
func TestLoadOrCreateFollowsNoLink(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("O_NOFOLLOW is not available on Windows")
	}
	dir := t.TempDir()
	known := filepath.Join(dir, "known.key")
	if err := os.WriteFile(known, []byte(NewKeyText()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "sealbox.key")
	if err := os.Symlink(known, path); err != nil {
		t.Fatal(err)
	}
	if r, err := LoadOrCreate(path); err == nil {
		t.Fatalf("a linked key file was read (%v); want a refusal", r)
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi, err)
	}
}
