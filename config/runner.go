package config

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
)

// RunnerConfig is an executor's runner: the credentials a runner of that executor
// presents (docs/runners.md). A key is bound to its executor: it opens no session and
// serves no other executor.
type RunnerConfig struct {
	// Keys are the hex SHA-256 of the runner keys this executor accepts (`mcpgw token
	// create-runner-key` makes one). Removing a key and reloading cuts off the runner that
	// presented it.
	Keys []string `yaml:"keys"`
}

// HasRunner reports whether the executor runs its sessions' stdio servers on a runner.
func (e *ExecutorConfig) HasRunner() bool {
	return e != nil && e.Runner != nil && len(e.Runner.Keys) > 0
}

// RunnerKeyOK reports whether key (the runner's bearer credential) is one of the
// executor's runner keys, comparing digests in constant time.
func (e *ExecutorConfig) RunnerKeyOK(key string) bool {
	if !e.HasRunner() || key == "" {
		return false
	}
	sum := sha256.Sum256([]byte(key))
	got := hex.EncodeToString(sum[:])
	ok := false
	for _, k := range e.Runner.Keys {
		if subtle.ConstantTimeCompare([]byte(got), []byte(k)) == 1 {
			ok = true
		}
	}
	return ok
}

// validateRunner checks an executor's runner: at least one key, each a hex SHA-256.
func validateRunner(ps *Problems, where string, r *RunnerConfig) {
	if r == nil {
		return
	}
	if len(r.Keys) == 0 {
		ps.add(false, where+".keys", "a runner needs at least one key (the hex SHA-256 that `mcpgw token create-runner-key` prints)")
	}
	for _, k := range r.Keys {
		if b, err := hex.DecodeString(k); err != nil || len(b) != sha256.Size || k != hex.EncodeToString(b) {
			ps.add(false, where+".keys", "%q is not a lowercase hex SHA-256 (64 characters)", k)
		}
	}
}
