package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// ResourceMetadata is an MCP server's protected resource metadata (RFC 9728).
type ResourceMetadata struct {
	Resource             string   // the resource identifier: send it verbatim as resource
	AuthorizationServers []string // issuer identifiers
	ScopesSupported      []string
	URL                  string // where it was read
}

// ServerMetadata is an authorization server's metadata (RFC 8414, or OpenID Connect
// Discovery), or for a 2025-03-26 server without any, the endpoints that spec defaults to.
type ServerMetadata struct {
	Issuer                                     string
	AuthorizationEndpoint                      string
	TokenEndpoint                              string
	RegistrationEndpoint                       string
	ScopesSupported                            []string
	GrantTypesSupported                        []string
	CodeChallengeMethodsSupported              []string
	TokenEndpointAuthMethodsSupported          []string
	TokenEndpointAuthSigningAlgValuesSupported []string
	ClientIDMetadataDocumentSupported          bool
	// IssParameterSupported is authorization_response_iss_parameter_supported (RFC 9207):
	// the callback must then carry iss.
	IssParameterSupported bool
	URL                   string // where it was read; "" for defaulted endpoints
	// Defaulted marks the 2025-03-26 fallback: no metadata anywhere, endpoints guessed at
	// the server's origin. No PKCE support can be read, so none is demanded.
	Defaulted bool
}

// Discovery is what a client learns about an MCP server before registering.
type Discovery struct {
	// Resource is the RFC 8707 resource indicator to send at the authorization and token
	// endpoints: the metadata's resource exactly as published, or for a server without
	// protected resource metadata its canonical URI.
	Resource         string
	ResourceMetadata *ResourceMetadata // nil for a server without (MCP 2025-03-26)
	Server           *ServerMetadata
}

// Discover finds the authorization server of the MCP server at serverURL from the
// challenge of its 401 (ParseChallenge): the protected resource metadata, then the first
// authorization server's metadata. A server without protected resource metadata is treated
// as the 2025-03-26 spec says: metadata at its origin, else default endpoints there.
// Discover is not cached: after a 401 to a token that worked, call it again, since the
// server may have moved to another authorization server (register anew with that one).
func (c *Client) Discover(ctx context.Context, serverURL string, ch Challenge) (*Discovery, error) {
	su, err := c.checkURL("server URL", serverURL)
	if err != nil {
		return nil, err
	}
	prm, err := c.DiscoverResource(ctx, serverURL, ch.ResourceMetadata())
	switch {
	case err == nil:
		as, err := c.DiscoverServer(ctx, prm.AuthorizationServers[0])
		if err != nil {
			return nil, err
		}
		return &Discovery{Resource: prm.Resource, ResourceMetadata: prm, Server: as}, nil
	case !errors.Is(err, ErrNoResourceMetadata):
		return nil, err
	}
	resource, err := CanonicalResource(serverURL)
	if err != nil {
		return nil, err
	}
	as, err := c.discoverLegacyServer(ctx, origin(su))
	if errors.Is(err, ErrNoServerMetadata) {
		as, err = DefaultEndpoints(origin(su)), nil
	}
	if err != nil {
		return nil, err
	}
	return &Discovery{Resource: resource, Server: as}, nil
}

// DefaultEndpoints are the 2025-03-26 spec's endpoints for a server without metadata:
// /authorize, /token and /register at base (scheme://host).
func DefaultEndpoints(base string) *ServerMetadata {
	base = strings.TrimSuffix(base, "/")
	return &ServerMetadata{
		Issuer:                base,
		AuthorizationEndpoint: base + "/authorize",
		TokenEndpoint:         base + "/token",
		RegistrationEndpoint:  base + "/register",
		Defaulted:             true,
	}
}

// DiscoverResource reads the protected resource metadata of the MCP server at serverURL:
// from hint (a challenge's resource_metadata) if given, else from the path-aware
// well-known URL, else the root one (RFC 9728 §3.1, MCP discovery order). A 4xx moves on to
// the next URL; ErrNoResourceMetadata when all fail so. The metadata's resource must cover
// serverURL (ResourceMatches), else a *MismatchError and the document must not be used.
func (c *Client) DiscoverResource(ctx context.Context, serverURL, hint string) (*ResourceMetadata, error) {
	su, err := c.checkURL("server URL", serverURL)
	if err != nil {
		return nil, err
	}
	var urls []string
	if hint != "" {
		if _, err := c.checkURL("resource_metadata", hint); err != nil {
			return nil, err
		}
		urls = append(urls, hint)
	}
	if p := strings.TrimSuffix(su.EscapedPath(), "/"); p != "" {
		urls = append(urls, origin(su)+"/.well-known/oauth-protected-resource"+p)
	}
	urls = append(urls, origin(su)+"/.well-known/oauth-protected-resource")
	for _, u := range slices.Compact(urls) {
		prm, err := c.fetchResource(ctx, u)
		if notThere(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if !ResourceMatches(prm.Resource, serverURL) {
			return nil, &MismatchError{What: "resource", Want: serverURL, Got: prm.Resource}
		}
		return prm, nil
	}
	return nil, ErrNoResourceMetadata
}

func (c *Client) fetchResource(ctx context.Context, u string) (*ResourceMetadata, error) {
	obj, err := c.getObject(ctx, u)
	if err != nil {
		return nil, err
	}
	r := reader{obj: obj}
	prm := &ResourceMetadata{
		Resource:             r.str("resource"),
		AuthorizationServers: r.strs("authorization_servers"),
		ScopesSupported:      r.strs("scopes_supported"),
		URL:                  u,
	}
	switch {
	case r.err != nil:
		return nil, fmt.Errorf("protected resource metadata at %s: %w", u, r.err)
	case prm.Resource == "":
		return nil, fmt.Errorf("oauth: protected resource metadata at %s has no resource", u)
	case len(prm.AuthorizationServers) == 0:
		return nil, fmt.Errorf("oauth: protected resource metadata at %s names no authorization server", u)
	}
	return prm, nil
}

// DiscoverServer reads the metadata of the authorization server whose issuer identifier is
// issuer, trying the URLs of the MCP spec's order: for an issuer with a path, RFC 8414 path
// insertion, OpenID Connect path insertion, OpenID Connect path appending; without one,
// RFC 8414 then OpenID Connect. A 4xx moves on; ErrNoServerMetadata when all fail so. The
// document's issuer must be issuer exactly (RFC 8414 §3.3), else a *MismatchError at once.
func (c *Client) DiscoverServer(ctx context.Context, issuer string) (*ServerMetadata, error) {
	return c.discoverServer(ctx, issuer, func(got string) bool { return got == issuer })
}

// discoverLegacyServer is DiscoverServer for a 2025-03-26 server (one without protected
// resource metadata), whose authorization server the client knows only as base, the MCP
// server's origin: that revision sends it to base's /.well-known/oauth-authorization-server
// and names no issuer to expect. RFC 8414 §3.3 holds the document's issuer to the one its
// URL was built from, and the only one there is is the origin; what the revision leaves
// open is the issuer's path, since it puts the authorization server at that origin and
// says nothing of where under it. So the issuer may have a path (https://host/oauth), and
// nothing more: another origin, a query or a fragment is still a *MismatchError.
func (c *Client) discoverLegacyServer(ctx context.Context, base string) (*ServerMetadata, error) {
	return c.discoverServer(ctx, base, func(got string) bool {
		if got == base {
			return true
		}
		u, err := url.Parse(got)
		return err == nil && u.RawQuery == "" && u.Fragment == "" && !u.ForceQuery &&
			u.User == nil && origin(u) == base && strings.HasPrefix(u.EscapedPath(), "/")
	})
}

// discoverServer reads the metadata at the URLs built from issuer and takes the first one
// there whose issuer accept allows.
func (c *Client) discoverServer(ctx context.Context, issuer string, accept func(got string) bool) (*ServerMetadata, error) {
	iu, err := c.checkURL("issuer", issuer)
	if err != nil {
		return nil, err
	}
	if iu.RawQuery != "" {
		return nil, fmt.Errorf("oauth: issuer %q has a query", issuer)
	}
	for _, u := range serverMetadataURLs(iu) {
		as, err := c.fetchServer(ctx, u)
		if notThere(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if !accept(as.Issuer) {
			return nil, &MismatchError{What: "issuer", Want: issuer, Got: as.Issuer}
		}
		if err := c.checkEndpoints(as); err != nil {
			return nil, err
		}
		return as, nil
	}
	return nil, ErrNoServerMetadata
}

func serverMetadataURLs(iu *url.URL) []string {
	o := origin(iu)
	p := strings.TrimSuffix(iu.EscapedPath(), "/")
	if p == "" {
		return []string{
			o + "/.well-known/oauth-authorization-server",
			o + "/.well-known/openid-configuration",
		}
	}
	return []string{
		o + "/.well-known/oauth-authorization-server" + p,
		o + "/.well-known/openid-configuration" + p,
		o + p + "/.well-known/openid-configuration",
	}
}

func (c *Client) fetchServer(ctx context.Context, u string) (*ServerMetadata, error) {
	obj, err := c.getObject(ctx, u)
	if err != nil {
		return nil, err
	}
	r := reader{obj: obj}
	as := &ServerMetadata{
		Issuer:                                     r.str("issuer"),
		AuthorizationEndpoint:                      r.str("authorization_endpoint"),
		TokenEndpoint:                              r.str("token_endpoint"),
		RegistrationEndpoint:                       r.str("registration_endpoint"),
		ScopesSupported:                            r.strs("scopes_supported"),
		GrantTypesSupported:                        r.strs("grant_types_supported"),
		CodeChallengeMethodsSupported:              r.strs("code_challenge_methods_supported"),
		TokenEndpointAuthMethodsSupported:          r.strs("token_endpoint_auth_methods_supported"),
		TokenEndpointAuthSigningAlgValuesSupported: r.strs("token_endpoint_auth_signing_alg_values_supported"),
		ClientIDMetadataDocumentSupported:          r.boolean("client_id_metadata_document_supported"),
		IssParameterSupported:                      r.boolean("authorization_response_iss_parameter_supported"),
		URL:                                        u,
	}
	if r.err != nil {
		return nil, fmt.Errorf("authorization server metadata at %s: %w", u, r.err)
	}
	return as, nil
}

// checkEndpoints demands a token endpoint and acceptable URLs for every endpoint named.
func (c *Client) checkEndpoints(as *ServerMetadata) error {
	if as.TokenEndpoint == "" {
		return fmt.Errorf("oauth: authorization server metadata at %s has no token_endpoint", as.URL)
	}
	for what, u := range map[string]string{
		"authorization_endpoint": as.AuthorizationEndpoint,
		"token_endpoint":         as.TokenEndpoint,
		"registration_endpoint":  as.RegistrationEndpoint,
	} {
		if u == "" {
			continue
		}
		if _, err := c.checkURL(what, u); err != nil {
			return err
		}
	}
	return nil
}

// getObject GETs a JSON object: a 200 answer parsed strictly, an errStatus otherwise.
func (c *Client) getObject(ctx context.Context, u string) (object, error) {
	resp, err := c.get(ctx, u)
	if err != nil {
		return nil, err
	}
	if resp.status != 200 {
		return nil, fmt.Errorf("%s: %w", u, errStatus(resp.status))
	}
	obj, err := parseObject(resp.body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", u, err)
	}
	return obj, nil
}
