//go:build !windows

package auth

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
)

// TestOpenAuditFollowsNoLink: an audit log that is a link is refused, not written through
// (a link planted in a state dir once had root append audit lines to a file of its own).
func TestOpenAuditFollowsNoLink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "audit.jsonl")
	if err := os.Symlink(victim, path); err != nil {
		t.Fatal(err)
	}
	a, err := OpenAudit(path, slog.New(slog.DiscardHandler))
	if err == nil {
		a.Close()
		t.Fatal("an audit log that is a link was opened")
	}
}
