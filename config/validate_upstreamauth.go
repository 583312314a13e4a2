package config

import (
	"net/http"
	"net/url"
	"strings"
)

// validateUpstreamAuth checks servers.<name>.auth of every server, and
// upstream_credentials when a server uses it.
func validateUpstreamAuth(c *Config, ps *Problems) {
	for _, name := range sortedKeys(c.Servers) {
		d := c.Servers[name]
		if d == nil {
			continue
		}
		validateServerAuth(ps, "servers."+name+".auth", d, c.Auth.Mode)
	}
	if !HasUpstreamOAuth(c.Servers) {
		return
	}
	u := c.UpstreamCredentials
	if strings.HasPrefix(c.Store, "redis") || strings.HasPrefix(c.Store, "unix://") {
		if u.Keys == "" {
			*ps = append(*ps, Problem{Where: "upstream_credentials.keys",
				Text: "replicas sharing a Redis store must seal upstream tokens with the same key, and none is set",
				Hint: "set upstream_credentials.keys: ${MCPGW_UPSTREAM_KEYS} on every replica (32 random bytes, base64)"})
		}
	}
	if u.CallbackURL != "" {
		if p, err := url.Parse(u.CallbackURL); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || p.Fragment != "" {
			ps.add(false, "upstream_credentials.callback_url", "%q is not an absolute http(s) URL without a fragment", u.CallbackURL)
		}
	}
	if u.RefreshBefore < 0 || u.FlowTimeout < 0 {
		ps.add(false, "upstream_credentials", "refresh_before and flow_timeout must not be negative")
	}
}

// validateServerAuth checks one server's auth section.
func validateServerAuth(ps *Problems, where string, d *ServerDef, authMode string) {
	a := d.Auth
	switch a.Type {
	case "":
		if !emptyAuthExceptType(a) {
			ps.add(false, where, "settings without type: oauth do nothing (set type: oauth, or remove them)")
		}
		return
	case UpstreamAuthOAuth:
	default:
		ps.add(false, where+".type", "unknown type %q (oauth, or leave auth out for static headers only)", a.Type)
		return
	}
	switch d.Transport() {
	case TransportHTTP, TransportSSE:
	default:
		ps.add(false, where, "type oauth needs an HTTP upstream (type http or sse): a %s server is not reached over HTTP", d.Transport())
	}
	for k := range d.Headers {
		if http.CanonicalHeaderKey(k) == "Authorization" {
			ps.add(false, where, "headers.Authorization and auth type oauth both set the Authorization header; keep one")
		}
	}
	switch a.Per {
	case AuthPerServer:
	case AuthPerUser:
	default:
		ps.add(false, where+".per", "unknown per %q (user or server)", a.Per)
	}
	validateGrant(ps, where, d, authMode)
	if a.ClientSecret != "" && a.PrivateKey != "" {
		ps.add(false, where, "client_secret and private_key are two ways to authenticate the client; keep one")
	}
	if (a.ClientSecret != "" || a.PrivateKey != "") && a.ClientID == "" {
		ps.add(false, where, "a client secret or private key needs its client_id")
	}
	if a.ClientMetadataURL != "" {
		if p, err := url.Parse(a.ClientMetadataURL); err != nil || p.Scheme != "https" || p.Host == "" || p.Path == "" || p.Path == "/" {
			ps.add(false, where+".client_metadata_url", "%q is not an https URL with a path (a client ID metadata document's URL is the client's id)", a.ClientMetadataURL)
		}
	}
	for _, s := range a.Scopes {
		if s == "" || strings.ContainsAny(s, " \t\r\n\"\\") {
			ps.add(false, where+".scopes", "%q is not a scope token (no spaces, quotes or backslashes)", s)
		}
	}
}

// validateGrant checks the grant and what it needs.
func validateGrant(ps *Problems, where string, d *ServerDef, authMode string) {
	a := d.Auth
	switch a.Grant {
	case GrantAuthorizationCode:
	case GrantClientCredentials:
		if a.Per == AuthPerUser {
			ps.add(false, where, "grant client_credentials is a machine credential, one for every caller: it needs per: server")
		}
		if a.ClientID == "" || (a.ClientSecret == "" && a.PrivateKey == "") {
			ps.add(false, where, "grant client_credentials needs client_id and client_secret or private_key")
		}
	case GrantTokenExchange:
		validateTokenExchange(ps, where, a, authMode)
	default:
		ps.add(false, where+".grant", "unknown grant %q (authorization_code, client_credentials or token_exchange)", a.Grant)
	}
	if a.Grant != GrantTokenExchange && a.TokenExchange != nil {
		ps.add(false, where+".token_exchange", "token_exchange is only read with grant: token_exchange")
	}
	if a.Per == AuthPerUser && d.Pool != nil && d.Pool.Warm > 0 {
		ps.add(false, where, "per: user gives each instance one identity's token when it starts, so no instance can wait ready in a warm pool; remove pool.warm")
	}
	if a.Per == AuthPerUser && d.Mode == ModeShared {
		ps.add(false, where, "per: user gives each caller its own token, so its instances cannot be shared by every caller (mode shared); leave mode out or use per_agent or per_session")
	}
}

// emptyAuthExceptType reports whether a sets nothing but defaults filled in.
func emptyAuthExceptType(a UpstreamAuth) bool {
	return a.Per == "" && a.Grant == "" && a.ClientID == "" && a.ClientSecret == "" && a.ClientMetadataURL == "" &&
		a.PrivateKey == "" && len(a.Scopes) == 0 && a.TokenExchange == nil
}

// validateTokenExchange checks grant token_exchange and its service.
func validateTokenExchange(ps *Problems, where string, a UpstreamAuth, authMode string) {
	if a.Per == AuthPerServer {
		ps.add(false, where, "grant token_exchange exchanges each caller's own token: it needs per: user")
	}
	te := a.TokenExchange
	if te == nil || te.Endpoint == "" {
		ps.add(false, where+".token_exchange.endpoint", "grant token_exchange needs the security token service's token endpoint")
	} else if p, err := url.Parse(te.Endpoint); err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" {
		ps.add(false, where+".token_exchange.endpoint", "%q is not an absolute http(s) URL", te.Endpoint)
	}
	if authMode == "api_key" {
		ps.add(false, where, "grant token_exchange exchanges the caller's own token (Authorization: Bearer), and with auth.mode api_key that is mcpgw's own key: use auth.mode jwt or oauth, or none where callers bring their identity provider's token")
	}
	if te != nil {
		switch te.SubjectTokenType {
		case SubjectAccessToken, SubjectIDToken, SubjectJWT:
		default:
			ps.add(false, where+".token_exchange.subject_token_type", "unknown subject_token_type %q (access_token, id_token or jwt)", te.SubjectTokenType)
		}
		if te.IDJAG && (a.ClientID == "" || (a.ClientSecret == "" && a.PrivateKey == "")) {
			ps.add(false, where, "token_exchange.id_jag presents the identity assertion to the upstream's authorization server as the client client_id: it needs client_id and client_secret or private_key")
		}
	}
}
