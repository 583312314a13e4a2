//go:build !windows

package store

import (
	"os"
	"path/filepath"
	"testing"
)

// TestOpenBoltFollowsNoLink: a state file that is a link is refused, not opened where it
// points.
func TestOpenBoltFollowsNoLink(t *testing.T) {
	dir := t.TempDir()
	elsewhere := filepath.Join(t.TempDir(), "elsewhere.db")
	path := filepath.Join(dir, "mcpgw.db")
	if err := os.Symlink(elsewhere, path); err != nil {
		t.Fatal(err)
	}
	s, err := OpenBolt(path)
	if err == nil {
		s.Close()
		t.Fatal("a state file that is a link was opened")
	}
	if _, err := os.Stat(elsewhere); err == nil {
		t.Error("the link's target was created")
	}
}
