package oauth

import (
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Grant types and token types this package sends.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantRefreshToken      = "refresh_token"
	GrantClientCredentials = "client_credentials"
	GrantJWTBearer         = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	GrantTokenExchange     = "urn:ietf:params:oauth:grant-type:token-exchange"

	TokenTypeIDToken = "urn:ietf:params:oauth:token-type:id_token"
	TokenTypeIDJAG   = "urn:ietf:params:oauth:token-type:id-jag"
)

// Token is what a token endpoint issued. Store all of it; String, GoString and LogValue
// never show the access or refresh token.
type Token struct {
	AccessToken  string
	TokenType    string    // "Bearer" (any case), "N_A" for an exchanged assertion, ...
	Expiry       time.Time // zero: the server did not say
	RefreshToken string
	Scopes       []string // granted; the requested ones when the server did not say
	// IssuedTokenType is RFC 8693's issued_token_type (token exchange only).
	IssuedTokenType string
}

func (t Token) String() string {
	exp := "unknown"
	if !t.Expiry.IsZero() {
		exp = t.Expiry.UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("oauth.Token{type=%s expiry=%s scope=%q access=%s refresh=%s}",
		t.TokenType, exp, strings.Join(t.Scopes, " "), redacted(t.AccessToken), redacted(t.RefreshToken))
}

func (t Token) GoString() string { return t.String() }

func (t Token) LogValue() slog.Value {
	return slog.GroupValue(slog.String("type", t.TokenType), slog.Time("expiry", t.Expiry),
		slog.String("scope", strings.Join(t.Scopes, " ")),
		slog.String("access", redacted(t.AccessToken)), slog.String("refresh", redacted(t.RefreshToken)))
}

// Fresh reports whether the token may still be used at now with margin to spare (a token
// without an expiry is fresh until a server refuses it).
func (t Token) Fresh(now time.Time, margin time.Duration) bool {
	return t.AccessToken != "" && (t.Expiry.IsZero() || now.Add(margin).Before(t.Expiry))
}

// AuthorizationHeader is the value of the Authorization header that presents the token:
// "DPoP <token>" for a DPoP-bound one (send a DPoPKey.Proof with it), else "Bearer <token>".
func (t Token) AuthorizationHeader() string {
	if strings.EqualFold(t.TokenType, "DPoP") {
		return "DPoP " + t.AccessToken
	}
	return "Bearer " + t.AccessToken
}

// Exchange redeems an authorization code (the value Pending.Callback returned) at the token
// endpoint recorded in p, with p's verifier, redirect URI and resource.
func (c *Client) Exchange(ctx context.Context, p Pending, cl ClientInfo, code string) (Token, error) {
	if err := sameIssuer(cl, p.Issuer); err != nil {
		return Token{}, err
	}
	form := url.Values{
		"grant_type":    {GrantAuthorizationCode},
		"code":          {code},
		"code_verifier": {p.Verifier},
		"redirect_uri":  {p.RedirectURI},
	}
	setNonEmpty(form, "resource", p.Resource)
	return c.requestToken(ctx, tokenCall{endpoint: p.TokenEndpoint, issuer: p.Issuer, client: cl,
		form: form, scopes: p.Scopes, secrets: []string{code, p.Verifier}})
}

// Refresh trades a refresh token for a new token, for resource (RFC 8707 §2.2) and, when
// given, a subset of the granted scopes. The result's RefreshToken is the one to keep: the
// server's rotated one, or refreshToken again when it sent none. Store it before using the
// new access token. A dead grant is a *TokenError for which errors.Is(err, ErrGrantRevoked).
func (c *Client) Refresh(ctx context.Context, as *ServerMetadata, cl ClientInfo, refreshToken, resource string, scopes []string) (Token, error) {
	if err := sameIssuer(cl, as.Issuer); err != nil {
		return Token{}, err
	}
	form := url.Values{"grant_type": {GrantRefreshToken}, "refresh_token": {refreshToken}}
	setNonEmpty(form, "resource", resource)
	setNonEmpty(form, "scope", strings.Join(scopes, " "))
	t, err := c.requestToken(ctx, tokenCall{endpoint: as.TokenEndpoint, issuer: as.Issuer, client: cl,
		form: form, scopes: scopes, secrets: []string{refreshToken}})
	if err == nil && t.RefreshToken == "" {
		t.RefreshToken = refreshToken
	}
	return t, err
}

// ClientCredentials gets a token for the client itself (OAuth 2.1 §4.2; the MCP
// client-credentials extension), authenticated by cl's method: client_secret_basic or a
// private_key_jwt assertion.
func (c *Client) ClientCredentials(ctx context.Context, as *ServerMetadata, cl ClientInfo, resource string, scopes []string) (Token, error) {
	if err := sameIssuer(cl, as.Issuer); err != nil {
		return Token{}, err
	}
	form := url.Values{"grant_type": {GrantClientCredentials}}
	setNonEmpty(form, "resource", resource)
	setNonEmpty(form, "scope", strings.Join(scopes, " "))
	return c.requestToken(ctx, tokenCall{endpoint: as.TokenEndpoint, issuer: as.Issuer, client: cl,
		form: form, scopes: scopes})
}

// JWTBearer presents an assertion as an authorization grant (RFC 7523 §2.1): an ID-JAG
// from RequestIDJAG, or a workload identity token.
func (c *Client) JWTBearer(ctx context.Context, as *ServerMetadata, cl ClientInfo, assertion, resource string, scopes []string) (Token, error) {
	if err := sameIssuer(cl, as.Issuer); err != nil {
		return Token{}, err
	}
	form := url.Values{"grant_type": {GrantJWTBearer}, "assertion": {assertion}}
	setNonEmpty(form, "resource", resource)
	setNonEmpty(form, "scope", strings.Join(scopes, " "))
	return c.requestToken(ctx, tokenCall{endpoint: as.TokenEndpoint, issuer: as.Issuer, client: cl,
		form: form, scopes: scopes, secrets: []string{assertion}})
}

// TokenExchangeRequest is an RFC 8693 token exchange.
type TokenExchangeRequest struct {
	SubjectToken       string
	SubjectTokenType   string
	RequestedTokenType string
	Audience           string
	Resource           string
	Scopes             []string
}

// TokenExchange performs an RFC 8693 token exchange at endpoint. issuer (the token
// endpoint's server, for a private_key_jwt audience) may be "".
func (c *Client) TokenExchange(ctx context.Context, endpoint, issuer string, cl ClientInfo, r TokenExchangeRequest) (Token, error) {
	form := url.Values{
		"grant_type":         {GrantTokenExchange},
		"subject_token":      {r.SubjectToken},
		"subject_token_type": {r.SubjectTokenType},
	}
	setNonEmpty(form, "requested_token_type", r.RequestedTokenType)
	setNonEmpty(form, "audience", r.Audience)
	setNonEmpty(form, "resource", r.Resource)
	setNonEmpty(form, "scope", strings.Join(r.Scopes, " "))
	return c.requestToken(ctx, tokenCall{endpoint: endpoint, issuer: issuer, client: cl,
		form: form, scopes: r.Scopes, secrets: []string{r.SubjectToken}})
}

// RequestIDJAG is the first leg of enterprise-managed authorization (SEP-990): at the
// enterprise IdP's token endpoint, exchange the user's ID token for an Identity Assertion
// JWT Authorization Grant meant for the authorization server audience (its issuer) and the
// MCP server resource. Present the result's AccessToken with JWTBearer.
func (c *Client) RequestIDJAG(ctx context.Context, idpTokenEndpoint string, idpClient ClientInfo, idToken, audience, resource string, scopes []string) (Token, error) {
	t, err := c.TokenExchange(ctx, idpTokenEndpoint, idpClient.Issuer, idpClient, TokenExchangeRequest{
		SubjectToken:       idToken,
		SubjectTokenType:   TokenTypeIDToken,
		RequestedTokenType: TokenTypeIDJAG,
		Audience:           audience,
		Resource:           resource,
		Scopes:             scopes,
	})
	if err != nil {
		return Token{}, err
	}
	if t.IssuedTokenType != "" && t.IssuedTokenType != TokenTypeIDJAG {
		return Token{}, fmt.Errorf("oauth: IdP issued %q, not an ID-JAG", t.IssuedTokenType)
	}
	return t, nil
}

// maxLifetime bounds the lifetime read from expires_in.
const maxLifetime = 10 * 365 * 24 * time.Hour

// tokenCall is one request to a token endpoint.
type tokenCall struct {
	endpoint string
	issuer   string // audience of a client assertion
	client   ClientInfo
	form     url.Values
	scopes   []string // requested, the granted ones when the answer says none
	secrets  []string // values of the request an error must not repeat
}

func (c *Client) requestToken(ctx context.Context, tc tokenCall) (Token, error) {
	if _, err := c.checkURL("token endpoint", tc.endpoint); err != nil {
		return Token{}, err
	}
	nonce := ""
	for attempt := 0; ; attempt++ {
		form := cloneValues(tc.form) // a fresh client assertion and proof per attempt
		hdr, err := c.authenticate(tc, form)
		if err != nil {
			return Token{}, err
		}
		if k := tc.client.DPoP; k != nil {
			proof, err := k.Proof(http.MethodPost, tc.endpoint, "", nonce, c.now())
			if err != nil {
				return Token{}, err
			}
			hdr.Set("DPoP", proof)
		}
		resp, err := c.post(ctx, tc.endpoint, "application/x-www-form-urlencoded", form.Encode(), hdr)
		if err != nil {
			return Token{}, err
		}
		if tc.client.DPoP != nil && attempt == 0 && isUseNonce(resp) {
			nonce = DPoPNonce(resp.header) // RFC 9449 §8: once more, with the server's nonce
			continue
		}
		if resp.status != 200 {
			secrets := append([]string{tc.client.Secret, form.Get("client_assertion")}, tc.secrets...)
			return Token{}, errorAnswer("token", resp, tc.form.Get("grant_type"), secrets...)
		}
		return c.readToken(resp.body, tc.scopes)
	}
}

func cloneValues(v url.Values) url.Values {
	out := make(url.Values, len(v))
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// authenticate adds the client's credentials to the form, or to the headers it returns.
func (c *Client) authenticate(tc tokenCall, form url.Values) (http.Header, error) {
	cl := tc.client
	hdr := http.Header{}
	switch cl.AuthMethod {
	case AuthBasic:
		// RFC 6749 §2.3.1: both halves form-encoded before the base64.
		pair := url.QueryEscape(cl.ID) + ":" + url.QueryEscape(cl.Secret)
		hdr.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(pair)))
	case AuthPost:
		form.Set("client_id", cl.ID)
		form.Set("client_secret", cl.Secret)
	case AuthPrivateJWT:
		aud := tc.issuer
		if aud == "" {
			aud = tc.endpoint
		}
		a, err := clientAssertion(cl, aud, c.now())
		if err != nil {
			return nil, err
		}
		form.Set("client_id", cl.ID)
		form.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
		form.Set("client_assertion", a)
	case AuthNone, "":
		if cl.ID != "" {
			form.Set("client_id", cl.ID)
		}
	default:
		return nil, fmt.Errorf("oauth: unsupported token endpoint auth method %q", cl.AuthMethod)
	}
	return hdr, nil
}

func (c *Client) readToken(body []byte, requested []string) (Token, error) {
	obj, err := parseObject(body)
	if err != nil {
		return Token{}, fmt.Errorf("token answer: %w", err)
	}
	r := reader{obj: obj}
	t := Token{
		AccessToken:     r.str("access_token"),
		TokenType:       r.str("token_type"),
		RefreshToken:    r.str("refresh_token"),
		Scopes:          strings.Fields(r.str("scope")),
		IssuedTokenType: r.str("issued_token_type"),
	}
	secs, ok, err := obj.number("expires_in")
	r.keep(err)
	switch {
	case r.err != nil:
		return Token{}, fmt.Errorf("token answer: %w", r.err)
	case t.AccessToken == "":
		return Token{}, fmt.Errorf("oauth: token answer has no access_token")
	case t.TokenType == "":
		return Token{}, fmt.Errorf("oauth: token answer has no token_type")
	}
	if ok && secs > 0 {
		secs = min(secs, maxLifetime.Seconds()) // a huge expires_in must not overflow
		t.Expiry = c.now().Add(time.Duration(secs * float64(time.Second)))
	}
	if _, said := obj["scope"]; !said {
		t.Scopes = append([]string(nil), requested...)
	}
	return t, nil
}

// sameIssuer refuses a client registered with another authorization server (SEP-2352:
// credentials are not portable between servers).
func sameIssuer(cl ClientInfo, issuer string) error {
	if cl.Issuer != "" && issuer != "" && cl.Issuer != issuer {
		return &MismatchError{What: "client issuer", Want: issuer, Got: cl.Issuer}
	}
	return nil
}

func setNonEmpty(v url.Values, k, s string) {
	if s != "" {
		v.Set(k, s)
	}
}
