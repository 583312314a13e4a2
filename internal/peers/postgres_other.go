//go:build !unix

package peers

import "os"

// processAlive reports whether a process of that pid exists (where signal 0 does not
// exist, whether it can be found).
func processAlive(pid int) bool {
	_, err := os.FindProcess(pid)
	return err == nil
}
