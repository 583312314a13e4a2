package config

import "time"

// UpstreamAuth is servers.<name>.auth: how mcpgw authenticates to the upstream beyond its
// static headers (docs/auth.md, "Upstream authorization"). The zero value is none.
type UpstreamAuth struct {
	// Type is "" (none: static headers only) or oauth: mcpgw is an OAuth 2.1 client of the
	// server, discovering its authorization server from the server itself.
	Type string `yaml:"type"`
	// Per is whose grant a call uses: user (default: each caller identity authorizes once
	// and its calls carry its own token) or server (one grant for every caller: a machine
	// credential, or an authorization an admin made once).
	Per string `yaml:"per"`
	// Grant is how a token is obtained: authorization_code (default: a person consents in
	// a browser), client_credentials (a machine credential; per server only),
	// token_exchange (RFC 8693: the caller's own token exchanged at a security token
	// service; per user only).
	Grant string `yaml:"grant"`
	// ClientID and ClientSecret are credentials registered with the authorization server
	// beforehand; without them mcpgw uses ClientMetadataURL where the server supports
	// client ID metadata documents, else dynamic client registration.
	ClientID     string `yaml:"client_id"`
	ClientSecret string `yaml:"client_secret"`
	// ClientMetadataURL is the https URL of mcpgw's client ID metadata document.
	ClientMetadataURL string `yaml:"client_metadata_url"`
	// PrivateKey is a PEM private key (PKCS#8, EC P-256 or RSA) for private_key_jwt client
	// authentication, instead of a client secret.
	PrivateKey string `yaml:"private_key"`
	// Scopes are asked for in addition to those the server names.
	Scopes []string `yaml:"scopes"`
	// TokenExchange is the security token service of grant token_exchange.
	TokenExchange *TokenExchangeDef `yaml:"token_exchange"`
}

// TokenExchangeDef is the security token service a caller's token is exchanged at for a
// token of the upstream's audience (RFC 8693).
type TokenExchangeDef struct {
	// Endpoint is the service's token endpoint.
	Endpoint string `yaml:"endpoint"`
	// Audience is the audience asked for (default: the upstream's authorization server).
	Audience string `yaml:"audience"`
	// ClientID and ClientSecret authenticate mcpgw at the service, when it asks.
	ClientID     string `yaml:"client_id"`
	ClientSecret string `yaml:"client_secret"`
	// SubjectTokenType is what the caller's token is: access_token (default), id_token or
	// jwt (RFC 8693 token type URIs, by their last word).
	SubjectTokenType string `yaml:"subject_token_type"`
	// IDJAG asks the service for an identity assertion (ID-JAG) instead of a token, and
	// presents it to the upstream's own authorization server (RFC 7523 jwt-bearer, with
	// the server's client_id and secret): enterprise-managed authorization.
	IDJAG bool `yaml:"id_jag"`
}

// Subject token types of token_exchange.subject_token_type.
const (
	SubjectAccessToken = "access_token"
	SubjectIDToken     = "id_token"
	SubjectJWT         = "jwt"
)

// Upstream authorization types, scopes and grants.
const (
	UpstreamAuthOAuth = "oauth"

	AuthPerUser   = "user"
	AuthPerServer = "server"

	GrantAuthorizationCode = "authorization_code"
	GrantClientCredentials = "client_credentials"
	GrantTokenExchange     = "token_exchange"
)

// OAuth reports whether mcpgw is an OAuth client of the server.
func (a UpstreamAuth) OAuth() bool { return a.Type == UpstreamAuthOAuth }

// PerUser reports whether each caller identity has its own grant at the server.
func (a UpstreamAuth) PerUser() bool { return a.OAuth() && a.Per == AuthPerUser }

// UpstreamCredentials is upstream_credentials: how the tokens mcpgw holds for its
// upstreams are kept and how a person's consent comes back to it.
type UpstreamCredentials struct {
	// Keys seal tokens at rest (AES-256-GCM): comma-separated base64 32-byte keys, the
	// first sealing and every one opening (rotation: put the new key first, keep the old
	// until every token was rewritten). Default: $MCPGW_UPSTREAM_KEYS, else a key file in
	// the state directory (one machine only: replicas need the same key).
	Keys string `yaml:"keys"`
	// CallbackURL is where authorization servers send a person back to: this gateway's
	// /oauth/callback as the browser reaches it (default: from listen, on loopback).
	CallbackURL string `yaml:"callback_url"`
	// RefreshBefore is how long before its expiry a token is refreshed (default 2m).
	RefreshBefore time.Duration `yaml:"refresh_before"`
	// FlowTimeout bounds how long a started authorization waits for its callback
	// (default 10m).
	FlowTimeout time.Duration `yaml:"flow_timeout"`
}

// Upstream credential defaults.
const (
	DefaultRefreshBefore = 2 * time.Minute
	DefaultFlowTimeout   = 10 * time.Minute
	// CallbackPath is the gateway's path authorization servers redirect to.
	CallbackPath = "/oauth/callback"
	// ConsentPath is the gateway's consent page, before an authorization's state: it
	// asks for the confirmation code and sends the browser on to the authorization server.
	ConsentPath = "/oauth/consent/"
)

// applyUpstreamAuthDefaults fills per and grant of every OAuth server, and the credential
// settings' durations and callback URL.
func applyUpstreamAuthDefaults(c *Config) {
	for _, d := range c.Servers {
		if d == nil || !d.Auth.OAuth() {
			continue
		}
		if d.Auth.Grant == "" {
			d.Auth.Grant = GrantAuthorizationCode
		}
		if te := d.Auth.TokenExchange; te != nil && te.SubjectTokenType == "" {
			te.SubjectTokenType = SubjectAccessToken
		}
		if d.Auth.Per == "" {
			d.Auth.Per = AuthPerUser
			if d.Auth.Grant == GrantClientCredentials {
				d.Auth.Per = AuthPerServer
			}
		}
	}
	u := &c.UpstreamCredentials
	if u.RefreshBefore == 0 {
		u.RefreshBefore = DefaultRefreshBefore
	}
	if u.FlowTimeout == 0 {
		u.FlowTimeout = DefaultFlowTimeout
	}
	if u.CallbackURL == "" && c.Listen != "" {
		u.CallbackURL = "http://" + c.Listen + CallbackPath
	}
}

// HasUpstreamOAuth reports whether any server of servers has mcpgw as its OAuth client.
func HasUpstreamOAuth(servers map[string]*ServerDef) bool {
	for _, d := range servers {
		if d != nil && d.Auth.OAuth() {
			return true
		}
	}
	return false
}
