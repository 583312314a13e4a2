// Package sqlplugin is the sql plugin: the tables of configured databases as resource
// types. A connection is one database; its tables are kinds of the group named after the
// database, version v1, in the namespace of their schema ("main" on SQLite). Rows are read
// and written by primary key; Find filters on columns with operators that follow their
// types; each table has the actions count and, Dangerous, truncate. Values are always bound
// parameters; table and column names are checked against the database's catalogue before
// they reach SQL. The plugin's own writes are reported to Watcher subscribers.
//
// SQLite is served through modernc.org/sqlite and PostgreSQL through pgx, both pure Go (no
// cgo); dialect.go holds what differs between them. On PostgreSQL, a connection may also
// LISTEN for changes made by others (listen.go).
package sqlplugin

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/mcpgw/mcpgw/plugin"
)

// Config is one sql plugin's configuration: plugins.<name> in mcpgw.yaml with type: sql.
type Config struct {
	Connections map[string]ConnectionConfig `yaml:"connections" json:"connections"`
	// ReadOnly: no create, update, delete or truncate, and SQLite connections are opened
	// with query_only, so the database refuses writes too.
	ReadOnly bool `yaml:"read_only" json:"read_only"`
}

// ConnectionConfig is one database.
type ConnectionConfig struct {
	Driver string `yaml:"driver" json:"driver"` // sqlite or postgres
	// DSN: for sqlite a file path or a file: URI (modernc.org/sqlite's parameters apply);
	// for postgres a postgres:// URL or a libpq key=value string (pgx's parameters apply).
	DSN string `yaml:"dsn" json:"dsn"`
	// Database names the group of the resource keys; for sqlite the file's name without
	// its extension when left out, for postgres the database the DSN names.
	Database string `yaml:"database" json:"database"`
	// Seed is the path of a SQL script that creates the database: it runs when the file
	// does not exist yet (into a temporary file that is renamed into place once the whole
	// script succeeded, so a failed seed leaves nothing behind), and on every open of an
	// in-memory database.
	Seed string `yaml:"seed" json:"seed"`
	// Schemas limits a postgres connection to these schemas (empty: every schema but the
	// system's).
	Schemas []string `yaml:"schemas" json:"schemas"`
	// Listen: a postgres connection LISTENs on the channel mcpgw_changes, where the
	// trigger function of docs/plugins.md reports changes made by others.
	Listen bool `yaml:"listen" json:"listen"`
}

// Problems lists what is wrong with a config, all at once.
func (c Config) Problems() []string {
	var out []string
	if len(c.Connections) == 0 {
		out = append(out, "connections: at least one is needed")
	}
	for _, id := range sortedKeys(c.Connections) {
		cc := c.Connections[id]
		if id == "" {
			out = append(out, "connections: a connection needs a non-empty id")
		}
		if cc.Driver != "sqlite" && cc.Driver != "postgres" {
			out = append(out, fmt.Sprintf("connections.%s.driver: %q is not supported (sqlite or postgres)", id, cc.Driver))
		}
		if cc.Driver != "postgres" && (cc.Listen || len(cc.Schemas) > 0) {
			out = append(out, fmt.Sprintf("connections.%s: listen and schemas are for postgres connections", id))
		}
		if cc.Driver == "postgres" && cc.Seed != "" {
			out = append(out, fmt.Sprintf("connections.%s.seed: seeds are for sqlite connections", id))
		}
		if strings.TrimSpace(cc.DSN) == "" {
			out = append(out, fmt.Sprintf("connections.%s.dsn: required", id))
		}
		if _, err := databaseName(cc); err != nil {
			out = append(out, fmt.Sprintf("connections.%s.database: %v", id, err))
		}
	}
	return out
}

// databaseName is the group of a connection's keys.
func databaseName(cc ConnectionConfig) (string, error) {
	name := cc.Database
	if name == "" && cc.Driver == "postgres" {
		n, err := pgDatabase(cc.DSN)
		if err != nil {
			return "", err
		}
		name = n
	} else if name == "" {
		p := strings.TrimPrefix(cc.DSN, "file:")
		if i := strings.IndexByte(p, '?'); i >= 0 {
			p = p[:i]
		}
		if p == "" || p == ":memory:" || strings.Contains(cc.DSN, "mode=memory") {
			return "", errors.New("an in-memory database needs a database name")
		}
		base := filepath.Base(p)
		name = strings.TrimSuffix(base, filepath.Ext(base))
	}
	if name == "" || strings.Contains(name, plugin.KeySeparator) {
		return "", fmt.Errorf("%q is not a usable database name (non-empty, without %q)", name, plugin.KeySeparator)
	}
	return name, nil
}

// Plugin serves the tables of its connections. It implements plugin.Plugin,
// plugin.ActionProvider and plugin.Watcher.
type Plugin struct {
	readOnly bool
	ids      []string
	conns    map[string]*conn
	watch    broker
}

type conn struct {
	id       string
	database string
	db       *sql.DB
	d        dialect
	listener *listener // LISTEN for others' changes (postgres with listen: true), or nil
	origin   string    // postgres: the mcpgw.origin of the plugin's own sessions

	mu     sync.RWMutex
	tables map[string]*table // by name
	err    error             // the last catalogue read's failure

	stmts stmtCache // SQLite: prepared get statements
}

// Open opens every connection of cfg and reads their catalogues. A config problem is an
// error; a database that cannot be opened or read is not: its connection reports status
// error (with the reason) and has no tables until Refresh succeeds.
func Open(ctx context.Context, cfg Config) (*Plugin, error) {
	if ps := cfg.Problems(); len(ps) > 0 {
		return nil, fmt.Errorf("sql plugin config: %s", strings.Join(ps, "; "))
	}
	p := &Plugin{readOnly: cfg.ReadOnly, conns: map[string]*conn{}}
	for _, id := range sortedKeys(cfg.Connections) {
		cc := cfg.Connections[id]
		name, _ := databaseName(cc)
		if cc.Driver == "postgres" {
			origin := newOrigin()
			db, err := openPostgres(cc, cfg.ReadOnly, origin)
			if err != nil {
				p.Close()
				return nil, fmt.Errorf("connection %q: %w", id, err)
			}
			c := &conn{id: id, database: name, db: db, d: postgres{schemas: cc.Schemas}, origin: origin}
			c.refresh(ctx)
			p.ids = append(p.ids, id)
			p.conns[id] = c
			if cc.Listen {
				c.listener = p.listen(c, cc.DSN)
			}
			continue
		}
		memory := isMemory(cc.DSN)
		var seed string
		if cc.Seed != "" {
			b, err := os.ReadFile(cc.Seed)
			if err != nil {
				p.Close()
				return nil, fmt.Errorf("connection %q: seed: %w", id, err)
			}
			seed = string(b)
			if !memory {
				if err := seedFile(ctx, cc.DSN, seed); err != nil {
					p.Close()
					return nil, fmt.Errorf("connection %q: seed %s: %w", id, cc.Seed, err)
				}
			}
		}
		// An in-memory database being seeded is made read-only after its seed ran.
		db, err := sql.Open("sqlite", sqliteDSN(cc.DSN, cfg.ReadOnly && !(memory && seed != "")))
		if err != nil {
			p.Close()
			return nil, fmt.Errorf("connection %q: %w", id, err)
		}
		if memory {
			db.SetMaxOpenConns(1) // every connection to :memory: is a database of its own
			db.SetConnMaxLifetime(0)
			db.SetConnMaxIdleTime(0)
			if seed != "" {
				err := execScript(ctx, db, seed)
				if err == nil && cfg.ReadOnly {
					_, err = db.ExecContext(ctx, "PRAGMA query_only = 1")
				}
				if err != nil {
					_ = db.Close()
					p.Close()
					return nil, fmt.Errorf("connection %q: seed %s: %w", id, cc.Seed, err)
				}
			}
		}
		c := &conn{id: id, database: name, db: db, d: sqlite{}}
		c.refresh(ctx)
		p.ids = append(p.ids, id)
		p.conns[id] = c
	}
	return p, nil
}

func isMemory(dsn string) bool {
	return strings.Contains(dsn, ":memory:") || strings.Contains(dsn, "mode=memory")
}

// seedFile creates the database file of dsn from a SQL script when the file does not
// exist: the script runs into a temporary file next to it, which is renamed into place
// only once the whole script succeeded.
func seedFile(ctx context.Context, dsn, script string) error {
	path, query, _ := strings.Cut(strings.TrimPrefix(dsn, "file:"), "?")
	if _, err := os.Stat(path); err == nil {
		return nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".seed-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_ = f.Close()
	defer os.Remove(tmp) // gone once renamed; removed when the seed failed
	tdsn := tmp
	if query != "" {
		tdsn = "file:" + tmp + "?" + query
	}
	db, err := sql.Open("sqlite", tdsn)
	if err != nil {
		return err
	}
	err = execScript(ctx, db, script)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return nil
}

// execScript runs a SQL script (several statements) in one transaction.
func execScript(ctx context.Context, db *sql.DB, script string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, script); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// sqliteDSN adds the parameters the plugin relies on: a busy timeout (writes from several
// goroutines wait for the lock rather than fail) and, read-only, query_only.
func sqliteDSN(dsn string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(5000)")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	}
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + q.Encode()
}

// Close closes every database.
func (p *Plugin) Close() error {
	var errs []error
	for _, c := range p.conns {
		if c.listener != nil {
			c.listener.stop()
		}
		c.stmts.close()
		errs = append(errs, c.db.Close())
	}
	p.watch.closeAll()
	return errors.Join(errs...)
}

// Refresh reads every connection's catalogue again (after tables were added or changed
// outside the plugin). Load the plugin's catalogue again afterwards to regenerate tools.
func (p *Plugin) Refresh(ctx context.Context) {
	for _, id := range p.ids {
		p.conns[id].refresh(ctx)
	}
}

func (c *conn) refresh(ctx context.Context) {
	ts, err := c.d.tables(ctx, c.db)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.err = err
		c.tables = nil
		return
	}
	c.err, c.tables = nil, ts
}

func (c *conn) key(t *table) string { return plugin.Key(c.database, "v1", t.kind) }

// lookup finds the table of key on connection id. Every identifier that reaches SQL comes
// from a table found here.
func (p *Plugin) lookup(connID, key string) (*conn, *table, error) {
	c, ok := p.conns[connID]
	if !ok {
		return nil, nil, fmt.Errorf("connection %q: %w", connID, plugin.ErrNotFound)
	}
	g, v, kind, err := plugin.SplitKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("%v: %w", err, plugin.ErrNotFound)
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.err != nil {
		// Its tables are unknown, so none is there; Connections reports the reason.
		return nil, nil, fmt.Errorf("connection %q is unavailable (%v), so it has no table %s: %w", connID, c.err, key, plugin.ErrNotFound)
	}
	t, ok := c.tables[kind]
	if g != c.database || v != "v1" || !ok {
		return nil, nil, fmt.Errorf("connection %q has no table %s: %w", connID, key, plugin.ErrNotFound)
	}
	return c, t, nil
}

// anyTable finds key's table on the first connection that has it.
func (p *Plugin) anyTable(key string) (*table, bool) {
	for _, id := range p.ids {
		if _, t, err := p.lookup(id, key); err == nil {
			return t, true
		}
	}
	return nil, false
}

// ResourceTypes implements plugin.TypeProvider: every table of every connection.
func (p *Plugin) ResourceTypes(context.Context) ([]plugin.ResourceType, error) {
	seen := map[string]bool{}
	var out []plugin.ResourceType
	for _, id := range p.ids {
		c := p.conns[id]
		c.mu.RLock()
		for _, t := range c.tables {
			k := c.key(t)
			if !seen[k] {
				seen[k] = true
				out = append(out, plugin.ResourceType{Key: k, Description: fmt.Sprintf("Rows of table %s.%s in database %s.", t.namespace, t.name, c.database)})
			}
		}
		c.mu.RUnlock()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// Capabilities implements plugin.TypeProvider. Get, update and delete need a
// single-column primary key; writes are off when the plugin is read-only.
func (p *Plugin) Capabilities(_ context.Context, key string) (plugin.Capabilities, error) {
	t, ok := p.anyTable(key)
	if !ok {
		return plugin.Capabilities{}, fmt.Errorf("no table %s: %w", key, plugin.ErrNotFound)
	}
	pk := t.pk != nil
	return plugin.Capabilities{
		CanGet: pk, CanList: true, CanFind: true, Filterable: len(filterFields(t)) > 0,
		CanCreate: !p.readOnly, CanUpdate: pk && !p.readOnly, CanDelete: pk && !p.readOnly,
		HasSchema: true, HasActions: true,
	}, nil
}

// Connections implements plugin.ConnectionProvider.
func (p *Plugin) Connections(context.Context) ([]plugin.Connection, error) {
	out := make([]plugin.Connection, 0, len(p.ids))
	for _, id := range p.ids {
		c := p.conns[id]
		c.mu.RLock()
		kind := "SQLite"
		if c.d.name() == "postgres" {
			kind = "PostgreSQL"
		}
		cn := plugin.Connection{ID: id, Name: c.database, Status: plugin.StatusConnected, Description: kind + " database " + c.database}
		if c.err != nil {
			cn.Status, cn.Description = plugin.StatusError, c.err.Error()
		}
		c.mu.RUnlock()
		if c.listener != nil && cn.Status == plugin.StatusConnected {
			if up, _, err := c.listener.state(); up {
				cn.Description += "; listening for changes"
			} else if err != nil {
				cn.Description += "; not listening for changes (" + err.Error() + "), reconnecting"
			}
		}
		out = append(out, cn)
	}
	return out, nil
}

// Namespaces implements plugin.ConnectionProvider: the database's schemas.
func (p *Plugin) Namespaces(ctx context.Context, connID string) ([]string, error) {
	c, ok := p.conns[connID]
	if !ok {
		return nil, fmt.Errorf("connection %q: %w", connID, plugin.ErrNotFound)
	}
	return c.d.namespaces(ctx, c.db)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
