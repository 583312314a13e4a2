package gateway_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// TestConsentBoundToWhoAsked: the consent URL of a per-user grant, opened by someone else
// (a link sent to them), does not give the asker that person's upstream account. The URL
// is the gateway's consent page, which asks for the code that went only to the asker: a
// browser that opens the link and follows it gives no grant; the authorization server's
// URL taken from a confirmed page and sent on comes back to a callback that refuses it (the
// browser lacks the cookie the code gave); a post of the code from another site is
// refused; wrong codes end the authorization. The asker's own browser, with the code,
// gives the grant.
func TestConsentBoundToWhoAsked(t *testing.T) {
	up := gatewaytest.NewFakeOAuth(t)
	const admin = "consent-bound-token-0123456789"
	g := gatewaytest.Start(t, `
listen: {{listen}}
state_dir: {{state_dir}}
store: memory
auth:
  mode: none
  admin_token: `+admin+`
servers:
  crm:
    type: http
    url: `+up.Srv.URL+`/mcp
    auth: {type: oauth, per: user}
`)
	auth := map[string]string{"Authorization": "Bearer " + admin}
	start := func() (consent, code string) {
		t.Helper()
		a := g.API(t, "POST", "/api/upstream-grants/crm/connect", `{"subject": "agent:a1"}`, auth)
		consent, _ = a.Obj["url"].(string)
		code, _ = a.Obj["code"].(string)
		if a.Status != 200 || consent == "" {
			t.Fatalf("connect for agent:a1: %s", a)
		}
		return consent, code
	}
	granted := func() bool {
		t.Helper()
		a := g.API(t, "GET", "/api/upstream-grants?subject=agent:a1", "", auth)
		var l struct{ Grants []struct{ Subject string } }
		if a.Status != 200 || json.Unmarshal(a.Raw, &l) != nil {
			t.Fatalf("grants: %s", a)
		}
		return len(l.Grants) > 0
	}
	open := func(c *http.Client, u string) (int, string) {
		t.Helper()
		resp, err := c.Get(u)
		if err != nil {
			t.Fatalf("open %s: %v", u, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}

	// The victim opens the link they were sent, and follows wherever it goes.
	consent, code := start()
	if status, body := open(gatewaytest.NewBrowser(), consent); strings.Contains(body, "may now use") || granted() {
		t.Fatalf("opening the consent link alone gave agent:a1 a grant (HTTP %d): %s", status, body)
	}
	if !strings.HasPrefix(consent, g.Base+"/oauth/consent/") || code == "" {
		t.Fatalf("the consent URL %q (code %q): want the gateway's consent page and a code", consent, code)
	}
	if _, body := open(gatewaytest.NewBrowser(), consent); !strings.Contains(body, "agent:a1") || !strings.Contains(body, "did not ask for it") {
		t.Errorf("the consent page does not say whose grant it gives and warn: %s", body)
	}

	// The asker confirms in their own browser, and sends on the authorization server's URL.
	asker := gatewaytest.NewBrowser()
	asker.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := asker.PostForm(consent, url.Values{"code": {strings.ToLower(code)}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	asURL := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(asURL, up.Srv.URL+"/as/authorize?") {
		t.Fatalf("the right code: HTTP %d to %q, want 303 to the authorization server", resp.StatusCode, asURL)
	}
	if status, body := open(gatewaytest.NewBrowser(), asURL); status != http.StatusBadRequest || !strings.Contains(body, "did not confirm") || granted() {
		t.Fatalf("the authorization server's URL completed in another browser: HTTP %d %s (granted %v)", status, body, granted())
	}

	// A page on another site that knows a link and its code cannot make a visitor confirm.
	consent, code = start()
	req, _ := http.NewRequest("POST", consent, strings.NewReader(url.Values{"code": {code}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	req.Header.Set("Origin", "http://evil.example")
	if resp, err := gatewaytest.NewBrowser().Do(req); err != nil || resp.StatusCode != http.StatusForbidden || granted() {
		t.Fatalf("a cross-site post of the code: %v %v (granted %v)", resp.StatusCode, err, granted())
	}

	// Five wrong codes end the authorization: the right one comes too late.
	for i := range 5 {
		resp, err := gatewaytest.NewBrowser().PostForm(consent, url.Values{"code": {"AAAA-AAAA"}})
		if err != nil || (resp.StatusCode != http.StatusUnauthorized && i < 4) {
			t.Fatalf("wrong code %d: %v %v", i, resp.StatusCode, err)
		}
		resp.Body.Close()
	}
	if resp, err := gatewaytest.NewBrowser().PostForm(consent, url.Values{"code": {code}}); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("the right code after five wrong ones: %v %v, want 404", resp.StatusCode, err)
	}

	// The asker's own browser, with the code, gives the grant.
	consent, code = start()
	gatewaytest.OpenConsent(t, consent, code)
	if !granted() {
		t.Fatal("the asker's consent with the code gave no grant")
	}
}
