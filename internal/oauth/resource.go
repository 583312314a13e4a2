package oauth

import (
	"net/url"
	"strings"
)

// CanonicalResource is the canonical URI of an MCP server (RFC 8707 §2, MCP "canonical
// server URI"): the URL with scheme and host lower-cased and no fragment, the path kept as
// given (no slash added). It is the resource to send when the server publishes no
// protected resource metadata; when it does, send the metadata's resource verbatim.
func CanonicalResource(serverURL string) (string, error) {
	u, err := url.Parse(serverURL)
	if err != nil || u.Host == "" || u.Scheme == "" {
		return "", &MismatchError{What: "resource", Want: "an absolute URL", Got: serverURL}
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	u.Fragment, u.RawFragment = "", ""
	return u.String(), nil
}

// ResourceMatches reports whether a protected resource metadata's resource may stand for
// the server at serverURL (RFC 9728 §3.3, MCP resource-parameter rules): the same scheme,
// host and port, no fragment, and a path that is the server's or a parent of it on a
// segment boundary ("https://h/" and "https://h/mcp" both cover "https://h/mcp";
// "https://h/m" does not).
func ResourceMatches(resource, serverURL string) bool {
	r, err1 := url.Parse(resource)
	s, err2 := url.Parse(serverURL)
	if err1 != nil || err2 != nil || r.Host == "" || r.Fragment != "" || r.User != nil {
		return false
	}
	if !strings.EqualFold(r.Scheme, s.Scheme) || hostPort(r) != hostPort(s) {
		return false
	}
	if r.RawQuery != "" && r.RawQuery != s.RawQuery {
		return false
	}
	rp := strings.TrimSuffix(r.EscapedPath(), "/")
	sp := strings.TrimSuffix(s.EscapedPath(), "/")
	return rp == "" || sp == rp || strings.HasPrefix(sp, rp+"/")
}

// hostPort is the host lower-cased with the scheme's default port made explicit.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return strings.ToLower(u.Hostname()) + ":" + port
}

// origin is scheme://host of a URL, the 2025-03-26 spec's "authorization base URL".
func origin(u *url.URL) string {
	return strings.ToLower(u.Scheme) + "://" + u.Host
}
