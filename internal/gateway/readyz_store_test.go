package gateway_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/gateway"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/store"
)

// fullDisk is a store that answers reads while its writes fail as on a full disk.
type fullDisk struct {
	store.Store
	full atomic.Bool
}

func (f *fullDisk) Put(r *store.Record) error {
	if f.full.Load() {
		return fmt.Errorf("write mcpgw.db: %w", syscall.ENOSPC)
	}
	return f.Store.Put(r)
}

// TestReadyzReportsFailedWrites: /readyz once said "store": "ok" while every write failed
// with ENOSPC (its probe only reads). A failed write now makes the gateway unready, naming
// the error, until a write succeeds.
func TestReadyzReportsFailedWrites(t *testing.T) {
	srv := httptest.NewUnstartedServer(nil) // its address is the config's listen (Host checks)
	defer srv.Close()
	cfg, _, err := config.Parse([]byte("listen: " + srv.Listener.Addr().String() + "\nstate_dir: " + t.TempDir() + "\nstore: memory\n"))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	reg := registry.New(cfg, log)
	store := &fullDisk{Store: store.NewMemory()}
	gw, err := gateway.New(cfg, reg, store, log)
	if err != nil {
		t.Fatal(err)
	}
	reg.Start(10 * time.Second)
	gw.Start()
	srv.Config.Handler = gw.Handler()
	srv.Start()
	defer func() { srv.CloseClientConnections(); gw.Close(); reg.Close() }()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	initialize := func() {
		t.Helper()
		r, err := http.NewRequest("POST", srv.URL+"/mcp", strings.NewReader(initBody))
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if code, body := get("/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz before any write: %d %s", code, body)
	}
	store.full.Store(true)
	initialize() // its session record is written, and the write fails
	if code, body := get("/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "no space left on device") {
		t.Errorf("/readyz after a failed write: %d %s, want 503 naming the error", code, body)
	}
	store.full.Store(false)
	initialize()
	if code, body := get("/readyz"); code != http.StatusOK {
		t.Errorf("/readyz after a write succeeded again: %d %s", code, body)
	}
}
