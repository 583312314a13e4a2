// Package peers decides what a test does when a real peer it needs (redis-server,
// tinyproxy, Node and the npm packages, bin/mcpgw, the go command) is missing: by default
// it skips, saying which peer and how to install it; with MCPGW_REQUIRE_PEERS=1 (set by
// `make test`) it fails, so that CI cannot pass while testing nothing. Only tests import
// it. See docs/testing.md.
package peers

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// RequireEnv is the environment variable that turns a missing peer into a failure.
const RequireEnv = "MCPGW_REQUIRE_PEERS"

// Install is how a missing peer is installed, as the messages say.
const Install = "`make peers` (scripts/peers.sh) installs it"

// Required reports whether MCPGW_REQUIRE_PEERS is set to something other than "" or "0".
func Required() bool {
	v := os.Getenv(RequireEnv)
	return v != "" && v != "0"
}

// Missing ends the test because a peer is missing: a failure under
// MCPGW_REQUIRE_PEERS=1, else a skip. what names the peer and what was looked for
// ("redis-server not on PATH"), how says how to get it (usually Install). Both the
// failure and the skip say both.
func Missing(t testing.TB, what, how string) {
	t.Helper()
	msg := fmt.Sprintf("peer missing: %s; %s", what, how)
	if Required() {
		t.Fatalf("%s=1: %s", RequireEnv, msg)
	}
	t.Skipf("%s; with %s=1 this fails instead of skipping", msg, RequireEnv)
}

// Command returns the path of the command name on PATH, or ends the test through
// Missing when there is none.
func Command(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(t, name+" not on PATH", Install)
	}
	return p
}
