package sqlplugin

import (
	"context"
	"database/sql"
	"sync"
)

// maxStmts bounds the prepared statements one connection keeps.
const maxStmts = 256

// stmtCache keeps SQLite statements prepared, by their SQL text, for the queries whose
// text depends only on the table (get by primary key). Preparing is SQLite parsing and
// planning the statement, a fifth of a get's CPU in a profile, and the largest part of
// the code it runs; a statement prepared once is only executed. SQLite prepares a
// statement again by itself when the schema changed under it, so a cached one never
// answers with a stale plan; a table that went away fails as an unprepared query would.
// PostgreSQL's driver (pgx) keeps its own statement cache.
type stmtCache struct {
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

// query runs text with args, on a statement prepared once when c is SQLite.
func (c *conn) queryPrepared(ctx context.Context, text string, args ...any) (*sql.Rows, error) {
	if _, ok := c.d.(sqlite); !ok {
		return c.db.QueryContext(ctx, text, args...)
	}
	st, err := c.stmts.get(ctx, c.db, text)
	if err != nil {
		return nil, err
	}
	if st == nil { // the cache is full
		return c.db.QueryContext(ctx, text, args...)
	}
	return st.QueryContext(ctx, args...)
}

func (s *stmtCache) get(ctx context.Context, db *sql.DB, text string) (*sql.Stmt, error) {
	s.mu.Lock()
	st, ok := s.stmts[text]
	full := len(s.stmts) >= maxStmts
	s.mu.Unlock()
	if ok || full {
		return st, nil
	}
	st, err := db.PrepareContext(ctx, text)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev, ok := s.stmts[text]; ok { // prepared meanwhile by another call
		_ = st.Close()
		return prev, nil
	}
	if s.stmts == nil {
		s.stmts = map[string]*sql.Stmt{}
	}
	s.stmts[text] = st
	return st, nil
}

// close closes every statement.
func (s *stmtCache) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.stmts {
		_ = st.Close()
	}
	s.stmts = nil
}
