package gatewaytest

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/gateway"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/registry/pluginkind"
	"github.com/mcpgw/mcpgw/internal/store"
	"github.com/mcpgw/mcpgw/plugin"
)

// GW is one in-process gateway behind an httptest server.
type GW struct {
	Srv     *httptest.Server
	Base    string // http://127.0.0.1:PORT
	Addr    string // 127.0.0.1:PORT
	Gateway *gateway.Gateway
	Reg     *registry.Registry
	Log     *LockedBuffer
	// store is the session store the gateway was given, as it is (its bytes at rest).
	Store store.Store
	// te is the Transfer-Encoding of the last request the server received.
	TE atomic.Value
}

// LockedBuffer is a bytes.Buffer safe for concurrent writes: a gateway's log.
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String is what was written so far.
func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Start builds a gateway from yaml, in which {{listen}}, {{state_dir}} and
// {{everything}} are replaced by the test server's address, a temp dir and the shared
// everything-server URL.
func Start(t *testing.T, yaml string) *GW {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	g := &GW{Srv: srv, Addr: srv.Listener.Addr().String(), Log: &LockedBuffer{}}
	g.Base = "http://" + g.Addr
	yaml = strings.NewReplacer("{{listen}}", g.Addr, "{{state_dir}}", t.TempDir(), "{{everything}}", EverythingURL()).Replace(yaml)
	cfg, ps, err := config.Parse([]byte(yaml))
	if err != nil {
		srv.Close()
		t.Fatalf("config: %v", err)
	}
	if len(ps) > 0 {
		t.Logf("config warnings: %v", ps)
	}
	log := slog.New(slog.NewTextHandler(g.Log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	g.Reg = registry.New(cfg, log)
	g.Reg.PluginKinds = pluginkind.All()
	g.Store = store.NewMemory()
	gw, err := gateway.New(cfg, g.Reg, g.Store, log)
	if err != nil {
		srv.Close()
		t.Fatalf("gateway.New: %v", err)
	}
	g.Gateway = gw
	g.Reg.Start(10 * time.Second)
	gw.Start()
	h := gw.Handler()
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.TE.Store(strings.Join(r.TransferEncoding, ","))
		h.ServeHTTP(w, r)
	})
	srv.Start()
	g.stopAtEnd(t, srv, gw)
	return g
}

// BaseConfig is the usual test config: the shared everything-server as "everything", a
// server that is down ("down"), a 64 KiB body limit and pages of 7.
const BaseConfig = `
listen: {{listen}}
state_dir: {{state_dir}}
store: memory
log: {level: debug}
http: {max_body_bytes: 65536, page_size: 7}
servers:
  everything:
    type: streamable_http
    url: {{everything}}
  down:
    type: streamable_http
    url: http://127.0.0.1:1/mcp
`

// Client is a new HTTP client for requests to a test gateway: a 20 s timeout, so that a
// gateway that hangs fails the test instead of hanging it.
func Client() *http.Client { return &http.Client{Timeout: 20 * time.Second} }

// StartWith is Start with the registry's options (dialer, timing).
func StartWith(t *testing.T, yaml string, o registry.Options) *GW {
	t.Helper()
	return StartProviding(t, yaml, o, nil)
}

// StartProviding is StartWith, with in-process providers for the config's
// type go plugins (registry.Provide, by plugin name).
func StartProviding(t *testing.T, yaml string, o registry.Options, providers map[string]plugin.Plugin) *GW {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	g := &GW{Srv: srv, Addr: srv.Listener.Addr().String(), Log: &LockedBuffer{}}
	g.Base = "http://" + g.Addr
	yaml = strings.NewReplacer("{{listen}}", g.Addr, "{{state_dir}}", t.TempDir()).Replace(yaml)
	cfg, _, err := config.Parse([]byte(yaml))
	if err != nil {
		srv.Close()
		t.Fatalf("config: %v", err)
	}
	o.Log = slog.New(slog.NewTextHandler(g.Log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	g.Reg = registry.NewWithOptions(cfg, o)
	gw, err := gateway.New(cfg, g.Reg, store.NewMemory(), o.Log)
	if err != nil {
		srv.Close()
		t.Fatalf("gateway.New: %v", err)
	}
	g.Gateway = gw
	for name, p := range providers {
		g.Reg.Provide(name, p)
	}
	g.Reg.Start(10 * time.Second)
	gw.Start()
	srv.Config.Handler = gw.Handler()
	srv.Start()
	g.stopAtEnd(t, srv, gw)
	return g
}

// stopAtEnd closes the test server, the gateway and its registry when t ends, and logs
// the tail of the gateway's log when t failed.
func (g *GW) stopAtEnd(t *testing.T, srv *httptest.Server, gw *gateway.Gateway) {
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		gw.Close()
		g.Reg.Close()
		if t.Failed() {
			logs := g.Log.String()
			if len(logs) > 8000 {
				logs = "…" + logs[len(logs)-8000:]
			}
			t.Logf("gateway log:\n%s", logs)
		}
	})
}
