package signin

import (
	"strconv"
	"testing"
	"time"
)

// TestSigninGuard: 300 wrong tries in 15 s from one source become about ten; another
// source is not slowed; a success clears; memory holds at most maxSources sources.
func TestSigninGuard(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	s := &Guard{now: func() time.Time { return now }}
	checked := 0
	for i := 0; i < 300; i++ {
		now = now.Add(50 * time.Millisecond)
		if s.Wait("a") > 0 {
			continue
		}
		checked++
		s.Failed("a")
	}
	if checked > 12 {
		t.Errorf("%d of 300 tries in 15 s were checked, want at most 12", checked)
	}
	if s.Wait("b") != 0 {
		t.Error("another source is slowed by a's failures")
	}
	s.Succeeded("a")
	if s.Wait("a") != 0 {
		t.Error("a success did not clear the source")
	}
	s.Failed("a")
	now = now.Add(defaultForget + time.Second)
	for i := 0; i < defaultFree; i++ {
		s.Failed("a")
	}
	if s.Wait("a") != 0 {
		t.Error("failures older than Forget still count")
	}
	for i := 0; i < 3*maxSources; i++ {
		s.Failed("src" + strconv.Itoa(i))
	}
	if n := s.held.Load(); n > maxSources || int(n) != s.sources.Len() {
		t.Errorf("%d sources held (%d in the cache), want at most %d", n, s.sources.Len(), maxSources)
	}
}
