package e2e

// mcpgw as the OAuth client of an upstream (docs/auth.md, "Upstream authorization"),
// against js/oauth-upstream.mjs: an authorization and resource server made of the
// TypeScript SDK's own parts (mcpAuthRouter, requireBearerAuth, McpServer), whose access
// tokens live seconds, whose refresh tokens rotate and which counts every replay. Consent
// is given headlessly: the consent URL the gateway names is opened by an HTTP client that
// follows the redirects back to the gateway's /oauth/callback.

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/internal/statedir"
)

// A token that expires while a client session is open is refreshed under it: the same
// session's next call works, with the same grant, after one refresh and no new consent.
func TestUpstreamOAuthRefreshMidSession(t *testing.T) {
	up := runOAuthUpstream(t, 3)
	g := startGateway(t, oauthConfig(up.URL, "server", "refresh_before: 1s"))
	consentOnce(t, g)

	gc := connectOAuthClient(t, g, nil)
	sid := gc.ID()
	first := whoami(t, gc)
	if first != "grant=g1" {
		t.Fatalf("first call: %q, want grant=g1", first)
	}
	before := up.stats(t)
	up.waitExpired(t) // every token the gateway held is dead now
	second := whoami(t, gc)
	after := up.stats(t)
	t.Logf("before expiry: %s; after the second call: %s", before, after)
	if second != first {
		t.Errorf("after the refresh the session answered %q, before %q", second, first)
	}
	if gc.ID() != sid || sid == "" {
		t.Errorf("session id %q became %q", sid, gc.ID())
	}
	if after.Refresh <= before.Refresh {
		t.Errorf("no refresh after the expiry: %s", after)
	}
	if after.Replays != 0 || after.Code != 1 || len(after.Grants) != 1 {
		t.Errorf("want 0 replays, 1 authorization code, 1 grant: %s", after)
	}
}

// A refresh that goes out on a kept-alive connection the authorization server closes at
// that moment (Node, the SDK's server, closes an idle one after about 6 s: a refresh due 6 s
// after the last token request races it) was never processed: its refresh token is still
// good, so the call must not fail for it. The upstream closes every refresh that arrives on
// a reused connection unanswered (--drop-reused-refresh), which makes the race certain.
func TestUpstreamOAuthRefreshOnClosingConnection(t *testing.T) {
	up := runOAuthUpstream(t, 3, "--drop-reused-refresh")
	g := startGateway(t, oauthConfig(up.URL, "server", "refresh_before: 1s"))
	consentOnce(t, g)
	gc := connectOAuthClient(t, g, nil)
	if got := whoami(t, gc); got != "grant=g1" {
		t.Fatalf("first call: %q, want grant=g1", got)
	}
	up.waitExpired(t)
	got, err := tryWhoami(gc)
	st := up.stats(t)
	t.Logf("after the expiry: %v %v; %s", got, err, st)
	if err != nil {
		t.Fatalf("the call after the expiry failed (%d refresh requests met a closing connection): %v", st.Dropped, err)
	}
	if got != "grant=g1" || st.Refresh < 1 || st.Replays != 0 || st.Code != 1 {
		t.Errorf("want grant=g1 after a refresh, no replay, no new consent: %q, %s", got, st)
	}
}

// A restart on the same state dir (bbolt) keeps the grant: the restarted gateway refreshes
// with the rotated refresh token it stored (its access token expired while it was down),
// asks nobody, and a session resumed by its Mcp-Session-Id keeps working.
func TestUpstreamOAuthRestartKeepsTokens(t *testing.T) {
	up := runOAuthUpstream(t, 3)
	g := startGateway(t, "store: bolt\n"+oauthConfig(up.URL, "server", "refresh_before: 1s"))
	consentOnce(t, g)

	s := sessOpen(t, g.URL, nil)
	if text, isErr, a := s.toolCall(t, "up__whoami", map[string]any{}); isErr || text != "grant=g1" {
		t.Fatalf("before the restart: %s", a)
	}
	g.Stop() // SIGTERM to its pid
	if !g.Exited() {
		t.Fatalf("mcpgw pid %d did not exit", g.Pid)
	}
	up.waitExpired(t) // the restarted gateway must refresh with what it stored
	before := up.stats(t)

	g2 := sessRestartGateway(t, g, "mcpgw-2")
	waitOAuthUp(t, g2, true)
	if text, isErr, a := s.toolCall(t, "up__whoami", map[string]any{}); isErr || text != "grant=g1" {
		t.Fatalf("session %s resumed after the restart: %s", s.ID, a)
	}
	if got := whoami(t, connectOAuthClient(t, g2, nil)); got != "grant=g1" {
		t.Fatalf("a new session after the restart: %q, want grant=g1", got)
	}
	after := up.stats(t)
	t.Logf("before the restart: %s; after: %s", before, after)
	if after.Code != 1 || len(after.Grants) != 1 {
		t.Errorf("the restart cost a new authorization: %s", after)
	}
	if after.Refresh <= before.Refresh || after.Replays != 0 {
		t.Errorf("want a refresh with the stored refresh token and no replay: %s", after)
	}
}

// Two replicas on one Redis share the grant: consent given through one serves both, and
// when the token has expired and both call at once, the authorization server sees one
// refresh per expiry and never a replayed refresh token.
func TestUpstreamOAuthReplicasOneRefresh(t *testing.T) {
	up := runOAuthUpstream(t, 3)
	redis := sessStartRedis(t, "redis", 0, "")
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	cfg := sessWriteConfig(t, "mcpgw.yaml", fmt.Sprintf("listen: ${E2E_LISTEN}\nstate_dir: ${E2E_STATE}\nstore: redis://127.0.0.1:%d/0\n", redis.Port)+
		oauthConfig(up.URL, "server", "keys: "+base64.StdEncoding.EncodeToString(key)+", refresh_before: 1s"))
	ga := sessStartReplica(t, "mcpgw-A", cfg)
	gb := sessStartReplica(t, "mcpgw-B", cfg)

	// Consent once, through B's /oauth/connect/up (the local owner may give it).
	giveConsent(t, gb.Base+"/oauth/connect/up", "")
	waitOAuthUp(t, gb, false)
	waitOAuthUp(t, ga, false)

	var clients []*goClient
	for _, g := range []*Gateway{ga, gb, ga, gb} {
		clients = append(clients, connectOAuthClient(t, g, nil))
	}
	const callsPerClient = 3
	for round := 1; round <= 2; round++ {
		up.waitExpired(t)
		before := up.stats(t)
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make(chan error, len(clients)*callsPerClient)
		for _, gc := range clients {
			for i := 0; i < callsPerClient; i++ {
				wg.Add(1)
				go func(gc *goClient) {
					defer wg.Done()
					<-start
					text, err := tryWhoami(gc)
					if err == nil && text != "grant=g1" {
						err = fmt.Errorf("whoami: %q, want grant=g1", text)
					}
					errs <- err
				}(gc)
			}
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Errorf("round %d: %v", round, err)
			}
		}
		after := up.stats(t)
		t.Logf("round %d: before %s; after %s", round, before, after)
		if n := after.Refresh - before.Refresh; n != 1 {
			t.Errorf("round %d: %d refreshes for one expiry and %d concurrent calls on two replicas, want 1",
				round, n, len(clients)*callsPerClient)
		}
		if after.Replays != 0 || after.Code != 1 {
			t.Errorf("round %d: want 0 replays and 1 authorization code: %s", round, after)
		}
	}
}

// No token the authorization server issued (access or refresh, before and after a
// refresh) shows anywhere the gateway shows things: its debug log, /readyz, /metrics,
// every GET route of the admin API, the consent errors and the callback's pages, nor in
// the clear in its state directory.
func TestUpstreamOAuthTokenNeverShown(t *testing.T) {
	up := runOAuthUpstream(t, 3)
	g := startGateway(t, "store: bolt\n"+oauthConfig(up.URL, "server", "refresh_before: 1s"))
	consent, consentErr := waitConsentURL(t, g)
	callback, callbackBody := giveConsent(t, consent, consentCode(consentErr))
	waitOAuthUp(t, g, true)
	gc := connectOAuthClient(t, g, nil)
	whoami(t, gc)
	up.waitExpired(t)
	whoami(t, gc) // refreshed
	st := up.stats(t)
	if st.Refresh < 1 || len(st.Issued) < 4 {
		t.Fatalf("want a refresh and at least 4 tokens issued: %s", st)
	}

	shown := map[string]string{
		"the consent error in /readyz": consentErr,
		"the callback's page":          callbackBody,
	}
	// The callback again: its state was used, so it fails; the failure must not echo it.
	a := rawRequest(t, http.MethodGet, callback, nil, "")
	if a.Status == http.StatusOK {
		t.Errorf("a callback taken twice answered 200: %s", a)
	}
	shown["a repeated callback's error"] = string(a.Body)
	if r, err := getReadyzRaw(g); err == nil {
		shown["/readyz"] = readAll(r)
	} else {
		t.Fatal(err)
	}
	m, err := getMetrics(g)
	if err != nil {
		t.Fatal(err)
	}
	shown["/metrics"] = m
	for path, body := range adminGETs(t, g) {
		shown[path] = body
	}
	g.Stop() // the log is complete once it has exited
	shown["the gateway's log"] = g.Log()
	for path, body := range stateFiles(t, g.StateDir) {
		shown[path] = body
	}

	code := ""
	if i := strings.Index(callback, "code="); i >= 0 {
		code, _, _ = strings.Cut(callback[i+len("code="):], "&")
	}
	for where, text := range shown {
		for _, tok := range st.Issued {
			if strings.Contains(text, tok) {
				t.Errorf("%s shows the token %s…", where, tok[:6])
			}
		}
		if code != "" && where != "the gateway's log" && strings.Contains(text, code) {
			t.Errorf("%s shows the authorization code", where)
		}
	}
	t.Logf("checked %d places for %d tokens", len(shown), len(st.Issued))
}

// adminGETs GETs every route of the admin API (from /api/openapi.json) that has a GET and
// no path parameter, plus up's own entry, with the local token; it returns path → body.
func adminGETs(t *testing.T, g *Gateway) map[string]string {
	t.Helper()
	tok, err := statedir.ReadToken(g.StateDir)
	if err != nil {
		t.Fatal(err)
	}
	hdr := map[string]string{"Authorization": "Bearer " + tok}
	a := rawRequest(t, http.MethodGet, g.Base+"/api/openapi.json", hdr, "")
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if a.Status != http.StatusOK || json.Unmarshal(a.Body, &doc) != nil {
		t.Fatalf("GET /api/openapi.json: %s", a)
	}
	paths := []string{"/api/servers/up"}
	for p, ops := range doc.Paths {
		if _, ok := ops["get"]; ok && !strings.Contains(p, "{") {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	if len(paths) < 5 {
		t.Fatalf("the admin API lists only %v", paths)
	}
	out := map[string]string{}
	for _, p := range paths {
		a := rawRequest(t, http.MethodGet, g.Base+p, hdr, "")
		if a.Status == http.StatusBadRequest { // a route that needs an agent (?agent=)
			out["GET "+p+" (400)"] = string(a.Body)
			p += "?agent=default"
			a = rawRequest(t, http.MethodGet, g.Base+p, hdr, "")
		}
		if a.Status != http.StatusOK {
			t.Errorf("GET %s: %s", p, a)
		}
		out["GET "+p] = string(a.Body)
	}
	t.Logf("admin API GET routes read: %v", paths)
	return out
}

// stateFiles reads every regular file under dir (not the gateway's socket): path → content.
func stateFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out["state file "+filepath.Base(p)] = string(b)
		return nil
	})
	if err != nil || len(out) == 0 {
		t.Fatalf("state dir %s: %v (%d files)", dir, err, len(out))
	}
	return out
}

func readAll(r *http.Response) string {
	defer r.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	return string(b)
}

// Per-user grants (per: user, mode left out): each identity signs in for itself. An
// identity's first call answers an error result naming its own sign-in URL; once that is
// opened its calls go with its own grant, and two identities never share one.
func TestUpstreamOAuthTwoUsers(t *testing.T) {
	up := runOAuthUpstream(t, 3600)
	g := startGateway(t, oauthConfig(up.URL, "user", "refresh_before: 1s"))
	// Until some identity has authorized the server its tools are not listed
	// (docs/auth.md): a0 signs in at /oauth/connect/up so that a1 and a2 see whoami.
	giveConsentAs(t, g.Base+"/oauth/connect/up", "", map[string]string{"X-Agent-ID": "a0"})
	waitOAuthUp(t, g, false)

	grants := map[string]string{}
	clients := map[string]*goClient{}
	for _, agent := range []string{"a1", "a2"} {
		gc := connectOAuthClient(t, g, map[string]string{"X-Agent-ID": agent})
		clients[agent] = gc
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		res, err := gc.CallTool(ctx, &mcp.CallToolParams{Name: "up__whoami", Arguments: map[string]any{}})
		cancel()
		if err != nil {
			t.Fatalf("%s's first call: %v", agent, err)
		}
		text := resultText(res)
		m := consentURLRE.FindStringSubmatch(text)
		if !res.IsError || m == nil {
			t.Fatalf("%s's first call, before its consent: isError %v, %q; want an error result with a sign-in URL", agent, res.IsError, text)
		}
		giveConsent(t, m[1], consentCode(text))
		got := ""
		desc, ok := waitFor(oauthWait, func() (bool, string) {
			text, err := tryWhoami(gc)
			if err != nil {
				return false, err.Error()
			}
			got = text
			return true, text
		})
		if !ok {
			t.Fatalf("%s after its consent: %s", agent, desc)
		}
		grants[agent] = got
	}
	for round := 0; round < 3; round++ {
		for agent, gc := range clients {
			if again := whoami(t, gc); again != grants[agent] {
				t.Errorf("%s answered %q, earlier %q", agent, again, grants[agent])
			}
		}
	}
	st := up.stats(t)
	t.Logf("a1: %s, a2: %s; %s", grants["a1"], grants["a2"], st)
	if grants["a1"] == grants["a2"] {
		t.Errorf("a1 and a2 share %s", grants["a1"])
	}
	if grants["a1"] == "grant=g1" || grants["a2"] == "grant=g1" {
		t.Errorf("a caller uses a0's grant g1: a1 %s, a2 %s", grants["a1"], grants["a2"])
	}
	if st.Code != 3 || len(st.Grants) != 3 || st.Replays != 0 {
		t.Errorf("want 3 authorization codes (a0, a1, a2), 3 grants, no replay: %s", st)
	}
}
