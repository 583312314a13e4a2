package ui_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

var tokenField = regexp.MustCompile(`name="token" value="([^"]*)"`)

// TestUISignInCrossSiteGETNeitherSignsInNorCounts: a web page that makes the owner's
// browser fetch /ui/login?token=bad (an <img> does, cross-site) neither signs in nor counts
// as a wrong credential, so it cannot lock the owner out; a sign-in posted from another
// site is refused without counting either. The owner's tokenized address still signs in:
// its GET serves a same-origin form that posts the token, and only that POST counts.
func TestUISignInCrossSiteGETNeitherSignsInNorCounts(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.AdminYAML+"auth: {mode: none, admin_token: tok-0123456789}\n")
	c := gatewaytest.NewUIClient(t, g)
	crossSite := map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Dest": "image"}
	for i := range 8 {
		a := c.Do("GET", "/ui/login?token=bad"+string(rune('a'+i)), "", crossSite)
		if a.Status == http.StatusSeeOther || a.Status == http.StatusTooManyRequests || a.Status == http.StatusUnauthorized {
			t.Fatalf("cross-site GET %d of /ui/login?token=bad: %d %v", i, a.Status, a.Header)
		}
	}
	// A cross-site POST of the sign-in form, even with a valid pre-sign-in session, is
	// refused before the token is looked at.
	csrf := gatewaytest.Find(t, csrfField, c.Do("GET", "/ui/login", "", nil).Body)
	for i := range 8 {
		a := c.Do("POST", "/ui/login", url.Values{"csrf": {csrf}, "token": {"bad"}}.Encode(), map[string]string{
			"Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "cross-site"})
		if a.Status != http.StatusForbidden {
			t.Fatalf("cross-site POST %d of a sign-in: %d %s", i, a.Status, a.Body)
		}
	}
	// The owner's admin API call and sign-in are not slowed.
	if code, _ := adminGET(t, g, "/api/servers", "tok-0123456789"); code != http.StatusOK {
		t.Fatalf("the owner's admin API call after the cross-site requests: %d", code)
	}
	owner := gatewaytest.NewUIClient(t, g)
	a := owner.Do("GET", "/ui/login?token=tok-0123456789&next=/ui/tasks", "", map[string]string{"Sec-Fetch-Site": "none"})
	if a.Status != http.StatusOK {
		t.Fatalf("the owner's tokenized address: %d %v %s", a.Status, a.Header, a.Body)
	}
	if owner.Cookie() == nil || !strings.Contains(a.Body, `data-autosubmit`) || gatewaytest.Find(t, tokenField, a.Body) != "tok-0123456789" {
		t.Fatalf("the tokenized address does not serve a form that posts the token:\n%s", a.Body)
	}
	a = owner.Form("/ui/login", url.Values{"csrf": {gatewaytest.Find(t, csrfField, a.Body)}, "token": {"tok-0123456789"}, "next": {"/ui/tasks"}})
	if a.Status != http.StatusSeeOther || a.Header.Get("Location") != "/ui/tasks" {
		t.Fatalf("the owner's sign-in: %d %v %s", a.Status, a.Header, a.Body)
	}
	// The same address opened from another site is not posted by itself: the page asks.
	other := gatewaytest.NewUIClient(t, g)
	a = other.Do("GET", "/ui/login?token=tok-0123456789", "", map[string]string{"Sec-Fetch-Site": "cross-site"})
	if a.Status != http.StatusOK || strings.Contains(a.Body, `data-autosubmit`) {
		t.Fatalf("a tokenized address opened from another site: %d\n%s", a.Status, a.Body)
	}
}

func adminGET(t *testing.T, g *gatewaytest.GW, path, tok string) (int, string) {
	t.Helper()
	r, _ := http.NewRequest("GET", g.Base+path, nil)
	r.Header.Set("Authorization", "Bearer "+tok)
	res, err := gatewaytest.Client().Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	return res.StatusCode, ""
}
