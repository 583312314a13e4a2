package store

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// testdata/store-v1.db is a bbolt store written by the release whose store layout had no
// schema version (buckets sessions, tasks, conversations; JSON values). It is kept so that
// every later layout is proven to open and migrate a store users already have. Regenerate
// it only for a deliberate new fixture, never to make a test pass:
//
//	MCPGW_WRITE_STORE_FIXTURE=testdata/store-v1.db go test ./sessions -run TestStoreFixture
const storeFixture = "testdata/store-v1.db"

var fixtureTime = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

func fixtureRecords() ([]*Record, []*Task, []*Conversation) {
	recs := []*Record{
		{ID: "s-plain", Transport: "streamable_http", Agent: "claude", Conversation: "c1", ProtocolVersion: "2025-11-25",
			ClientInfo: json.RawMessage(`{"name":"claude-code","version":"2.0.0"}`), ClientCaps: json.RawMessage(`{"roots":{}}`),
			Servers: []string{"docs", "everything"}, Handshake: "full", Created: fixtureTime, LastSeen: fixtureTime, Principal: "header:claude"},
		{ID: "s-task", Transport: "socket", Agent: "codex", Task: "t1", Executor: "docker", ProtocolVersion: "2025-06-18",
			Servers: []string{"everything"}, Handshake: "thin", LogLevel: "debug", Created: fixtureTime, LastSeen: fixtureTime.Add(time.Minute),
			Principal: "key:ops", Overrides: map[string]Override{"everything": {Mode: "per_session", URL: "http://host.docker.internal:9000/mcp", Env: map[string]string{"TOKEN": "x"}}},
			Narrow: &Narrow{Servers: []string{"everything"}, Tools: []string{"everything__echo"}, ReadOnly: true, HasServers: true, HasTools: true}},
	}
	tasks := []*Task{
		{ID: "t1", EnabledMCPServers: []string{"everything"}, Agent: "codex", Created: fixtureTime},
		{ID: "t-file", EnabledMCPServers: []string{"docs"}, Created: fixtureTime, FileManaged: true},
	}
	convs := []*Conversation{{Agent: "claude", ID: "c1", FullViewHash: "v1:abc", Updated: fixtureTime}}
	return recs, tasks, convs
}

// TestStoreFixture opens the store an earlier release wrote and finds every record in it.
func TestStoreFixture(t *testing.T) {
	recs, tasks, convs := fixtureRecords()
	if out := os.Getenv("MCPGW_WRITE_STORE_FIXTURE"); out != "" {
		_ = os.Remove(out)
		s, err := OpenBolt(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			must(t, s.Put(r))
		}
		for _, tk := range tasks {
			must(t, s.PutTask(tk))
		}
		for _, c := range convs {
			must(t, s.PutConversation(c))
		}
		must(t, s.Close())
		t.Logf("wrote %s", out)
	}
	// Open a copy: opening may migrate the file in place, and the fixture must stay as the
	// earlier release left it.
	raw, err := os.ReadFile(storeFixture)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "mcpgw.db")
	must(t, os.WriteFile(path, raw, 0o600))
	s, err := OpenBolt(path)
	if err != nil {
		t.Fatalf("open the earlier release's store: %v", err)
	}
	defer s.Close()
	// The earlier release wrote no layout version: opening migrates it to the current one,
	// and the admin API's config entries work in it.
	if m := s.Migrated(); !slices.Equal(m, []string{"v1-to-v2-config-bucket", "v2-to-v3-pins-bucket", "v3-to-v4-credentials-bucket"}) {
		t.Errorf("migrations run on the earlier release's store: %v", m)
	}
	if v, err := s.SchemaVersion(); err != nil || v != ConfigSchemaVersion {
		t.Errorf("schema version after opening: %d, %v; want %d", v, err, ConfigSchemaVersion)
	}
	if es, err := s.ListConfig(); err != nil || len(es) != 0 {
		t.Errorf("config entries of the earlier release's store: %v, %v", es, err)
	}
	must(t, s.PutConfig(&ConfigEntry{Kind: "server", Name: "web", Doc: json.RawMessage(`{}`), Source: "api", Version: 1}))
	for _, want := range recs {
		got, err := s.Get(want.ID)
		if err != nil {
			t.Fatalf("session %s: %v", want.ID, err)
		}
		a, _ := json.Marshal(got)
		b, _ := json.Marshal(want)
		if string(a) != string(b) {
			t.Errorf("session %s:\n got %s\nwant %s", want.ID, a, b)
		}
	}
	got, err := s.ListTasks()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, tk := range got {
		ids = append(ids, tk.ID)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"t-file", "t1"}) {
		t.Errorf("tasks %v, want [t-file t1]", ids)
	}
	c, err := s.GetConversation("claude", "c1")
	if err != nil || c.FullViewHash != "v1:abc" {
		t.Errorf("conversation: %+v, %v", c, err)
	}
}

// testdata/store-v3.db is a bbolt store at layout 3 (sessions, tasks, conversations,
// config entries, pins; no credentials bucket), written by the build just before layout 4
// from fixtureRecords and the config entry and pins below. The build of today writes layout
// 4, so it cannot regenerate this file: keep it as it is.
const storeFixtureV3 = "testdata/store-v3.db"

// TestStoreFixtureV3 opens a layout 3 store: the credentials migration alone runs, every
// record of the earlier layout is still there, and credentials work in it.
func TestStoreFixtureV3(t *testing.T) {
	raw, err := os.ReadFile(storeFixtureV3)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "mcpgw.db")
	must(t, os.WriteFile(path, raw, 0o600))
	s, err := OpenBolt(path)
	if err != nil {
		t.Fatalf("open the layout 3 store: %v", err)
	}
	if m := s.Migrated(); !slices.Equal(m, []string{"v3-to-v4-credentials-bucket"}) {
		t.Errorf("migrations run on the layout 3 store: %v", m)
	}
	if v, err := s.SchemaVersion(); err != nil || v != 4 || ConfigSchemaVersion != 4 {
		t.Errorf("schema version after opening: %d, %v; want 4 (and this build's %d)", v, err, ConfigSchemaVersion)
	}
	recs, tasks, convs := fixtureRecords()
	for _, want := range recs {
		if got, err := s.Get(want.ID); err != nil || got.Principal != want.Principal {
			t.Errorf("session %s: %+v, %v", want.ID, got, err)
		}
	}
	if ts, err := s.ListTasks(); err != nil || len(ts) != len(tasks) {
		t.Errorf("tasks: %d, %v; want %d", len(ts), err, len(tasks))
	}
	if c, err := s.GetConversation(convs[0].Agent, convs[0].ID); err != nil || c.FullViewHash != convs[0].FullViewHash {
		t.Errorf("conversation: %+v, %v", c, err)
	}
	if e, err := s.GetConfig("server", "web"); err != nil || e.Version != 2 || string(e.Doc) != `{"url":"http://web:8080/mcp"}` {
		t.Errorf("config entry: %+v, %v", e, err)
	}
	if ps, err := s.ListPins(); err != nil || len(ps) != 2 || ps[0].Kind != "server" || ps[1].Hash != "h1" {
		t.Errorf("pins: %+v, %v", ps, err)
	}
	if cs, err := s.ListCredentials(CredentialGrant); err != nil || len(cs) != 0 {
		t.Errorf("credentials of the layout 3 store: %v, %v", cs, err)
	}
	if rev, err := s.PutCredential(&Credential{Kind: CredentialGrant, Server: "web", Subject: "alice", Sealed: []byte("x")}, 0); err != nil || rev != 1 {
		t.Fatalf("credential in the migrated store: %d, %v", rev, err)
	}
	must(t, s.Close())
	// Opened again, it is at layout 4: nothing runs, and the credential is kept.
	s, err = OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if m := s.Migrated(); len(m) != 0 {
		t.Errorf("migrations on the second open: %v", m)
	}
	if c, err := s.GetCredential(CredentialGrant, "web", "alice"); err != nil || c.Rev != 1 {
		t.Errorf("credential after reopen: %+v, %v", c, err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
