package sqlplugin

import (
	"context"
	"database/sql"
)

// CheckSeed runs a seed script against a fresh in-memory SQLite database and throws the
// result away: what `mcpgw validate` uses to find a seed that would fail, without creating
// the database the seed is for.
func CheckSeed(ctx context.Context, script string) error {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // one in-memory database
	return execScript(ctx, db, script)
}
