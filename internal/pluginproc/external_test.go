package pluginproc_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/pluginproc"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/sqlplugin"
	"github.com/mcpgw/mcpgw/plugin"
	"github.com/mcpgw/mcpgw/plugin/plugintest"
	"github.com/mcpgw/mcpgw/plugin/serve"
)

// serveEnv makes this test binary a plugin executable: TestMain serves the provider it
// names instead of running the tests, so the tests launch real processes without a build.
const serveEnv = "MCPGW_EXTERNAL_TEST_SERVE"

func TestMain(m *testing.M) {
	switch os.Getenv(serveEnv) {
	case "":
		os.Exit(m.Run())
	case "fixture":
		serve.Main(&probe{Fixture: plugintest.New()})
	case "fixture-unbounded":
		// A plugin that does not hear the host's bound (as one built before it would): only
		// the host's own receive limit stands.
		os.Unsetenv(pluginproc.MaxMessageEnv)
		serve.Main(&probe{Fixture: plugintest.New()})
	case "sql":
		serve.MainFunc(func(ctx context.Context, raw json.RawMessage) (plugin.Plugin, error) {
			var cfg sqlplugin.Config
			if err := json.Unmarshal(raw, &cfg); err != nil {
				return nil, err
			}
			return sqlplugin.Open(ctx, cfg)
		})
	case "badlog":
		// Log lines go-plugin's parser would panic on (in the host), written to the
		// process's real stderr as a plugin's own logger would.
		serve.MainFunc(func(context.Context, json.RawMessage) (plugin.Plugin, error) {
			fd2 := os.NewFile(2, "stderr")
			fmt.Fprintln(fd2, `{"@message": 1, "@level": "info"}`)
			fmt.Fprintln(fd2, `{"@message": "fine", "@level": ["x"]}`)
			fmt.Fprintln(fd2, `{"@message": "after the bad ones", "@level": "info"}`)
			return plugintest.New(), nil
		})
	case "deep-schema":
		serve.Main(deepSchema{plugintest.New()})
	case "fail-open":
		serve.MainFunc(func(context.Context, json.RawMessage) (plugin.Plugin, error) {
			return nil, errors.New("the database is on fire")
		})
	}
	os.Exit(3)
}

// probe is the fixture with a few ids that let a test look inside the plugin process:
// "pid" answers its process id, "huge-answer" a 1 MiB resource, "max-result" the result bound its
// context carries, "gomaxprocs" its GOMAXPROCS, "rpcs" how many Get and
// catalogue calls reached it (this one included), "block" waits for its context to end, and "blocked"
// says whether a "block" started and whether it saw its context end. "panic" panics.
type probe struct {
	*plugintest.Fixture
	mu        sync.Mutex
	started   bool
	cancelled bool
	gets      int64 // Get calls
	catalogue int64 // catalogue calls (ResourceTypes, Capabilities, ... Actions)
}

func (p *probe) Get(ctx context.Context, conn, key string, in plugin.GetInput) (plugin.Resource, error) {
	p.mu.Lock()
	p.gets++
	p.mu.Unlock()
	switch in.ID {
	case "gomaxprocs":
		return plugin.Resource{"gomaxprocs": int64(runtime.GOMAXPROCS(0))}, nil
	case "rpcs":
		p.mu.Lock()
		defer p.mu.Unlock()
		return plugin.Resource{"gets": p.gets, "catalogue": p.catalogue}, nil
	case "pid":
		return plugin.Resource{"pid": int64(os.Getpid())}, nil
	case "block":
		p.mu.Lock()
		p.started = true
		p.mu.Unlock()
		select {
		case <-ctx.Done():
			p.mu.Lock()
			p.cancelled = true
			p.mu.Unlock()
			return nil, ctx.Err()
		case <-time.After(time.Minute):
			return nil, errors.New("not cancelled within a minute")
		}
	case "blocked":
		p.mu.Lock()
		defer p.mu.Unlock()
		return plugin.Resource{"started": p.started, "cancelled": p.cancelled}, nil
	case "panic":
		panic("boom")
	case "huge-answer":
		return plugin.Resource{"blob": strings.Repeat("x", 1<<20)}, nil
	case "max-result":
		return plugin.Resource{"max": int64(plugin.MaxResultBytes(ctx))}, nil
	}
	return p.Fixture.Get(ctx, conn, key, in)
}

// logBuffer collects what the host logs about the plugin.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func launch(t testing.TB, mode string, cfg any) (plugin.Plugin, *logBuffer) {
	t.Helper()
	return launchPath(t, os.Args[0], mode, cfg)
}

// launchPath launches the executable path; mode is what this test binary serves when it
// is the executable.
func launchPath(t testing.TB, path, mode string, cfg any) (plugin.Plugin, *logBuffer) {
	t.Helper()
	return launchEnv(t, path, mode, cfg)
}

// launchEnv is launchPath with env added to the plugin's environment.
func launchEnv(t testing.TB, path, mode string, cfg any, env ...string) (plugin.Plugin, *logBuffer) {
	t.Helper()
	return launchBusy(t, path, mode, cfg, nil, env...)
}

// launchBusy is launchEnv with busy waiting bw.
func launchBusy(t testing.TB, path, mode string, cfg any, bw *pluginproc.BusyWait, env ...string) (plugin.Plugin, *logBuffer) {
	t.Helper()
	var raw json.RawMessage
	if cfg != nil {
		b, err := json.Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		raw = b
	}
	logs := &logBuffer{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := pluginproc.Launch(ctx, pluginproc.Command{Name: mode, Path: path, Env: append([]string{serveEnv + "=" + mode}, env...),
		Config: raw, BusyWait: bw, Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatalf("launch %s: %v\nlog:\n%s", mode, err, logs)
	}
	t.Cleanup(func() { p.(io.Closer).Close() })
	return p, logs
}

func gatewayNames(full string) string {
	return registry.ExposedName("", full, config.Naming{Prefix: "never", MaxLength: 64})
}

func load(t testing.TB, id string, p plugin.Plugin) *plugin.Catalog {
	t.Helper()
	c, err := plugin.Load(context.Background(), id, p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func toolsJSON(t *testing.T, ts *plugin.ToolSet) string {
	t.Helper()
	defs := make([]any, len(ts.Tools))
	for i, tool := range ts.Tools {
		defs[i] = tool.Def
	}
	b, err := json.MarshalIndent(map[string]any{"tools": defs, "problems": append([]string{}, ts.Problems...)}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

func resultJSON(t *testing.T, ts *plugin.ToolSet, name, args string) string {
	t.Helper()
	r, err := ts.Call(context.Background(), name, json.RawMessage(args), plugin.CallOptions{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sameCalls runs each call against both tool sets, in order, and wants equal results.
func sameCalls(t *testing.T, in, out *plugin.ToolSet, calls [][2]string) {
	t.Helper()
	for _, c := range calls {
		a, b := resultJSON(t, in, c[0], c[1]), resultJSON(t, out, c[0], c[1])
		if a != b {
			t.Errorf("%s %s:\n in-process:     %s\n out-of-process: %s", c[0], c[1], a, b)
		}
	}
}

// The fixture provider gives the same tools (every view) and the same call results in the
// gateway's process and in its own.
func TestFixtureSameInAndOutOfProcess(t *testing.T) {
	remote, _ := launch(t, "fixture", nil)
	if _, ok := remote.(plugin.ActionProvider); !ok {
		t.Error("the remote fixture is not an ActionProvider")
	}
	if _, ok := remote.(plugin.Watcher); ok {
		t.Error("the remote fixture is a Watcher, but the fixture does not watch")
	}
	local := load(t, "kubernetes", plugintest.New())
	far := load(t, "kubernetes", remote)
	for _, o := range []plugin.Options{{}, {ReadOnly: true}, {Connections: []string{"prod"}}, {Elicitation: true}} {
		o.Name = gatewayNames
		if a, b := toolsJSON(t, local.Tools(o)), toolsJSON(t, far.Tools(o)); a != b {
			t.Errorf("tools with %+v differ:\nin-process:\n%s\nout-of-process:\n%s", o, a, b)
		}
	}
	// The golden file of the in-process generation test holds for the remote too.
	want, err := os.ReadFile(filepath.Join("..", "..", "plugin", "testdata", "tools.golden"))
	if err != nil {
		t.Fatal(err)
	}
	if got := toolsJSON(t, far.Tools(plugin.Options{Name: gatewayNames})); got != string(want) {
		t.Errorf("out-of-process tools differ from plugin/testdata/tools.golden:\n%s", got)
	}
	o := plugin.Options{Name: gatewayNames}
	sameCalls(t, local.Tools(o), far.Tools(o), [][2]string{
		{"kubernetes_core_v1_Pod_get", `{"connectionId":"prod","id":"web-1","namespace":"default"}`},
		{"kubernetes_core_v1_Pod_get", `{"connectionId":"prod","id":"nope"}`},
		{"kubernetes_core_v1_Pod_list", `{"connectionId":"staging","pageSize":2}`},
		{"kubernetes_core_v1_Pod_find", `{"connectionId":"prod","filter":[{"field":"phase","operator":"in","value":["Running","Pending"]},{"field":"restarts","operator":"gte","value":1}],"pageSize":1}`},
		{"kubernetes_core_v1_Pod_find", `{"connectionId":"prod","filter":[{"field":"node","operator":"is_null","value":true}],"textQuery":"web"}`},
		{"kubernetes_apps_v1_Deployment_create", `{"connectionId":"prod","name":"big","image":"x","replicas":9007199254740993}`},
		{"kubernetes_apps_v1_Deployment_get", `{"connectionId":"prod","id":"big"}`},
		{"kubernetes_apps_v1_Deployment_update", `{"connectionId":"prod","id":"big","image":"y:2"}`},
		{"kubernetes_apps_v1_Deployment_scale", `{"connectionId":"prod","id":"big","replicas":3}`},
		{"kubernetes_apps_v1_Deployment_restart", `{"connectionId":"prod","id":"big","confirm":true}`},
		{"kubernetes_apps_v1_Deployment_delete", `{"connectionId":"prod","id":"big","confirm":true}`},
		{"kubernetes_apps_v1_Deployment_delete", `{"connectionId":"prod","id":"big","confirm":true}`},
		{"kubernetes_core_v1_Pod_logs", `{"connectionId":"prod","id":"web-2","tailLines":5}`},
		{"kubernetes_list_connections", `{}`},
		{"kubernetes_list_namespaces", `{"connectionId":"staging"}`},
		{"kubernetes_list_resource_types", `{"connectionId":"staging"}`},
	})
}

// An integer beyond 2^53 reaches the provider, and comes back, as the same int64.
func TestBigIntegersSurvive(t *testing.T) {
	remote, _ := launch(t, "fixture", nil)
	ctx := context.Background()
	const big = int64(1<<62 + 1)
	r, err := remote.Create(ctx, "prod", plugintest.Deployment, plugin.CreateInput{Data: map[string]any{"name": "big", "image": "x", "replicas": big}})
	if err != nil {
		t.Fatal(err)
	}
	if r["replicas"] != big {
		t.Errorf("create returned replicas %#v, want int64 %d", r["replicas"], big)
	}
	pg, err := remote.Find(ctx, "prod", plugintest.Pod, plugin.FindInput{Filter: plugin.Filter{Predicates: []plugin.Predicate{
		{Field: "restarts", Operator: plugin.OpGte, Value: int64(2)}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(pg.Items) != 2 || pg.Items[0]["restarts"] != int64(2) {
		t.Errorf("find restarts >= 2: %#v", pg.Items)
	}
}

// Errors keep their text and their kind across the boundary; a provider's panic costs
// the call, not the plugin.
func TestErrorsAndPanics(t *testing.T) {
	remote, _ := launch(t, "fixture", nil)
	ctx := context.Background()
	_, inErr := plugintest.New().Get(ctx, "prod", plugintest.Pod, plugin.GetInput{ID: "nope"})
	_, err := remote.Get(ctx, "prod", plugintest.Pod, plugin.GetInput{ID: "nope"})
	if !errors.Is(err, plugin.ErrNotFound) || err.Error() != inErr.Error() {
		t.Errorf("not found: %v (want %q, wrapping ErrNotFound)", err, inErr)
	}
	if _, err := remote.FilterFields(ctx, "prod", plugintest.Deployment); !errors.Is(err, plugin.ErrUnsupported) {
		t.Errorf("unsupported: %v", err)
	}
	if _, err := remote.Get(ctx, "prod", plugintest.Pod, plugin.GetInput{ID: "panic"}); err == nil || !strings.Contains(err.Error(), "internal error: boom") {
		t.Errorf("panic: %v", err)
	}
	if _, err := remote.Get(ctx, "prod", plugintest.Pod, plugin.GetInput{ID: "web-0", Namespace: "default"}); err != nil {
		t.Errorf("after the panic: %v", err)
	}
}

// Cancelling a call's context ends the remote provider's context.
func TestCancelReachesTheProvider(t *testing.T) {
	remote, _ := launch(t, "fixture", nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := remote.Get(ctx, "prod", plugintest.Pod, plugin.GetInput{ID: "block"})
		done <- err
	}()
	blocked := func() plugin.Resource {
		r, err := remote.Get(context.Background(), "prod", plugintest.Pod, plugin.GetInput{ID: "blocked"})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	deadline := time.Now().Add(10 * time.Second)
	for blocked()["started"] != true { // the call reached the provider
		if time.Now().After(deadline) {
			t.Fatal("the blocking call did not reach the provider within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled call returned %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled call did not return within 10s")
	}
	deadline = time.Now().Add(10 * time.Second)
	for {
		if blocked()["cancelled"] == true {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the provider's context did not end within 10s of the host's")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A plugin whose stderr has JSON lines with the wrong types in hclog's fields (go-plugin's
// parser panics on them) does not take the host down: the lines are logged as text.
func TestMalformedLogLines(t *testing.T) {
	remote, logs := launch(t, "badlog", nil)
	if _, err := remote.Connections(context.Background()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), "after the bad ones") {
		if time.Now().After(deadline) {
			t.Fatalf("the plugin's last log line did not arrive within 10s:\n%s", logs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := strings.Count(logs.String(), "malformed hclog fields"); n != 2 {
		t.Errorf("%d lines marked malformed, want 2:\n%s", n, logs)
	}
}

// An open function's error is the launch's error, with its text.
func TestOpenError(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := pluginproc.Launch(ctx, pluginproc.Command{Name: "x", Path: os.Args[0], Env: []string{serveEnv + "=fail-open"},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err == nil || !strings.Contains(err.Error(), "the database is on fire") {
		t.Errorf("launch: %v", err)
	}
	_, err = pluginproc.Launch(ctx, pluginproc.Command{Name: "x", Path: filepath.Join(t.TempDir(), "no-such-plugin"),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err == nil {
		t.Error("launching a missing executable worked")
	}
}

// A plugin executable started by hand says what it is and exits.
func TestStartedByHand(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), serveEnv+"=fixture")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "This binary is a plugin") {
		t.Errorf("run by hand: %v\n%s", err, out)
	}
}

const shopSchema = `
CREATE TABLE users (
	id     INTEGER PRIMARY KEY,
	name   TEXT NOT NULL,
	email  TEXT UNIQUE,
	age    INTEGER,
	score  REAL,
	active BOOLEAN NOT NULL DEFAULT 1,
	joined DATE,
	avatar BLOB
);
CREATE TABLE "odd ""name" (k TEXT PRIMARY KEY, v TEXT);
CREATE TABLE log (at TEXT, msg TEXT);
INSERT INTO users (name, email, age, score, active, joined) VALUES
	('ada',     'ada@example.com',     36, 9.5, 1, '1815-12-10'),
	('grace',   'grace@example.com',   85, 8.0, 1, '1906-12-09'),
	('linus',   NULL,                  28, NULL, 0, NULL),
	('margaret','margaret@example.com',NULL, 7.25, 1, '1936-08-17'),
	('100%_real', 'pct@example.com',   40, 1, 0, NULL);
INSERT INTO "odd ""name" VALUES ('a', 'b');
INSERT INTO log VALUES ('2024-01-01', 'started'), ('2024-01-01', 'started'), ('2024-01-02', 'stopped');
`

// shopDB writes the sql plugin's golden-test database (internal/sqlplugin's schema) as
// <dir>/shop.db.
func shopDB(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "shop.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(shopSchema); err != nil {
		t.Fatal(err)
	}
	return path
}

// The sql plugin, in the gateway's process and as an executable, over two copies of the
// same database: the same tools (and the in-process golden file), and the same results
// for the same calls, writes and refusals included.
func TestSQLSameInAndOutOfProcess(t *testing.T) {
	cfg := func(path string) sqlplugin.Config {
		return sqlplugin.Config{Connections: map[string]sqlplugin.ConnectionConfig{"main-db": {Driver: "sqlite", DSN: path}}}
	}
	inProv, err := sqlplugin.Open(context.Background(), cfg(shopDB(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer inProv.Close()
	remote, _ := launch(t, "sql", cfg(shopDB(t)))
	if _, ok := remote.(plugin.Watcher); !ok {
		t.Error("the remote sql plugin is not a Watcher")
	}
	local, far := load(t, "sql", inProv), load(t, "sql", remote)
	o := plugin.Options{Name: gatewayNames}
	in, out := local.Tools(o), far.Tools(o)
	want, err := os.ReadFile(filepath.Join("..", "sqlplugin", "testdata", "sqlite_tools.golden"))
	if err != nil {
		t.Fatal(err)
	}
	for side, ts := range map[string]*plugin.ToolSet{"in-process": in, "out-of-process": out} {
		if got := toolsJSON(t, ts); got != string(want) {
			t.Errorf("%s tools differ from internal/sqlplugin/testdata/sqlite_tools.golden:\n%s", side, got)
		}
	}
	sameCalls(t, in, out, [][2]string{
		{"sql_shop_v1_users_get", `{"connectionId":"main-db","id":"1"}`},
		{"sql_shop_v1_users_get", `{"connectionId":"main-db","id":"1 OR 1=1"}`},
		{"sql_shop_v1_users_list", `{"connectionId":"main-db","pageSize":2}`},
		{"sql_shop_v1_users_list", `{"connectionId":"main-db","pageSize":2,"cursor":"2"}`},
		{"sql_shop_v1_users_find", `{"connectionId":"main-db","filter":[{"field":"age","operator":"gte","value":30},{"field":"active","operator":"eq","value":true}],"pageSize":1}`},
		{"sql_shop_v1_users_find", `{"connectionId":"main-db","filter":[{"field":"name","operator":"contains","value":"%_"}]}`},
		{"sql_shop_v1_users_find", `{"connectionId":"main-db","textQuery":"example"}`},
		{"sql_shop_v1_users_create", `{"connectionId":"main-db","id":9007199254740993,"name":"big","score":0.1}`},
		{"sql_shop_v1_users_get", `{"connectionId":"main-db","id":"9007199254740993"}`},
		{"sql_shop_v1_users_update", `{"connectionId":"main-db","id":"9007199254740993","age":7}`},
		{"sql_shop_v1_users_count", `{"connectionId":"main-db"}`},
		{"sql_shop_v1_users_delete", `{"connectionId":"main-db","id":"9007199254740993","confirm":true}`},
		{"sql_shop_v1_users_delete", `{"connectionId":"main-db","id":"9007199254740993","confirm":true}`},
		{"sql_shop_v1_log_find", `{"connectionId":"main-db","filter":[{"field":"msg","operator":"eq","value":"started"}]}`},
		{"sql_shop_v1_log_truncate", `{"connectionId":"main-db","confirm":true}`},
		{"sql_list_resource_types", `{}`},
		{"sql_list_namespaces", `{"connectionId":"main-db"}`},
	})
}

// The sql plugin's own writes reach a subscriber on the host.
func TestSQLWatchAcrossTheBoundary(t *testing.T) {
	remote, _ := launch(t, "sql", sqlplugin.Config{Connections: map[string]sqlplugin.ConnectionConfig{"main-db": {Driver: "sqlite", DSN: shopDB(t)}}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := remote.(plugin.Watcher).Subscribe(ctx, "main-db", "shop::v1::users")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := remote.(plugin.Watcher).Subscribe(ctx, "main-db", "shop::v1::nope"); !errors.Is(err, plugin.ErrNotFound) {
		t.Errorf("subscribing to a missing table: %v", err)
	}
	if _, err := remote.Create(ctx, "main-db", "shop::v1::users", plugin.CreateInput{Data: map[string]any{"id": int64(77), "name": "x"}}); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-ch:
		if e.Type != plugin.EventAdd || e.ID != "77" || e.Key != "shop::v1::users" || e.Connection != "main-db" {
			t.Errorf("event %+v", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
	}
	cancel()
	select {
	case _, ok := <-ch:
		if ok {
			t.Error("an event after the subscription ended")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the channel did not close within 10s of the context")
	}
}

// Refresh reaches the remote provider: a table created behind its back appears.
func TestSQLRefreshAcrossTheBoundary(t *testing.T) {
	path := shopDB(t)
	remote, _ := launch(t, "sql", sqlplugin.Config{Connections: map[string]sqlplugin.ConnectionConfig{"main-db": {Driver: "sqlite", DSN: path}}})
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE tickets (id INTEGER PRIMARY KEY, title TEXT)`); err != nil {
		t.Fatal(err)
	}
	has := func() bool {
		ts, err := remote.ResourceTypes(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, rt := range ts {
			if rt.Key == "shop::v1::tickets" {
				return true
			}
		}
		return false
	}
	if has() {
		t.Fatal("the new table is there before Refresh; the test proves nothing")
	}
	remote.(interface{ Refresh(context.Context) }).Refresh(context.Background())
	if !has() {
		t.Error("the new table is not there after Refresh")
	}
}
