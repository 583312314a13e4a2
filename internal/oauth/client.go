package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client carries what every exchange with a server needs. The zero value works: it uses
// http.DefaultClient, caps bodies at 1 MiB, follows up to 3 same-host redirects on GETs and
// accepts plain http only to loopback hosts.
//
// The package holds no state of its own: every call takes a context and the values it works on
// (metadata, client, pending flow, token), and the caller stores what it returns. One flow:
//
//	ch := oauth.ParseChallenge(resp.Header)               // the upstream's 401
//	d, err := c.Discover(ctx, serverURL, ch)              // PRM, then AS metadata
//	cl, err := c.Register(ctx, d.Server, opts)            // pre-registered, CIMD or DCR
//	scopes := oauth.SelectScopes(ch, d.ResourceMetadata, d.Server, true)
//	u, p, err := oauth.NewAuthorization(oauth.AuthRequest{Server: d.Server, Client: cl,
//		RedirectURI: cb, Resource: d.Resource, Scopes: scopes}) // send the user to u; store p
//	code, err := p.Callback(query)                        // state, iss and error checks
//	tok, err := c.Exchange(ctx, p, cl, code)              // code + verifier + resource
//	tok, err = c.Refresh(ctx, d.Server, cl, tok.RefreshToken, d.Resource, nil)
//
// A 403 insufficient_scope is answered with StepUp and a new authorization; a client is
// kept per issuer (ClientInfo.Issuer) and never shown to another authorization server.
// Without a user: ClientCredentials, JWTBearer, and RequestIDJAG for enterprise-managed
// authorization. ClientInfo.DPoP binds tokens to a key (RFC 9449).
//
// Every document is read with exact, unique member names and a size cap; redirects are
// followed only for metadata GETs and only on the same host; plain http only to loopback
// unless Client.AllowHTTP. Errors and the String forms of Token, ClientInfo and Pending
// never contain a token, code, secret or verifier.
type Client struct {
	// HTTP sends the requests; nil means http.DefaultClient. Its CheckRedirect is replaced
	// by this package's rule on a copy; its Transport and Timeout are kept.
	HTTP *http.Client
	// MaxBody caps every response body read; 0 means 1 MiB.
	MaxBody int64
	// MaxRedirects bounds the redirects a metadata GET follows (same scheme and host
	// only); 0 means 3, negative means none. Token and registration POSTs never follow one.
	MaxRedirects int
	// AllowHTTP accepts http:// URLs to any host; without it only loopback hosts may be
	// reached without TLS (a token or secret sent in clear is a token or secret given away).
	AllowHTTP bool
	// Now is the clock for token expiry; nil means time.Now.
	Now func() time.Time
}

const defaultMaxBody = 1 << 20

func (c *Client) maxBody() int64 {
	if c.MaxBody > 0 {
		return c.MaxBody
	}
	return defaultMaxBody
}

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// httpClient is a copy of the caller's client with the redirect rule for one request
// kind: follow is the number of same-host redirects allowed (0: none).
func (c *Client) httpClient(follow int) *http.Client {
	base := http.DefaultClient
	if c.HTTP != nil {
		base = c.HTTP
	}
	hc := *base
	hc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > follow {
			return fmt.Errorf("oauth: more than %d redirects", follow)
		}
		first := via[0].URL
		if !strings.EqualFold(req.URL.Scheme, first.Scheme) || !strings.EqualFold(req.URL.Host, first.Host) {
			return fmt.Errorf("oauth: redirect from %s to another host %s refused", first.Host, req.URL.Host)
		}
		return nil
	}
	return &hc
}

func (c *Client) getFollow() int {
	switch {
	case c.MaxRedirects < 0:
		return 0
	case c.MaxRedirects == 0:
		return 3
	}
	return c.MaxRedirects
}

// checkURL accepts an absolute https URL, or http when allowed (AllowHTTP, or a loopback
// host). what names the URL in the error.
func (c *Client) checkURL(what, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("oauth: %s is not an absolute URL: %q", what, raw)
	}
	if u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("oauth: %s must have no fragment or user info: %q", what, raw)
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return u, nil
	case "http":
		if c.AllowHTTP || isLoopback(u.Hostname()) {
			return u, nil
		}
		return nil, fmt.Errorf("oauth: %s must use https: %q", what, raw)
	}
	return nil, fmt.Errorf("oauth: %s has an unsupported scheme: %q", what, raw)
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// response is what a bounded exchange read back.
type response struct {
	status int
	header http.Header
	body   []byte
}

// get fetches a metadata document.
func (c *Client) get(ctx context.Context, rawURL string) (*response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, fmt.Errorf("oauth: bad URL %q", rawURL)
	}
	req.Header.Set("Accept", "application/json")
	return c.do(req, c.getFollow())
}

// post sends a form or JSON body; it never follows a redirect, which would carry client
// credentials or a code somewhere the metadata did not name.
func (c *Client) post(ctx context.Context, rawURL, contentType, body string, hdr http.Header) (*response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rawURL, strings.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("oauth: bad URL %q", rawURL)
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/json")
	return c.do(req, 0)
}

func (c *Client) do(req *http.Request, follow int) (*response, error) {
	resp, err := c.httpClient(follow).Do(req)
	if err != nil {
		// A *url.Error names the method and URL; neither carries a secret (bodies do).
		return nil, fmt.Errorf("oauth: %w", err)
	}
	defer resp.Body.Close()
	limit := c.maxBody()
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("oauth: reading %s: %w", req.URL.Redacted(), err)
	}
	if int64(len(body)) > limit {
		return nil, fmt.Errorf("%w: %s answered more than %d bytes", ErrBodyTooLarge, req.URL.Redacted(), limit)
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: body}, nil
}

// errStatus says a metadata URL gave no document.
type errStatus int

func (e errStatus) Error() string { return fmt.Sprintf("oauth: HTTP status %d", int(e)) }

// notThere reports whether a metadata fetch error means "try the next URL": a 4xx answer.
func notThere(err error) bool {
	var s errStatus
	return errors.As(err, &s) && int(s) >= 400 && int(s) < 500
}
