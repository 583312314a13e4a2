package statedir

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// TokenName is the per-install local token inside the state directory: a secret only the
// user who runs the gateway can read (mode 0600). The gateway takes it as an admin
// credential and, in auth mode none, as the credential of a local client whose user the
// operating system cannot name; the CLI and `mcpgw ui` read it so nobody copies it by hand.
const TokenName = "local-token"

// TokenPath is the local token's path for a state directory.
func TokenPath(stateDir string) string { return filepath.Join(stateDir, TokenName) }

// ReadToken reads the local token of a state directory. The error says which file, so a
// user whose CLI cannot read it (another user's gateway) knows why.
func ReadToken(stateDir string) (string, error) {
	f, err := os.OpenFile(TokenPath(stateDir), os.O_RDONLY|NoFollow, 0)
	if err != nil {
		return "", fmt.Errorf("local token: %w", err)
	}
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	f.Close()
	if err != nil {
		return "", fmt.Errorf("local token: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if len(tok) < 32 {
		return "", fmt.Errorf("local token: %s holds no token (delete it; the gateway makes a new one at its next start)", TokenPath(stateDir))
	}
	return tok, nil
}

// EnsureToken returns the state directory's local token, creating the directory (0700)
// and the token (0600, 32 random bytes in hex) when there is none. A directory that is not
// the gateway's own is refused (Prepare). Two gateways starting
// at once in one directory agree: the file is created exclusively, and the loser reads the
// winner's. A token file that others may read is refused, not used: a secret the host's
// other users can see is no secret.
func EnsureToken(stateDir string) (string, error) {
	if err := Prepare(stateDir); err != nil {
		return "", err
	}
	path := TokenPath(stateDir)
	buf := make([]byte, 32)
	if _, err := rand.Read(buf); err != nil {
		return "", fmt.Errorf("local token: %w", err)
	}
	tok := hex.EncodeToString(buf)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|NoFollow, 0o600)
	switch {
	case err == nil:
		_, werr := f.WriteString(tok + "\n")
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			os.Remove(path)
			return "", fmt.Errorf("local token: %w", werr)
		}
		return tok, nil
	case !errors.Is(err, fs.ErrExist):
		return "", fmt.Errorf("local token: %w", err)
	}
	if err := checkPrivate(path); err != nil {
		return "", err
	}
	return ReadToken(stateDir)
}
