package gatewaytest

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// UIClient is a browser stand-in: a cookie jar, redirects not followed.
type UIClient struct {
	t    *testing.T
	base string
	HTTP *http.Client
}

// UIAnswer is one answer of the web UI.
type UIAnswer struct {
	Status int
	Header http.Header
	Body   string
}

// NewUIClient is a browser on g's web UI: it keeps cookies and does not follow redirects.
func NewUIClient(t *testing.T, g *GW) *UIClient {
	jar, _ := cookiejar.New(nil)
	return &UIClient{t: t, base: g.Base, HTTP: &http.Client{Jar: jar, Timeout: Client().Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// Do sends one request to the UI (hdr: extra headers) and reads the answer.
func (c *UIClient) Do(method, path, body string, hdr map[string]string) UIAnswer {
	c.t.Helper()
	r, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	res, err := c.HTTP.Do(r)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return UIAnswer{res.StatusCode, res.Header, string(b)}
}

// Form posts the form v to path.
func (c *UIClient) Form(path string, v url.Values) UIAnswer {
	c.t.Helper()
	return c.Do("POST", path, v.Encode(), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
}

// Cookie is the UI session cookie the browser holds, or nil.
func (c *UIClient) Cookie() *http.Cookie {
	u, _ := url.Parse(c.base + "/ui/")
	for _, ck := range c.HTTP.Jar.Cookies(u) {
		if ck.Name == "mcpgw_ui" {
			return ck
		}
	}
	return nil
}

// CSRFMeta finds the CSRF token a UI page carries in its <meta> tag.
var CSRFMeta = regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)">`)

// Find is re's first submatch in body; it fails the test if re does not match.
func Find(t *testing.T, re *regexp.Regexp, body string) string {
	t.Helper()
	m := re.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("%v not in:\n%s", re, body)
	}
	return m[1]
}
