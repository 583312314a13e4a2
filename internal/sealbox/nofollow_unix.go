//go:build !windows

package sealbox

import "syscall"

// noFollow refuses a symbolic link as the key file (O_NOFOLLOW): whoever could place a
// link where the key file belongs could make the gateway seal with a key they know.
const noFollow = syscall.O_NOFOLLOW
