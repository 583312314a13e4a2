package peercred

import (
	"strings"
	"testing"
)

func TestSameUID(t *testing.T) {
	if err := SameUID(1000, 1000); err != nil {
		t.Errorf("same uid refused: %v", err)
	}
	if err := SameUID(1001, 1000); err == nil || !strings.Contains(err.Error(), "peer uid 1001") {
		t.Errorf("another uid: %v, want a refusal naming it", err)
	}
	// Where the OS has no uids (os.Getuid is -1), no uid passes.
	if err := SameUID(-1, -1); err == nil {
		t.Error("uid -1 accepted")
	}
}
