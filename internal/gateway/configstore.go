package gateway

import (
	"log/slog"
	"os"
	"path/filepath"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/admin"
	"github.com/mcpgw/mcpgw/internal/sealbox"
	"github.com/mcpgw/mcpgw/internal/store"
)

// sealedConfigStore is the store the admin API keeps its config entries in, with API
// servers' env and header values sealed at rest by the keys that seal upstream tokens
// (docs/admin-api.md "Secrets at rest"): the config's upstream_credentials.keys, else
// MCPGW_UPSTREAM_KEYS, else, for a store only this machine reads (bolt, memory), the
// state directory's key file. A shared store (Redis) with no keys given keeps them as
// before, in the clear, and the log says so: a key file is one machine's, and another
// replica could not open what this one sealed.
func sealedConfigStore(cfg *config.Config, store store.Store, log *slog.Logger) admin.Store {
	var ring *sealbox.Ring
	var err error
	switch {
	case cfg.UpstreamCredentials.Keys != "" || os.Getenv(UpstreamKeysEnv) != "":
		ring, err = upstreamKeys(cfg)
	case cfg.Store != "bolt" && cfg.Store != "memory" && cfg.Store != "":
		log.Warn("API servers' env and header values are stored in the clear: a shared store needs the sealing keys given to every replica (upstream_credentials.keys or " + UpstreamKeysEnv + ")")
	case cfg.StateDir != "":
		ring, err = sealbox.LoadOrCreate(filepath.Join(cfg.StateDir, upstreamKeyFile))
	}
	if err != nil {
		log.Error("API servers' env and header values are stored in the clear: the sealing keys cannot be read", "err", err)
		ring = nil
	}
	return admin.SealedStore{Store: store, Ring: ring, Log: log}
}
