package gateway

import (
	"fmt"
	"slices"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/admin"
)

// The gateway runs one config with two sources: the file (file config, reloaded by the
// watcher) and the entries created through the admin API (kept in the session store). The
// running config is always the file config with the stored entries merged in (admin.Merge),
// validated by the same config.Validate; cfgMu serialises everything that computes and
// applies it, the admin API's writes included (adminPort.LockConfig).

// effective merges file with the stored entries and validates the result. On a store
// error it returns the error; on invalid entries the problems.
func (g *Gateway) effective(file *config.Config) (*config.Config, config.Problems, error) {
	entries, err := g.configStore.ListConfig()
	if err != nil {
		return nil, nil, err
	}
	cfg, shadowed, bad := admin.Merge(file, entries)
	for _, s := range shadowed {
		g.log.Warn("an admin API entry is shadowed by the config file's entry of the same name; the file's applies", "entry", s)
	}
	for _, err := range bad {
		g.log.Error("admin API config entry skipped", "err", err)
	}
	return cfg, cfg.Validate(), nil
}

// startConfig is the config a new gateway runs: the file merged with the stored API
// entries, or the file alone (loudly) when those cannot be read or make it invalid, so
// that a store problem never stops a valid file from serving.
func (g *Gateway) startConfig(file *config.Config) *config.Config {
	cfg, ps, err := g.effective(file)
	switch {
	case err != nil:
		g.log.Error("admin API config entries not read; serving the file's config alone", "err", err)
		return file
	case ps.HasErrors():
		g.log.Error("admin API config entries make the config invalid; serving the file's config alone", "problems", ps.Error())
		return file
	}
	return cfg
}

// ReloadFile applies a new file config: it is merged with the entries created through the
// admin API (so a file reload never drops them) and applied with Reload. A merged config
// that is invalid is refused and the running config kept.
func (g *Gateway) ReloadFile(file *config.Config) error {
	g.cfgMu.Lock()
	defer g.cfgMu.Unlock()
	cfg, ps, err := g.effective(file)
	if err != nil {
		return fmt.Errorf("admin API config entries: %w", err)
	}
	if ps.HasErrors() {
		return fmt.Errorf("with the admin API's entries merged in: %w", ps)
	}
	if err := g.Reload(cfg); err != nil {
		return err
	}
	g.fileCfg.Store(file)
	return nil
}

// ReloadStored applies the stored API entries again over the current file config (another
// replica changed them).
func (g *Gateway) ReloadStored() {
	if err := g.ReloadFile(g.fileCfg.Load()); err != nil {
		g.log.Error("config entries changed by another replica not applied", "err", err)
	}
}

// FileConfig is the config as the file (or the embedded defaults) gave it.
func (g *Gateway) FileConfig() *config.Config { return g.fileCfg.Load() }

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
