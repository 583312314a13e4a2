package statedir

import (
	"fmt"
	"os"
)

// Prepare makes dir ready to hold the gateway's state: it creates it (mode 0700) when
// missing, and refuses a directory that is not the gateway's own. Whoever may write the
// state directory decides what the gateway trusts: the local token there is an admin
// credential, and the audit log, the session store and the socket are opened there. So on
// Unix a directory another user owns or the group or others may write is refused, and so
// is any entry of it that is a symbolic link, another user's, or writable by the group or
// others. The error names the path, its owner and mode, and what to do.
func Prepare(dir string) error {
	if dir == "" {
		return fmt.Errorf("state dir: no state_dir set")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	return checkTrusted(dir)
}
