package e2e

// Helpers for the upstream OAuth tests (upstream_oauth_test.go): js/oauth-upstream.mjs (an
// OAuth-protected MCP server made of the TypeScript SDK's server parts, whose refresh
// tokens rotate), its /stats, the gateway config that makes it an OAuth upstream, and
// consent given headlessly, as a browser that follows every redirect would.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// oauthWait bounds every wait of these tests (consent, an upstream coming up, expiry).
const oauthWait = 30 * time.Second

// oauthUpstream is a running js/oauth-upstream.mjs.
type oauthUpstream struct {
	*Proc
	Base string // http://127.0.0.1:PORT: the authorization server
	URL  string // Base + "/mcp": the MCP endpoint
}

// runOAuthUpstream starts js/oauth-upstream.mjs on a port of its choosing, its access
// tokens living accessTTL seconds, with extra flags, and waits for the port it prints.
func runOAuthUpstream(t testing.TB, accessTTL int, extra ...string) *oauthUpstream {
	t.Helper()
	args := append([]string{"js/oauth-upstream.mjs", "--port", "0", "--access-ttl", strconv.Itoa(accessTTL)}, extra...)
	p := startProcessIn(t, e2eDir(t), "oauth-upstream", node(t), args, nodeEnv(t))
	port := 0
	desc, ok := waitFor(readyTimeout, func() (bool, string) {
		if p.Exited() {
			return true, "exited"
		}
		first, _, complete := strings.Cut(p.Log(), "\n")
		if !complete {
			return false, "no line yet"
		}
		port, _ = strconv.Atoi(strings.TrimSpace(first))
		return true, "first line " + strconv.Quote(first)
	})
	if !ok || port <= 0 {
		t.Fatalf("oauth-upstream printed no port: %s", desc)
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	return &oauthUpstream{Proc: p, Base: base, URL: base + "/mcp"}
}

// oauthStats is GET /stats of the upstream.
type oauthStats struct {
	Code    int      `json:"code"`
	Refresh int      `json:"refresh"`
	Replays int      `json:"replays"`
	Dropped int      `json:"dropped"` // refreshes closed unanswered (--drop-reused-refresh)
	Grants  []string `json:"grants"`
	Issued  []string `json:"issued"`
}

func (s oauthStats) String() string {
	return fmt.Sprintf("codes %d, refreshes %d, replays %d, dropped %d, grants %v, %d tokens issued",
		s.Code, s.Refresh, s.Replays, s.Dropped, s.Grants, len(s.Issued))
}

// accessTokens are the access tokens among those issued.
func (s oauthStats) accessTokens() []string {
	var out []string
	for _, tok := range s.Issued {
		if strings.HasPrefix(tok, "at_") {
			out = append(out, tok)
		}
	}
	return out
}

func (u *oauthUpstream) stats(t testing.TB) oauthStats {
	t.Helper()
	resp, err := probeClient.Get(u.Base + "/stats")
	if err != nil {
		t.Fatalf("oauth-upstream /stats: %v", err)
	}
	defer resp.Body.Close()
	var s oauthStats
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&s); err != nil {
		t.Fatalf("oauth-upstream /stats (HTTP %d): %v", resp.StatusCode, err)
	}
	return s
}

// tokenRefused reports whether the upstream answers a request bearing tok with 401.
func (u *oauthUpstream) tokenRefused(tok string) (bool, error) {
	req, err := http.NewRequest(http.MethodPost, u.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		return false, err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := probeClient.Do(req)
	if err != nil {
		return false, err
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusUnauthorized, nil
}

// waitExpired waits until the upstream refuses every access token issued so far: the
// gateway's next call cannot go with any token it held.
func (u *oauthUpstream) waitExpired(t testing.TB) {
	t.Helper()
	toks := u.stats(t).accessTokens()
	if len(toks) == 0 {
		t.Fatal("no access token was issued yet")
	}
	desc, ok := waitFor(oauthWait, func() (bool, string) {
		for i, tok := range toks {
			refused, err := u.tokenRefused(tok)
			if err != nil || !refused {
				return false, fmt.Sprintf("access token #%d still taken (%v)", i+1, err)
			}
		}
		return true, ""
	})
	if !ok {
		t.Fatalf("the upstream's access tokens did not expire within %s: %s", oauthWait, desc)
	}
}

// oauthConfig is a gateway config whose server "up" is the upstream as an OAuth server
// with grants per `per`; upstreamCreds is the body of upstream_credentials (flow style).
func oauthConfig(upURL, per, upstreamCreds string) string {
	return `log: {level: debug, format: text}
upstream_credentials: {` + upstreamCreds + `}
servers:
  up:
    type: streamable_http
    url: ` + upURL + `
    auth: {type: oauth, per: ` + per + `}
`
}

// consentURLRE finds a consent URL in what the gateway says ("... open https://...").
var consentURLRE = regexp.MustCompile(`open (https?://[^\s"'<>]+)`)

// waitConsentURL waits until /readyz names the consent URL as up's error, and returns
// the whole error text too.
func waitConsentURL(t testing.TB, g *Gateway) (consent, errText string) {
	t.Helper()
	desc, ok := waitFor(oauthWait, func() (bool, string) {
		st, err := upstreamState(g, "up")
		if err != nil {
			return false, err.Error()
		}
		if m := consentURLRE.FindStringSubmatch(st.Error); m != nil {
			consent, errText = m[1], st.Error
			return true, ""
		}
		return false, fmt.Sprintf("state %q, error %q", st.State, st.Error)
	})
	if !ok {
		t.Fatalf("%s: /readyz named no consent URL for up within %s: %s", g.Name, oauthWait, desc)
	}
	return consent, errText
}

// oauthBrowser follows redirects as a browser would (the default ten at most).
var oauthBrowser = &http.Client{Timeout: 15 * time.Second}

// consentCodeRE finds the confirmation code the gateway gives with a consent URL.
var consentCodeRE = regexp.MustCompile(`the code ([A-Z2-7]{4}-[A-Z2-7]{4})`)

// consentCode is the confirmation code in what the gateway said, or "".
func consentCode(s string) string {
	if m := consentCodeRE.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return ""
}

// giveConsent gives consent as the person who asked: a browser (cookies kept) posts code
// to the gateway's consent page (or, with no code, opens /oauth/connect/...) and follows
// every redirect: to the authorization server, which approves at once, and back to the
// gateway's callback, which must answer 200. It returns the callback's URL and body.
func giveConsent(t testing.TB, consent, code string) (callback, body string) {
	t.Helper()
	return giveConsentAs(t, consent, code, nil)
}

// giveConsentAs is giveConsent with hdr on the first request (X-Agent-ID at
// /oauth/connect/{server} of a per-user server: whose grant it is).
func giveConsentAs(t testing.TB, consent, code string, hdr map[string]string) (callback, body string) {
	t.Helper()
	method, form := http.MethodGet, io.Reader(nil)
	if code != "" {
		method, form = http.MethodPost, strings.NewReader(url.Values{"code": {code}}.Encode())
	}
	req, err := http.NewRequest(method, consent, form)
	if err != nil {
		t.Fatal(err)
	}
	if code != "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	jar, _ := cookiejar.New(nil)
	resp, err := (&http.Client{Timeout: oauthBrowser.Timeout, Jar: jar}).Do(req)
	if err != nil {
		t.Fatalf("consent through %s: %v", consent, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/oauth/callback" {
		t.Fatalf("consent ended at %s with HTTP %d: %s", resp.Request.URL.Redacted(), resp.StatusCode, b)
	}
	return resp.Request.URL.String(), string(b)
}

// waitOAuthUp waits until /readyz says up is up. A consent URL named meanwhile fails the test
// when consentFails (the grant should have been there).
func waitOAuthUp(t testing.TB, g *Gateway, consentFails bool) {
	t.Helper()
	desc, ok := waitFor(oauthWait, func() (bool, string) {
		st, err := upstreamState(g, "up")
		if err != nil {
			return false, err.Error()
		}
		if consentFails && consentURLRE.MatchString(st.Error) {
			return true, "asked for consent again: " + st.Error
		}
		return st.State == "up", fmt.Sprintf("state %q, error %q", st.State, st.Error)
	})
	if !ok || strings.HasPrefix(desc, "asked") {
		t.Fatalf("%s: up not up within %s: %s", g.Name, oauthWait, desc)
	}
}

// consentOnce takes the consent URL from /readyz, gives consent, and waits until up is up.
func consentOnce(t testing.TB, g *Gateway) {
	t.Helper()
	consent, errText := waitConsentURL(t, g)
	giveConsent(t, consent, consentCode(errText))
	waitOAuthUp(t, g, true)
}

// whoami calls up's whoami through the session and returns its text ("grant=g1"), failing
// the test on an error or an error result.
func whoami(t testing.TB, gc *goClient) string {
	t.Helper()
	text, err := tryWhoami(gc)
	if err != nil {
		t.Fatal(err)
	}
	return text
}

func tryWhoami(gc *goClient) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := gc.CallTool(ctx, &mcp.CallToolParams{Name: "up__whoami", Arguments: map[string]any{}})
	if err != nil {
		return "", fmt.Errorf("up__whoami on session %s: %w", gc.ID(), err)
	}
	if res.IsError {
		return "", fmt.Errorf("up__whoami on session %s: error result %q", gc.ID(), resultText(res))
	}
	return resultText(res), nil
}

// connectOAuthClient connects a go-sdk client (2025-11-25, a session) to g with hdr on
// every request.
func connectOAuthClient(t testing.TB, g *Gateway, hdr map[string]string) *goClient {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: g.URL}
	if len(hdr) > 0 {
		tr.HTTPClient = &http.Client{Transport: sessHeaderRT(hdr)}
	}
	return connectGoClient(t, tr)
}
