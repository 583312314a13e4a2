package pluginkind

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/sqlplugin"
)

// seedCheckTimeout bounds the dry run of one seed script.
const seedCheckTimeout = 30 * time.Second

// checkSQL checks each SQLite connection: a seed script is run against a throwaway
// in-memory database (a script that fails would leave the plugin down); a database file
// that does not exist and has no seed would start empty; a path whose parent is a file
// cannot be created.
func checkSQL(ctx context.Context, where string, d *config.PluginDef) config.Problems {
	var ps config.Problems
	add := func(warn bool, w, format string, a ...any) {
		ps = append(ps, config.Problem{Warning: warn, Where: w, Text: fmt.Sprintf(format, a...)})
	}
	for _, id := range slices.Sorted(maps.Keys(d.Connections)) {
		cc := d.Connections[id]
		cw := where + ".connections." + id
		if cc == nil || cc.Driver != "sqlite" || strings.TrimSpace(cc.DSN) == "" {
			continue // config.Validate reports these
		}
		memory := isMemoryDSN(cc.DSN)
		var seedOK bool
		if cc.Seed != "" {
			b, err := os.ReadFile(cc.Seed)
			if err != nil {
				continue // config.Validate reports an unreadable seed
			}
			sctx, cancel := context.WithTimeout(ctx, seedCheckTimeout)
			err = sqlplugin.CheckSeed(sctx, string(b))
			cancel()
			if err != nil {
				add(false, cw+".seed", "the script fails on an empty database (tried in memory; nothing was created): %v", err)
			} else {
				seedOK = true
			}
		}
		if memory {
			if cc.Seed == "" {
				add(true, cw, "an in-memory database without a seed has no tables: the plugin has no tools on it")
			}
			continue
		}
		path, _, _ := strings.Cut(strings.TrimPrefix(cc.DSN, "file:"), "?")
		st, err := os.Stat(path)
		switch {
		case err == nil && st.IsDir():
			add(false, cw+".dsn", "%s is a directory, not a database file", path)
		case err == nil:
			if seedOK {
				add(true, cw+".seed", "%s exists, so the seed does not run", path)
			}
		case errors.Is(err, fs.ErrNotExist):
			if dir := nearestExisting(filepath.Dir(path)); dir != "" {
				if dst, err := os.Stat(dir); err == nil && !dst.IsDir() {
					add(false, cw+".dsn", "%s cannot be created: %s is not a directory", path, dir)
					continue
				}
			}
			if cc.Seed == "" {
				add(true, cw+".dsn", "%s does not exist and has no seed: the plugin starts on an empty database", path)
			}
		default:
			add(false, cw+".dsn", "%v", err)
		}
	}
	return ps
}

// nearestExisting is the closest ancestor of dir (or dir itself) that exists, "" when
// none does.
func nearestExisting(dir string) string {
	for {
		if _, err := os.Stat(dir); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// isMemoryDSN reports whether a sqlite DSN names an in-memory database.
func isMemoryDSN(dsn string) bool {
	p := strings.TrimPrefix(dsn, "file:")
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	return p == "" || p == ":memory:" || strings.Contains(dsn, "mode=memory")
}
