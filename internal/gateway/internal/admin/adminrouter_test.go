package admin_test

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/gateway"
	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/store"
)

// TestAdminRouterAnswers: the admin router tells a wrong method (405 with Allow, JSON)
// from an unknown path (404, JSON), both only to an admin; the web UI's paths keep their
// own answers.
func TestAdminRouterAnswers(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.AdminYAML+"auth: {mode: none, admin_token: tok-0123456789}\n")
	admin := map[string]string{"Authorization": "Bearer tok-0123456789"}
	cases := []struct {
		name, method, path string
		hdr                map[string]string
		status             int
		allow, ct, want    string
	}{
		{"wrong method", "POST", "/api/sessions", admin, 405, "GET", "application/json", "method POST not allowed on /api/sessions (allowed: GET)"},
		{"wrong method, HEAD", "HEAD", "/api/sessions", admin, 405, "GET", "application/json", ""},
		{"wrong method, no credential", "POST", "/api/sessions", nil, 401, "", "application/json", "the admin API needs a credential"},
		{"wrong method, item", "POST", "/api/servers/everything", admin, 405, "GET, PUT, PATCH, DELETE", "application/json", "(allowed: GET, PUT, PATCH, DELETE)"},
		// validate is both a POST route of its own and a {name} of the item routes.
		{"wrong method, two routes", "OPTIONS", "/api/servers/validate", admin, 405, "GET, POST, PUT, PATCH, DELETE", "application/json", "not allowed"},
		{"unknown path", "GET", "/api/nothing", admin, 404, "", "application/json", "no admin API route /api/nothing"},
		{"unknown path, no credential", "GET", "/api/nothing", nil, 401, "", "application/json", "the admin API needs a credential"},
		{"route", "GET", "/api/sessions", admin, 200, "", "application/json", ""},
		{"ui api wrong method", "PUT", "/ui/api/sessions", nil, 404, "", "application/json", "no route PUT /ui/api/sessions"},
		{"ui page wrong method", "POST", "/ui/servers", nil, 405, "", "", ""},
		{"ui unknown", "GET", "/ui/nothing", nil, 404, "", "text/html; charset=utf-8", "There is no page /ui/nothing."},
	}
	for _, c := range cases {
		r := g.Do(t, gatewaytest.Req{Method: c.method, Path: c.path, Header: c.hdr})
		if r.Status != c.status || r.Header.Get("Allow") != c.allow || r.Header.Get("Content-Type") != c.ct || !strings.Contains(string(r.Body), c.want) {
			t.Errorf("%s: %s %s: %d, Allow %q, Content-Type %q, %.200s; want %d, Allow %q, Content-Type %q, with %q",
				c.name, c.method, c.path, r.Status, r.Header.Get("Allow"), r.Header.Get("Content-Type"), r.Body, c.status, c.allow, c.ct, c.want)
		}
	}
}

// BenchmarkAdminRouting is the admin router's answer to an admin, in process: a route
// (GET /api/settings), a wrong method (405) and an unknown path (404).
func BenchmarkAdminRouting(b *testing.B) {
	cfg, _, err := config.Parse([]byte("listen: 127.0.0.1:8080\nstate_dir: " + b.TempDir() + "\nauth: {mode: none, admin_token: tok-0123456789}\n"))
	if err != nil {
		b.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	reg := registry.New(cfg, log)
	defer reg.Close()
	gw, err := gateway.New(cfg, reg, store.NewMemory(), log)
	if err != nil {
		b.Fatal(err)
	}
	defer gw.Close()
	h := gw.Handler()
	for _, c := range []struct {
		name, method, path string
		status             int
	}{
		{"route", "GET", "/api/settings", 200},
		{"405", "POST", "/api/sessions", 405},
		{"404", "GET", "/api/nothing", 404},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r := httptest.NewRequest(c.method, "http://127.0.0.1:8080"+c.path, nil)
				r.RemoteAddr = "127.0.0.1:1234"
				r.Header.Set("Authorization", "Bearer tok-0123456789")
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code != c.status {
					b.Fatalf("%s %s: %d %s", c.method, c.path, w.Code, w.Body)
				}
			}
		})
	}
}
