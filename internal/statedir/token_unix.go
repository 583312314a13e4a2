//go:build !windows

package statedir

import (
	"fmt"
	"os"
)

// checkPrivate refuses a token file that the group or others may read or write.
func checkPrivate(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("local token: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("local token: %s has mode %o; it must be readable by its owner only (chmod 600 %s)", path, fi.Mode().Perm(), path)
	}
	return nil
}
