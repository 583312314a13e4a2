package gateway_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

const initBody = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"localtrust_test","version":"1"}}}`

// TestForwardedRequestIsNotLocal: behind a reverse proxy every client looks like
// loopback. A request that carries forwarding headers from a peer http.trusted_proxies
// does not list is not local: in mode none it gets neither the tools nor the admin API;
// from a listed proxy, the forwarded client decides.
func TestForwardedRequestIsNotLocal(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.AdminYAML)
	xff := map[string]string{"X-Forwarded-For": "203.0.113.9"}
	if r := g.Do(t, gatewaytest.Req{Body: initBody, Header: xff}); r.Status != http.StatusUnauthorized ||
		!strings.Contains(string(r.Body), "proxy that http.trusted_proxies does not list") {
		t.Errorf("initialize forwarded for a remote client: %d %s, want 401 naming trusted_proxies", r.Status, r.Body)
	}
	if a := g.API(t, "GET", "/api/servers", "", xff); a.Status != http.StatusUnauthorized {
		t.Errorf("admin API forwarded for a remote client: %s, want 401", a)
	}
	if a := g.API(t, "GET", "/api/servers", "", map[string]string{"Forwarded": "for=127.0.0.1"}); a.Status != http.StatusUnauthorized {
		t.Errorf("admin API with a Forwarded header from an unlisted proxy: %s, want 401", a)
	}
	if r := g.Do(t, gatewaytest.Req{Body: initBody}); r.Status != http.StatusOK {
		t.Errorf("the owner's own initialize: %d %s", r.Status, r.Body)
	}

	p := gatewaytest.Start(t, gatewaytest.AdminYAML+"http: {trusted_proxies: [127.0.0.1, \"::1\"]}\n")
	if r := p.Do(t, gatewaytest.Req{Body: initBody, Header: xff}); r.Status != http.StatusUnauthorized {
		t.Errorf("initialize from a remote client through a trusted proxy: %d %s, want 401", r.Status, r.Body)
	}
	if r := p.Do(t, gatewaytest.Req{Body: initBody, Header: map[string]string{"X-Forwarded-For": "203.0.113.9, 127.0.0.5"}}); r.Status != http.StatusOK {
		t.Errorf("a loopback client through a trusted proxy: %d %s", r.Status, r.Body)
	}
	// A remote client cannot pose as loopback by starting the chain itself.
	if r := p.Do(t, gatewaytest.Req{Body: initBody, Header: map[string]string{"X-Forwarded-For": "127.0.0.1, 203.0.113.9"}}); r.Status != http.StatusUnauthorized {
		t.Errorf("a spoofed chain through a trusted proxy: %d %s, want 401", r.Status, r.Body)
	}
}

// TestLocalTokenIsACredential: the local token opens the tools in mode none to a caller
// that is not known as the owner, and the admin API everywhere.
func TestLocalTokenIsACredential(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.AdminYAML)
	hdr := g.LocalAuth(t)
	hdr["X-Forwarded-For"] = "203.0.113.9"
	if r := g.Do(t, gatewaytest.Req{Body: initBody, Header: hdr}); r.Status != http.StatusOK {
		t.Errorf("initialize with the local token: %d %s", r.Status, r.Body)
	}
	if a := g.API(t, "GET", "/api/servers", "", hdr); a.Status != http.StatusOK {
		t.Errorf("admin API with the local token: %s", a)
	}
	hdr["Authorization"] = "Bearer wrong-wrong-wrong-wrong-wrong-wrong-wrong"
	if r := g.Do(t, gatewaytest.Req{Body: initBody, Header: hdr}); r.Status != http.StatusUnauthorized {
		t.Errorf("initialize with a wrong token: %d %s, want 401", r.Status, r.Body)
	}
}

// TestCommandsNeedCredential: a write that makes the gateway run a command needs an admin
// credential, not only the local owner's connection; admin.allow_commands: false refuses
// it whoever asks. Writes that run nothing stay open to the owner.
func TestCommandsNeedCredential(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.AdminYAML)
	stdio := `{"name":"sh1","type":"stdio","command":"sh","args":["-c","exit 0"]}`
	if a := g.API(t, "POST", "/api/servers", stdio, nil); a.Status != http.StatusForbidden ||
		!strings.Contains(string(a.Raw), "needs an admin credential") {
		t.Errorf("a stdio server from the owner without a credential: %s, want 403", a)
	}
	if a := g.API(t, "POST", "/api/servers/test", stdio, nil); a.Status != http.StatusForbidden {
		t.Errorf("testing a stdio server without a credential: %s, want 403", a)
	}
	if a := g.API(t, "PUT", "/api/executors/inj", `{"type":"local_pc","mcp_policy":{"env_injection":{"LD_PRELOAD":"/tmp/x.so"}}}`, nil); a.Status != http.StatusForbidden {
		t.Errorf("an executor injecting environment without a credential: %s, want 403", a)
	}
	if a := g.API(t, "POST", "/api/servers", `{"name":"web2","type":"streamable_http","url":"http://127.0.0.1:1/mcp"}`, nil); a.Status != http.StatusCreated {
		t.Errorf("an HTTP server from the owner: %s, want 201", a)
	}
	if a := g.API(t, "POST", "/api/servers", stdio, g.LocalAuth(t)); a.Status != http.StatusCreated {
		t.Errorf("a stdio server with the local token: %s, want 201", a)
	}
	// Changing only the environment of a stdio server is a new command line too.
	if a := g.API(t, "PATCH", "/api/servers/sh1", `{"env":{"LD_PRELOAD":"/tmp/x.so"}}`, nil); a.Status != http.StatusForbidden {
		t.Errorf("PATCH of a stdio server's env without a credential: %s, want 403", a)
	}
	if a := g.API(t, "PATCH", "/api/servers/sh1", `{"meta":{"title":"Shell"}}`, nil); a.Status != http.StatusOK {
		t.Errorf("PATCH of a stdio server's title: %s, want 200", a)
	}

	off := gatewaytest.Start(t, gatewaytest.AdminYAML+"admin: {allow_commands: false}\n")
	if a := off.API(t, "POST", "/api/servers", stdio, off.LocalAuth(t)); a.Status != http.StatusForbidden ||
		!strings.Contains(string(a.Raw), "admin.allow_commands is false") {
		t.Errorf("a stdio server under allow_commands false: %s, want 403", a)
	}
	if a := off.API(t, "POST", "/api/servers/test", stdio, off.LocalAuth(t)); a.Status != http.StatusForbidden {
		t.Errorf("testing a stdio server under allow_commands false: %s, want 403", a)
	}
}

// TestWrongCredentialsSlowed: wrong admin credentials from one source are slowed (429
// with Retry-After), and while they are, even the right one is not checked.
func TestWrongCredentialsSlowed(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.AdminYAML)
	bad := map[string]string{"Authorization": "Bearer not-the-token"}
	status := map[int]int{}
	for i := 0; i < 30; i++ {
		a := g.API(t, "GET", "/api/servers", "", bad)
		status[a.Status]++
		if a.Status == http.StatusTooManyRequests && a.Header.Get("Retry-After") == "" {
			t.Fatalf("429 without Retry-After: %s", a)
		}
	}
	if status[http.StatusUnauthorized] > 6 || status[http.StatusTooManyRequests] == 0 {
		t.Errorf("30 wrong tries at once: %v, want at most 6 checked and the rest 429", status)
	}
	if a := g.API(t, "GET", "/api/servers", "", g.LocalAuth(t)); a.Status != http.StatusTooManyRequests {
		t.Errorf("the right token while the source is slowed: %s, want 429", a)
	}
	if r := g.Do(t, gatewaytest.Req{Method: "GET", Path: "/readyz", Header: bad}); r.Status == http.StatusOK && strings.Contains(string(r.Body), "upstreams") {
		t.Errorf("/readyz showed detail to a slowed source with a wrong token: %s", r.Body)
	}
}

// TestReadyzDetail: /readyz tells everyone ready or not; upstreams' errors (which name
// command lines) only to an admin.
func TestReadyzDetail(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.AdminYAML)
	r := g.Do(t, gatewaytest.Req{Method: "GET", Path: "/readyz", Header: map[string]string{"X-Forwarded-For": "203.0.113.9"}})
	if body := strings.TrimSpace(string(r.Body)); body != `{"ready":true}` {
		t.Errorf("/readyz for a caller that is not an admin: %d %s, want only ready", r.Status, body)
	}
	r = g.Do(t, gatewaytest.Req{Method: "GET", Path: "/readyz", Header: map[string]string{"X-Forwarded-For": "203.0.113.9", "Authorization": g.LocalAuth(t)["Authorization"]}})
	if !strings.Contains(string(r.Body), `"upstreams"`) {
		t.Errorf("/readyz for an admin: %d %s, want the detail", r.Status, r.Body)
	}
}

// TestForcedGCRateLimited: /api/runtime?gc=1 stops the world; one per 2 s.
func TestForcedGCRateLimited(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.AdminYAML)
	if a := g.API(t, "GET", "/api/runtime?gc=1", "", nil); a.Status != http.StatusOK {
		t.Fatalf("first forced collection: %s", a)
	}
	if a := g.API(t, "GET", "/api/runtime?gc=1", "", nil); a.Status != http.StatusTooManyRequests || a.Header.Get("Retry-After") == "" {
		t.Errorf("second forced collection at once: %s, want 429 with Retry-After", a)
	}
	if a := g.API(t, "GET", "/api/runtime", "", nil); a.Status != http.StatusOK {
		t.Errorf("runtime without gc: %s", a)
	}
}

// TestMetricsNeedOwnerOrCredential: /metrics names agents and tools, so in mode none it is
// the owner's, or any caller's with an admin credential (a Prometheus running as another
// user scrapes with the local token or an admin key as its bearer credentials file).
func TestMetricsNeedOwnerOrCredential(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.AdminYAML)
	other := map[string]string{"X-Forwarded-For": "203.0.113.9"} // not the owner
	if r := g.Do(t, gatewaytest.Req{Method: "GET", Path: "/metrics", Header: other}); r.Status != http.StatusUnauthorized || strings.Contains(string(r.Body), "mcpgw_") {
		t.Errorf("/metrics for a caller that is not the owner: %d %.200s, want 401", r.Status, r.Body)
	}
	hdr := g.LocalAuth(t)
	hdr["X-Forwarded-For"] = "203.0.113.9"
	if r := g.Do(t, gatewaytest.Req{Method: "GET", Path: "/metrics", Header: hdr}); r.Status != http.StatusOK || !strings.Contains(string(r.Body), "mcpgw_") {
		t.Errorf("/metrics with the local token: %d %.200s", r.Status, r.Body)
	}
	if r := g.Do(t, gatewaytest.Req{Method: "GET", Path: "/metrics"}); r.Status != http.StatusOK {
		t.Errorf("/metrics for the owner: %d %.200s", r.Status, r.Body)
	}
}
