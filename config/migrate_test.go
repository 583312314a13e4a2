package config

import (
	"strings"
	"testing"
)

const v1Executors = `listen: 127.0.0.1:0
store: memory
executors:
  docker:
    type: local_docker
    mcp_policy:
      http_url_rewrite: {"http://127.0.0.1:9000": "http://host.docker.internal:9000"}
`

// v1-to-v2-url-rewrite-key: an executor's http_url_rewrite (the orchestrators' name for
// it) becomes url_rewrite, with a warning that says the file should be updated.
func TestMigrationV1ToV2URLRewriteKey(t *testing.T) {
	for _, src := range []string{v1Executors, "version: 1\n" + v1Executors} {
		cfg, ps, err := Parse([]byte(src))
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		if got := cfg.Executors["docker"].MCPPolicy.URLRewrite["http://127.0.0.1:9000"]; got != "http://host.docker.internal:9000" {
			t.Errorf("url_rewrite after migration: %v", cfg.Executors["docker"].MCPPolicy.URLRewrite)
		}
		if cfg.Version != CurrentVersion {
			t.Errorf("version %d after migration, want %d", cfg.Version, CurrentVersion)
		}
		if len(ps) != 1 || !ps[0].Warning || !strings.Contains(ps[0].Text, "v1-to-v2-url-rewrite-key") {
			t.Errorf("problems %v, want one warning naming the migration", ps)
		}
	}
}

// A file that already has the current version is not migrated: the old key is unknown.
// Both keys at once are an error; a file from a newer release is refused; a file with no
// old key migrates silently.
func TestMigrationEdges(t *testing.T) {
	if _, ps, err := Parse([]byte("version: 2\n" + v1Executors)); err == nil || !strings.Contains(ps.Error(), "http_url_rewrite") {
		t.Errorf("version 2 with the old key: %v", ps)
	}
	both := strings.Replace(v1Executors, "      http_url_rewrite:", "      url_rewrite: {}\n      http_url_rewrite:", 1)
	if _, ps, err := Parse([]byte(both)); err == nil || !strings.Contains(ps.Error(), "has both http_url_rewrite and url_rewrite") {
		t.Errorf("both keys: %v", ps)
	}
	if _, ps, err := Parse([]byte("version: 3\nlisten: 127.0.0.1:0\n")); err == nil || !strings.Contains(ps.Error(), "newer than this mcpgw understands") {
		t.Errorf("version 3: %v", ps)
	}
	if cfg, ps, err := Parse([]byte("listen: 127.0.0.1:0\nstore: memory\n")); err != nil || len(ps) != 0 || cfg.Version != CurrentVersion {
		t.Errorf("a file with nothing to migrate: version %v, problems %v, %v", cfg.Version, ps, err)
	}
}
