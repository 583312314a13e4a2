package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/gateway"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/statedir"
	"github.com/mcpgw/mcpgw/internal/store"
)

// TestTopURLOfAnotherGateway: `mcpgw top --url URL` without --config must not send the
// default config's local token to a gateway at another address (that token is another
// gateway's secret, and it is refused there anyway); it fails naming --key and --config.
// With --config of that gateway, its own local token is read and the report printed; with
// the default config's own address, that config's token is still used.
func TestTopURLOfAnotherGateway(t *testing.T) {
	// The default config: a gateway at another address, whose state dir holds its token.
	homeDir := t.TempDir()
	homeTok, err := statedir.EnsureToken(homeDir)
	if err != nil {
		t.Fatal(err)
	}
	homeCfg := filepath.Join(t.TempDir(), "mcpgw.yaml")
	writeFile(t, homeCfg, "listen: 127.0.0.1:1\nstate_dir: "+homeDir+"\n")
	t.Setenv("MCPGW_CONFIG", homeCfg)
	t.Setenv("MCPGW_ADMIN_TOKEN", "")

	// The gateway top is pointed at, with a state dir of its own.
	srv := httptest.NewUnstartedServer(nil)
	addr := srv.Listener.Addr().String()
	otherDir := t.TempDir()
	otherCfg := filepath.Join(t.TempDir(), "other.yaml")
	yaml := "listen: " + addr + "\nstate_dir: " + otherDir + "\nauth: {admin_token: s3cret, audit: {path: \"off\"}}\n"
	writeFile(t, otherCfg, yaml)
	cfg, _, err := config.Parse([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	reg := registry.New(cfg, log)
	gw, err := gateway.New(cfg, reg, store.NewMemory(), log)
	if err != nil {
		t.Fatal(err)
	}
	reg.Start(10 * time.Second)
	gw.Start()
	var mu sync.Mutex
	var sent []string // the Authorization headers /api/usage received
	h := gw.Handler()
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/usage" {
			mu.Lock()
			sent = append(sent, r.Header.Get("Authorization"))
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})
	srv.Start()
	t.Cleanup(func() { srv.Close(); gw.Close(); reg.Close() })
	lastSent := func() string {
		mu.Lock()
		defer mu.Unlock()
		if len(sent) == 0 {
			return "(no request)"
		}
		return sent[len(sent)-1]
	}

	err = top(context.Background(), []string{"--url", srv.URL}, io.Discard)
	if got := lastSent(); strings.Contains(got, homeTok) {
		t.Errorf("the default state dir's token was sent to the gateway at %s", srv.URL)
	}
	if err == nil || !strings.Contains(err.Error(), "--key") || !strings.Contains(err.Error(), "--config") {
		t.Errorf("top --url of another gateway: %v, want an error naming --key and --config", err)
	}
	if err := top(context.Background(), []string{"--url", srv.URL, "--config", otherCfg}, io.Discard); err != nil {
		t.Errorf("top --url with that gateway's --config: %v", err)
	}
	otherTok, _ := statedir.ReadToken(otherDir)
	if got := lastSent(); otherTok == "" || got != "Bearer "+otherTok {
		t.Errorf("with --config of that gateway, sent %q, want its local token", got)
	}
	// The default config's own address: its token goes there.
	t.Setenv("MCPGW_CONFIG", otherCfg)
	if err := top(context.Background(), []string{"--url", srv.URL}, io.Discard); err != nil {
		t.Errorf("top --url of the default config's own gateway: %v", err)
	}
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}
