package oauth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
)

// AuthRequest is what NewAuthorization needs to send a user to the authorization endpoint.
type AuthRequest struct {
	Server      *ServerMetadata
	Client      ClientInfo
	RedirectURI string
	Resource    string   // Discovery.Resource
	Scopes      []string // SelectScopes or StepUp; none: the scope parameter is left out
}

// Pending is an authorization in flight: store it (keyed by State) until the callback,
// then pass the callback's query to Callback and the code to Client.Exchange. String,
// GoString and LogValue never show the verifier or the state.
type Pending struct {
	State         string
	Verifier      string // the PKCE code verifier
	RedirectURI   string
	Resource      string
	Scopes        []string
	ClientID      string
	Issuer        string // the authorization server's, compared with the callback's iss
	IssRequired   bool   // the server advertised authorization_response_iss_parameter_supported
	TokenEndpoint string
}

func (p Pending) String() string {
	return fmt.Sprintf("oauth.Pending{issuer=%q client=%q resource=%q scope=%q state=%s verifier=%s}",
		p.Issuer, p.ClientID, p.Resource, strings.Join(p.Scopes, " "), redacted(p.State), redacted(p.Verifier))
}

func (p Pending) GoString() string { return p.String() }

func (p Pending) LogValue() slog.Value {
	return slog.GroupValue(slog.String("issuer", p.Issuer), slog.String("client", p.ClientID),
		slog.String("resource", p.Resource), slog.String("scope", strings.Join(p.Scopes, " ")))
}

// NewAuthorization builds the authorization URL (OAuth 2.1 §4.1.1 with PKCE S256, a fresh
// state, RFC 8707 resource and the scopes) and the Pending flow to store until the
// callback. It refuses a server that does not list S256 (ErrPKCEUnsupported; the 2025-03-26
// default endpoints excepted) and a client registered with another server.
func NewAuthorization(r AuthRequest) (string, Pending, error) {
	as := r.Server
	if as == nil || as.AuthorizationEndpoint == "" {
		return "", Pending{}, fmt.Errorf("oauth: authorization server has no authorization_endpoint")
	}
	if !as.Defaulted && !slices.Contains(as.CodeChallengeMethodsSupported, "S256") {
		return "", Pending{}, ErrPKCEUnsupported
	}
	if err := sameIssuer(r.Client, as.Issuer); err != nil {
		return "", Pending{}, err
	}
	if r.Client.ID == "" || r.RedirectURI == "" {
		return "", Pending{}, fmt.Errorf("oauth: authorization needs a client_id and a redirect URI")
	}
	u, err := url.Parse(as.AuthorizationEndpoint)
	if err != nil {
		return "", Pending{}, fmt.Errorf("oauth: bad authorization_endpoint %q", as.AuthorizationEndpoint)
	}
	p := Pending{
		State:         randomString(),
		Verifier:      randomString(),
		RedirectURI:   r.RedirectURI,
		Resource:      r.Resource,
		Scopes:        slices.Clone(r.Scopes),
		ClientID:      r.Client.ID,
		Issuer:        as.Issuer,
		IssRequired:   as.IssParameterSupported,
		TokenEndpoint: as.TokenEndpoint,
	}
	q := u.Query()
	q.Set("response_type", "code")
	q.Set("client_id", r.Client.ID)
	q.Set("redirect_uri", r.RedirectURI)
	q.Set("state", p.State)
	q.Set("code_challenge", CodeChallenge(p.Verifier))
	q.Set("code_challenge_method", "S256")
	setNonEmpty(q, "resource", r.Resource)
	setNonEmpty(q, "scope", strings.Join(r.Scopes, " "))
	u.RawQuery = q.Encode()
	return u.String(), p, nil
}

// CodeChallenge is the S256 challenge of a verifier: BASE64URL(SHA256(verifier)).
func CodeChallenge(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// randomString is 256 random bits, base64url: 43 characters, a valid PKCE verifier.
func randomString() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (it crashes the program instead)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Callback checks the query of the request that reached the redirect URI and returns the
// code. In order: the state must be p's (ErrStateMismatch); the iss parameter (RFC 9207)
// must be p's issuer exactly when present, and present when the server advertised it (a
// *MismatchError); an error answer becomes an *AuthorizationError; then the code. A
// parameter given twice is refused. After an error, the code must not be sent anywhere.
func (p Pending) Callback(q url.Values) (string, error) {
	for _, k := range []string{"state", "iss", "code", "error"} {
		if len(q[k]) > 1 {
			return "", fmt.Errorf("oauth: callback repeats the %s parameter", k)
		}
	}
	state := q.Get("state")
	if p.State == "" || subtle.ConstantTimeCompare([]byte(state), []byte(p.State)) != 1 {
		return "", ErrStateMismatch
	}
	if iss, ok := q["iss"]; ok {
		if iss[0] != p.Issuer {
			return "", &MismatchError{What: "iss", Want: p.Issuer, Got: iss[0]}
		}
	} else if p.IssRequired {
		return "", &MismatchError{What: "iss", Want: p.Issuer}
	}
	if e := q.Get("error"); e != "" {
		return "", &AuthorizationError{Code: scrub(e), Description: scrub(q.Get("error_description"))}
	}
	code := q.Get("code")
	if code == "" {
		return "", fmt.Errorf("oauth: callback has no code")
	}
	return code, nil
}
