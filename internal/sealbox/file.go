package sealbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
)

// maxKeyFile bounds what LoadOrCreate reads: a key file holds a few keys of 44 characters.
const maxKeyFile = 64 << 10

// LoadOrCreate reads the key ring kept in the file at path (ParseKeys's text), for a
// single-machine install with no configured key. A file that is absent is created (mode
// 0600, its directory 0700) holding one fresh key. Like an SSH private key, a file that
// group or others may read is refused: the keys are what stands between the store and the
// tokens sealed in it. (Windows has no such mode bits; the check is skipped there.) A
// symbolic link in the key file's place is refused, not followed.
//
// Two processes that create the file at once end up with one key: the file appears
// whole (written aside, then linked into place) and the one that loses reads the winner's.
func LoadOrCreate(path string) (*Ring, error) {
	r, err := load(path)
	if !errors.Is(err, os.ErrNotExist) {
		return r, err
	}
	if err := create(path); err != nil {
		return nil, fmt.Errorf("sealbox: key file %s: %w", path, err)
	}
	return load(path)
}

func load(path string) (*Ring, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|noFollow, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("sealbox: key file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("sealbox: key file %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("sealbox: key file %s is not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 && runtime.GOOS != "windows" {
		return nil, fmt.Errorf("sealbox: key file %s may be read by group or others (mode %04o): chmod 600 it", path, perm)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, fmt.Errorf("sealbox: key file %s: %w", path, err)
	}
	if len(b) > maxKeyFile {
		return nil, fmt.Errorf("sealbox: key file %s is over %d bytes: not a key file", path, maxKeyFile)
	}
	r, err := ParseKeys(string(b))
	if err != nil {
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	return r, nil
}

// create writes a fresh key to a temporary file beside path, then links it into place:
// the key file never exists half written, and an existing one is never replaced.
func create(path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".sealbox-key-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	// CreateTemp makes the file 0600; Chmod says so in case the umask or platform differs.
	if err := tmp.Chmod(0o600); err != nil && runtime.GOOS != "windows" {
		tmp.Close()
		return err
	}
	_, err = tmp.WriteString(NewKeyText() + "\n")
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil // another process made it first: use theirs
		}
		return err
	}
	syncDir(dir)
	return nil
}

// syncDir makes a new directory entry durable, where the platform allows (best effort:
// a key lost to a crash right after it was made has sealed nothing yet).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
