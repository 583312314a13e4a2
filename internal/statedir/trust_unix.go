//go:build !windows

package statedir

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// NoFollow is the open flag that refuses a symbolic link as the file's last element
// (O_NOFOLLOW; 0 where the system has none). Every file of the state directory is opened
// with it.
const NoFollow = syscall.O_NOFOLLOW

// checkTrusted refuses dir, or an entry of it, that the gateway's user does not alone
// control (Prepare).
func checkTrusted(dir string) error {
	uid := os.Geteuid()
	if err := checkLink(dir, uid); err != nil {
		return err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("state dir %s is not a directory", dir)
	}
	if owner, ok := ownerOf(fi); !ok || owner != uid || fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("state dir %s is owned by uid %d with mode %04o; the gateway (uid %d) trusts only a state directory that it owns and that the group and others cannot write: the local token, audit log, session store and socket are there (chown %d %s && chmod 700 %s, or set state_dir to a new directory)",
			dir, owner, fi.Mode().Perm(), uid, uid, dir, dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		fi, err := os.Lstat(path)
		if err != nil {
			return fmt.Errorf("state dir: %w", err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			to, _ := os.Readlink(path)
			return fmt.Errorf("state dir: %s is a symbolic link (to %s); the gateway follows no link in its state directory, whoever made it could make the gateway write where they choose: remove it (the gateway makes its files again)", path, to)
		}
		if owner, ok := ownerOf(fi); !ok || owner != uid || fi.Mode().Perm()&0o022 != 0 {
			return fmt.Errorf("state dir: %s is owned by uid %d with mode %04o; the gateway (uid %d) trusts only files of its state directory that it owns and that the group and others cannot write: remove it if you did not put it there (the gateway makes its files again), else chown %d %s && chmod go-w %s",
				path, owner, fi.Mode().Perm(), uid, uid, path, path)
		}
	}
	return nil
}

// checkLink refuses dir when it is a symbolic link that neither the gateway's user nor
// root owns: its owner may point it again, at any directory of the gateway's user, and the
// gateway would write its files there.
func checkLink(dir string, uid int) error {
	li, err := os.Lstat(dir)
	if err != nil || li.Mode()&fs.ModeSymlink == 0 {
		return nil // not a link; Stat reports what is wrong
	}
	if owner, ok := ownerOf(li); !ok || (owner != uid && owner != 0) {
		to, _ := os.Readlink(dir)
		return fmt.Errorf("state dir %s is a symbolic link (to %s) owned by uid %d; the gateway (uid %d) follows only a link that it or root owns, since whoever owns it may point it elsewhere: set state_dir to the directory itself", dir, to, owner, uid)
	}
	return nil
}

// ownerOf is the uid that owns fi's file.
func ownerOf(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return -1, false
	}
	return int(st.Uid), true
}
