package gateway

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A socket path longer than the OS takes is refused up front with what to change, not
// with the kernel's bare "invalid argument".
func TestListenSocketPathTooLong(t *testing.T) {
	dir, err := os.MkdirTemp("", "mcpgw-long")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	long := filepath.Join(dir, strings.Repeat("d", 120), "mcpgw.sock")
	ln, err := ListenSocket(long)
	if err == nil {
		ln.Close()
		t.Fatalf("ListenSocket(%d-byte path) succeeded", len(long))
	}
	if !strings.Contains(err.Error(), "state_dir") || !strings.Contains(err.Error(), "bytes") {
		t.Errorf("error %q does not say the path is too long and what to change", err)
	}
	if _, serr := os.Stat(filepath.Dir(long)); serr == nil {
		t.Error("the directory was created for a path that cannot be used")
	}
}
