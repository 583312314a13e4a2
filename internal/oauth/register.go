package oauth

import (
	"context"
	"crypto"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"time"
)

// Token endpoint authentication methods (RFC 7591 §2, RFC 7523).
const (
	AuthBasic      = "client_secret_basic"
	AuthPost       = "client_secret_post"
	AuthNone       = "none"
	AuthPrivateJWT = "private_key_jwt"
)

// How a ClientInfo came to be.
const (
	RegisteredByHand     = "preregistered"
	RegisteredByDocument = "metadata-document" // a Client ID Metadata Document URL
	RegisteredDynamic    = "dynamic"           // RFC 7591
)

// ClientInfo is this client as one authorization server knows it. It belongs to that
// server only: after the MCP server moves to another authorization server, register again
// and never present these credentials there.
type ClientInfo struct {
	Issuer     string // the authorization server's issuer; "" for a pre-registered client valid anywhere
	ID         string
	Secret     string
	AuthMethod string // AuthBasic, AuthPost, AuthNone or AuthPrivateJWT
	// SigningKey and SigningAlg sign private_key_jwt client assertions (RFC 7523 §2.2);
	// SigningAlg "" is chosen from the key (ES256 for P-256, RS256 for RSA, EdDSA).
	SigningKey      crypto.Signer
	SigningAlg      string
	KeyID           string
	SecretExpiresAt time.Time // zero: does not expire
	// DPoP, when set, binds the tokens issued to this client to the key (RFC 9449).
	DPoP         *DPoPKey
	RegisteredBy string // RegisteredByHand, RegisteredByDocument or RegisteredDynamic
}

// String, GoString and LogValue never show the secret or the key.
func (c ClientInfo) String() string {
	return fmt.Sprintf("oauth.ClientInfo{issuer=%q id=%q auth=%s secret=%s registered=%s}",
		c.Issuer, c.ID, c.AuthMethod, redacted(c.Secret), c.RegisteredBy)
}

func (c ClientInfo) GoString() string { return c.String() }

func (c ClientInfo) LogValue() slog.Value {
	return slog.GroupValue(slog.String("issuer", c.Issuer), slog.String("id", c.ID),
		slog.String("auth", c.AuthMethod), slog.String("secret", redacted(c.Secret)),
		slog.String("registered", c.RegisteredBy))
}

func redacted(s string) string {
	if s == "" {
		return "none"
	}
	return "[redacted]"
}

// RegisterOptions say how this client may register.
type RegisterOptions struct {
	// Preregistered is used first when set and its Issuer is "" or the server's.
	Preregistered *ClientInfo
	// MetadataDocumentURL is the https URL of this client's Client ID Metadata Document,
	// used as client_id where the server says client_id_metadata_document_supported.
	MetadataDocumentURL string
	// For dynamic registration (RFC 7591):
	ClientName   string
	RedirectURIs []string
	// GrantTypes defaults to authorization_code and refresh_token (a client that wants
	// refresh tokens says so, SEP-2207).
	GrantTypes []string
	// ApplicationType is "web" or "native" (SEP-837); "" picks web when every redirect URI
	// is https to a non-loopback host, native otherwise.
	ApplicationType string
}

// Register returns the client to use with the authorization server as, in the MCP spec's
// order: the pre-registered client, else a Client ID Metadata Document URL, else dynamic
// registration. ErrNoRegistration when none applies.
func (c *Client) Register(ctx context.Context, as *ServerMetadata, opts RegisterOptions) (ClientInfo, error) {
	if p := opts.Preregistered; p != nil && (p.Issuer == "" || p.Issuer == as.Issuer) {
		cl := *p
		cl.Issuer = as.Issuer
		cl.RegisteredBy = RegisteredByHand
		if cl.AuthMethod == "" {
			cl.AuthMethod = ChooseAuthMethod(as.TokenEndpointAuthMethodsSupported, cl.Secret != "", cl.SigningKey != nil)
		}
		return cl, nil
	}
	if as.ClientIDMetadataDocumentSupported && opts.MetadataDocumentURL != "" {
		if u, err := url.Parse(opts.MetadataDocumentURL); err != nil || u.Scheme != "https" || u.Path == "" || u.Path == "/" {
			return ClientInfo{}, fmt.Errorf("oauth: client metadata document URL must be https with a path: %q", opts.MetadataDocumentURL)
		}
		return ClientInfo{Issuer: as.Issuer, ID: opts.MetadataDocumentURL, AuthMethod: AuthNone,
			RegisteredBy: RegisteredByDocument}, nil
	}
	if as.RegistrationEndpoint != "" {
		return c.registerDynamic(ctx, as, opts)
	}
	return ClientInfo{}, ErrNoRegistration
}

// ChooseAuthMethod picks how to authenticate at the token endpoint from what the server
// supports: private_key_jwt with a key, else client_secret_basic, else client_secret_post
// with a secret, else none. An empty list means RFC 8414's default, client_secret_basic.
func ChooseAuthMethod(supported []string, hasSecret, hasKey bool) string {
	if len(supported) == 0 {
		if hasSecret {
			return AuthBasic
		}
		return AuthNone
	}
	var prefs []string
	if hasKey {
		prefs = append(prefs, AuthPrivateJWT)
	}
	if hasSecret {
		prefs = append(prefs, AuthBasic, AuthPost)
	}
	prefs = append(prefs, AuthNone)
	for _, m := range prefs {
		if slices.Contains(supported, m) {
			return m
		}
	}
	if hasSecret {
		return AuthBasic
	}
	return AuthNone
}

func (c *Client) registerDynamic(ctx context.Context, as *ServerMetadata, opts RegisterOptions) (ClientInfo, error) {
	if _, err := c.checkURL("registration endpoint", as.RegistrationEndpoint); err != nil {
		return ClientInfo{}, err
	}
	grants := opts.GrantTypes
	if len(grants) == 0 {
		grants = []string{"authorization_code", "refresh_token"}
	}
	appType := opts.ApplicationType
	if appType == "" {
		appType = applicationType(opts.RedirectURIs)
	}
	name := opts.ClientName
	if name == "" {
		name = "mcpgw"
	}
	want := ChooseAuthMethod(as.TokenEndpointAuthMethodsSupported, true, false)
	body, err := json.Marshal(map[string]any{
		"client_name":                name,
		"redirect_uris":              opts.RedirectURIs,
		"grant_types":                grants,
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": want,
		"application_type":           appType,
	})
	if err != nil {
		return ClientInfo{}, fmt.Errorf("oauth: registration request: %w", err)
	}
	resp, err := c.post(ctx, as.RegistrationEndpoint, "application/json", string(body), nil)
	if err != nil {
		return ClientInfo{}, err
	}
	if resp.status != 200 && resp.status != 201 {
		return ClientInfo{}, errorAnswer("registration", resp, "")
	}
	return c.readRegistration(as, resp.body)
}

func (c *Client) readRegistration(as *ServerMetadata, body []byte) (ClientInfo, error) {
	obj, err := parseObject(body)
	if err != nil {
		return ClientInfo{}, fmt.Errorf("registration answer: %w", err)
	}
	r := reader{obj: obj}
	cl := ClientInfo{
		Issuer:       as.Issuer,
		ID:           r.str("client_id"),
		Secret:       r.str("client_secret"),
		AuthMethod:   r.str("token_endpoint_auth_method"),
		RegisteredBy: RegisteredDynamic,
	}
	exp, ok, err := obj.number("client_secret_expires_at")
	r.keep(err)
	if r.err != nil {
		return ClientInfo{}, fmt.Errorf("registration answer: %w", r.err)
	}
	if cl.ID == "" {
		return ClientInfo{}, fmt.Errorf("oauth: registration answer has no client_id")
	}
	if ok && exp > 0 {
		cl.SecretExpiresAt = time.Unix(int64(exp), 0)
	}
	if cl.AuthMethod == "" {
		cl.AuthMethod = ChooseAuthMethod(as.TokenEndpointAuthMethodsSupported, cl.Secret != "", false)
	}
	return cl, nil
}

func applicationType(redirects []string) string {
	if len(redirects) == 0 {
		return "native"
	}
	for _, r := range redirects {
		u, err := url.Parse(r)
		if err != nil || u.Scheme != "https" || isLoopback(u.Hostname()) {
			return "native"
		}
	}
	return "web"
}

// errorAnswer turns a non-success answer into an error: the OAuth error object's code and
// scrubbed description when the body is one, the status alone otherwise.
func errorAnswer(endpoint string, resp *response, grant string, secrets ...string) error {
	te := &TokenError{Endpoint: endpoint, Status: resp.status, grant: grant}
	if obj, err := parseObject(resp.body); err == nil {
		code, _ := obj.str("error")
		desc, _ := obj.str("error_description")
		te.Code = scrub(code, secrets...)
		te.Description = scrub(desc, secrets...)
	}
	return te
}
