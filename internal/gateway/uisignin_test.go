package gateway_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

var tokenField = regexp.MustCompile(`name="token" value="([^"]*)"`)

// TestUISignInCrossSiteGETNeitherSignsInNorCounts: a web page that makes the owner's
// browser fetch /ui/login?token=bad (an <img> does, cross-site) neither signs in nor counts
// as a wrong credential, so it cannot lock the owner out; a sign-in posted from another
// site is refused without counting either. The owner's tokenized address still signs in:
// its GET serves a same-origin form that posts the token, and only that POST counts.
func TestUISignInCrossSiteGETNeitherSignsInNorCounts(t *testing.T) {
	g := startGateway(t, adminYAML+"auth: {mode: none, admin_token: tok-0123456789}\n")
	c := newUIClient(t, g)
	crossSite := map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Dest": "image"}
	for i := range 8 {
		a := c.do("GET", "/ui/login?token=bad"+string(rune('a'+i)), "", crossSite)
		if a.status == http.StatusSeeOther || a.status == http.StatusTooManyRequests || a.status == http.StatusUnauthorized {
			t.Fatalf("cross-site GET %d of /ui/login?token=bad: %d %v", i, a.status, a.header)
		}
	}
	// A cross-site POST of the sign-in form, even with a valid pre-sign-in session, is
	// refused before the token is looked at.
	csrf := find(t, csrfField, c.do("GET", "/ui/login", "", nil).body)
	for i := range 8 {
		a := c.do("POST", "/ui/login", url.Values{"csrf": {csrf}, "token": {"bad"}}.Encode(), map[string]string{
			"Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "cross-site"})
		if a.status != http.StatusForbidden {
			t.Fatalf("cross-site POST %d of a sign-in: %d %s", i, a.status, a.body)
		}
	}
	// The owner's admin API call and sign-in are not slowed.
	if code, _ := adminGET(t, g, "/api/servers", "tok-0123456789"); code != http.StatusOK {
		t.Fatalf("the owner's admin API call after the cross-site requests: %d", code)
	}
	owner := newUIClient(t, g)
	a := owner.do("GET", "/ui/login?token=tok-0123456789&next=/ui/tasks", "", map[string]string{"Sec-Fetch-Site": "none"})
	if a.status != http.StatusOK {
		t.Fatalf("the owner's tokenized address: %d %v %s", a.status, a.header, a.body)
	}
	if owner.cookie() == nil || !strings.Contains(a.body, `data-autosubmit`) || find(t, tokenField, a.body) != "tok-0123456789" {
		t.Fatalf("the tokenized address does not serve a form that posts the token:\n%s", a.body)
	}
	a = owner.form("/ui/login", url.Values{"csrf": {find(t, csrfField, a.body)}, "token": {"tok-0123456789"}, "next": {"/ui/tasks"}})
	if a.status != http.StatusSeeOther || a.header.Get("Location") != "/ui/tasks" {
		t.Fatalf("the owner's sign-in: %d %v %s", a.status, a.header, a.body)
	}
	// The same address opened from another site is not posted by itself: the page asks.
	other := newUIClient(t, g)
	a = other.do("GET", "/ui/login?token=tok-0123456789", "", map[string]string{"Sec-Fetch-Site": "cross-site"})
	if a.status != http.StatusOK || strings.Contains(a.body, `data-autosubmit`) {
		t.Fatalf("a tokenized address opened from another site: %d\n%s", a.status, a.body)
	}
}

func adminGET(t *testing.T, g *testGW, path, tok string) (int, string) {
	t.Helper()
	r, _ := http.NewRequest("GET", g.base+path, nil)
	r.Header.Set("Authorization", "Bearer "+tok)
	res, err := client.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	return res.StatusCode, ""
}
