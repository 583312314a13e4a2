package gateway_test

import (
	"net/http"
	"strings"
	"testing"
)

const initBody = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"localtrust_test","version":"1"}}}`

// TestForwardedRequestIsNotLocal: behind a reverse proxy every client looks like
// loopback. A request that carries forwarding headers from a peer http.trusted_proxies
// does not list is not local: in mode none it gets neither the tools nor the admin API;
// from a listed proxy, the forwarded client decides.
func TestForwardedRequestIsNotLocal(t *testing.T) {
	g := startGateway(t, adminYAML)
	xff := map[string]string{"X-Forwarded-For": "203.0.113.9"}
	if r := g.do(t, req{body: initBody, header: xff}); r.status != http.StatusUnauthorized ||
		!strings.Contains(string(r.body), "proxy that http.trusted_proxies does not list") {
		t.Errorf("initialize forwarded for a remote client: %d %s, want 401 naming trusted_proxies", r.status, r.body)
	}
	if a := g.api(t, "GET", "/api/servers", "", xff); a.status != http.StatusUnauthorized {
		t.Errorf("admin API forwarded for a remote client: %s, want 401", a)
	}
	if a := g.api(t, "GET", "/api/servers", "", map[string]string{"Forwarded": "for=127.0.0.1"}); a.status != http.StatusUnauthorized {
		t.Errorf("admin API with a Forwarded header from an unlisted proxy: %s, want 401", a)
	}
	if r := g.do(t, req{body: initBody}); r.status != http.StatusOK {
		t.Errorf("the owner's own initialize: %d %s", r.status, r.body)
	}

	p := startGateway(t, adminYAML+"http: {trusted_proxies: [127.0.0.1, \"::1\"]}\n")
	if r := p.do(t, req{body: initBody, header: xff}); r.status != http.StatusUnauthorized {
		t.Errorf("initialize from a remote client through a trusted proxy: %d %s, want 401", r.status, r.body)
	}
	if r := p.do(t, req{body: initBody, header: map[string]string{"X-Forwarded-For": "203.0.113.9, 127.0.0.5"}}); r.status != http.StatusOK {
		t.Errorf("a loopback client through a trusted proxy: %d %s", r.status, r.body)
	}
	// A remote client cannot pose as loopback by starting the chain itself.
	if r := p.do(t, req{body: initBody, header: map[string]string{"X-Forwarded-For": "127.0.0.1, 203.0.113.9"}}); r.status != http.StatusUnauthorized {
		t.Errorf("a spoofed chain through a trusted proxy: %d %s, want 401", r.status, r.body)
	}
}

// TestLocalTokenIsACredential: the local token opens the tools in mode none to a caller
// that is not known as the owner, and the admin API everywhere.
func TestLocalTokenIsACredential(t *testing.T) {
	g := startGateway(t, adminYAML)
	hdr := g.localAuth(t)
	hdr["X-Forwarded-For"] = "203.0.113.9"
	if r := g.do(t, req{body: initBody, header: hdr}); r.status != http.StatusOK {
		t.Errorf("initialize with the local token: %d %s", r.status, r.body)
	}
	if a := g.api(t, "GET", "/api/servers", "", hdr); a.status != http.StatusOK {
		t.Errorf("admin API with the local token: %s", a)
	}
	hdr["Authorization"] = "Bearer wrong-wrong-wrong-wrong-wrong-wrong-wrong"
	if r := g.do(t, req{body: initBody, header: hdr}); r.status != http.StatusUnauthorized {
		t.Errorf("initialize with a wrong token: %d %s, want 401", r.status, r.body)
	}
}

// TestCommandsNeedCredential: a write that makes the gateway run a command needs an admin
// credential, not only the local owner's connection; admin.allow_commands: false refuses
// it whoever asks. Writes that run nothing stay open to the owner.
func TestCommandsNeedCredential(t *testing.T) {
	g := startGateway(t, adminYAML)
	stdio := `{"name":"sh1","type":"stdio","command":"sh","args":["-c","exit 0"]}`
	if a := g.api(t, "POST", "/api/servers", stdio, nil); a.status != http.StatusForbidden ||
		!strings.Contains(string(a.raw), "needs an admin credential") {
		t.Errorf("a stdio server from the owner without a credential: %s, want 403", a)
	}
	if a := g.api(t, "POST", "/api/servers/test", stdio, nil); a.status != http.StatusForbidden {
		t.Errorf("testing a stdio server without a credential: %s, want 403", a)
	}
	if a := g.api(t, "PUT", "/api/executors/inj", `{"type":"local_pc","mcp_policy":{"env_injection":{"LD_PRELOAD":"/tmp/x.so"}}}`, nil); a.status != http.StatusForbidden {
		t.Errorf("an executor injecting environment without a credential: %s, want 403", a)
	}
	if a := g.api(t, "POST", "/api/servers", `{"name":"web2","type":"streamable_http","url":"http://127.0.0.1:1/mcp"}`, nil); a.status != http.StatusCreated {
		t.Errorf("an HTTP server from the owner: %s, want 201", a)
	}
	if a := g.api(t, "POST", "/api/servers", stdio, g.localAuth(t)); a.status != http.StatusCreated {
		t.Errorf("a stdio server with the local token: %s, want 201", a)
	}
	// Changing only the environment of a stdio server is a new command line too.
	if a := g.api(t, "PATCH", "/api/servers/sh1", `{"env":{"LD_PRELOAD":"/tmp/x.so"}}`, nil); a.status != http.StatusForbidden {
		t.Errorf("PATCH of a stdio server's env without a credential: %s, want 403", a)
	}
	if a := g.api(t, "PATCH", "/api/servers/sh1", `{"meta":{"title":"Shell"}}`, nil); a.status != http.StatusOK {
		t.Errorf("PATCH of a stdio server's title: %s, want 200", a)
	}

	off := startGateway(t, adminYAML+"admin: {allow_commands: false}\n")
	if a := off.api(t, "POST", "/api/servers", stdio, off.localAuth(t)); a.status != http.StatusForbidden ||
		!strings.Contains(string(a.raw), "admin.allow_commands is false") {
		t.Errorf("a stdio server under allow_commands false: %s, want 403", a)
	}
	if a := off.api(t, "POST", "/api/servers/test", stdio, off.localAuth(t)); a.status != http.StatusForbidden {
		t.Errorf("testing a stdio server under allow_commands false: %s, want 403", a)
	}
}

// TestWrongCredentialsSlowed: wrong admin credentials from one source are slowed (429
// with Retry-After), and while they are, even the right one is not checked.
func TestWrongCredentialsSlowed(t *testing.T) {
	g := startGateway(t, adminYAML)
	bad := map[string]string{"Authorization": "Bearer not-the-token"}
	status := map[int]int{}
	for i := 0; i < 30; i++ {
		a := g.api(t, "GET", "/api/servers", "", bad)
		status[a.status]++
		if a.status == http.StatusTooManyRequests && a.header.Get("Retry-After") == "" {
			t.Fatalf("429 without Retry-After: %s", a)
		}
	}
	if status[http.StatusUnauthorized] > 6 || status[http.StatusTooManyRequests] == 0 {
		t.Errorf("30 wrong tries at once: %v, want at most 6 checked and the rest 429", status)
	}
	if a := g.api(t, "GET", "/api/servers", "", g.localAuth(t)); a.status != http.StatusTooManyRequests {
		t.Errorf("the right token while the source is slowed: %s, want 429", a)
	}
	if r := g.do(t, req{method: "GET", path: "/readyz", header: bad}); r.status == http.StatusOK && strings.Contains(string(r.body), "upstreams") {
		t.Errorf("/readyz showed detail to a slowed source with a wrong token: %s", r.body)
	}
}

// TestReadyzDetail: /readyz tells everyone ready or not; upstreams' errors (which name
// command lines) only to an admin.
func TestReadyzDetail(t *testing.T) {
	g := startGateway(t, adminYAML)
	r := g.do(t, req{method: "GET", path: "/readyz", header: map[string]string{"X-Forwarded-For": "203.0.113.9"}})
	if body := strings.TrimSpace(string(r.body)); body != `{"ready":true}` {
		t.Errorf("/readyz for a caller that is not an admin: %d %s, want only ready", r.status, body)
	}
	r = g.do(t, req{method: "GET", path: "/readyz", header: map[string]string{"X-Forwarded-For": "203.0.113.9", "Authorization": g.localAuth(t)["Authorization"]}})
	if !strings.Contains(string(r.body), `"upstreams"`) {
		t.Errorf("/readyz for an admin: %d %s, want the detail", r.status, r.body)
	}
}

// TestForcedGCRateLimited: /api/runtime?gc=1 stops the world; one per 2 s.
func TestForcedGCRateLimited(t *testing.T) {
	g := startGateway(t, adminYAML)
	if a := g.api(t, "GET", "/api/runtime?gc=1", "", nil); a.status != http.StatusOK {
		t.Fatalf("first forced collection: %s", a)
	}
	if a := g.api(t, "GET", "/api/runtime?gc=1", "", nil); a.status != http.StatusTooManyRequests || a.header.Get("Retry-After") == "" {
		t.Errorf("second forced collection at once: %s, want 429 with Retry-After", a)
	}
	if a := g.api(t, "GET", "/api/runtime", "", nil); a.status != http.StatusOK {
		t.Errorf("runtime without gc: %s", a)
	}
}

// TestMetricsNeedOwnerOrCredential: /metrics names agents and tools, so in mode none it is
// the owner's, or any caller's with an admin credential (a Prometheus running as another
// user scrapes with the local token or an admin key as its bearer credentials file).
func TestMetricsNeedOwnerOrCredential(t *testing.T) {
	g := startGateway(t, adminYAML)
	other := map[string]string{"X-Forwarded-For": "203.0.113.9"} // not the owner
	if r := g.do(t, req{method: "GET", path: "/metrics", header: other}); r.status != http.StatusUnauthorized || strings.Contains(string(r.body), "mcpgw_") {
		t.Errorf("/metrics for a caller that is not the owner: %d %.200s, want 401", r.status, r.body)
	}
	hdr := g.localAuth(t)
	hdr["X-Forwarded-For"] = "203.0.113.9"
	if r := g.do(t, req{method: "GET", path: "/metrics", header: hdr}); r.status != http.StatusOK || !strings.Contains(string(r.body), "mcpgw_") {
		t.Errorf("/metrics with the local token: %d %.200s", r.status, r.body)
	}
	if r := g.do(t, req{method: "GET", path: "/metrics"}); r.status != http.StatusOK {
		t.Errorf("/metrics for the owner: %d %.200s", r.status, r.body)
	}
}
