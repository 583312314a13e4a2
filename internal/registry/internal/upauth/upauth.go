// Package upauth keeps the tokens mcpgw obtains as the OAuth client of its upstreams, per
// identity: authorizations started and completed, tokens sealed, refreshed once per replica set.
package upauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/oauth"
	"github.com/mcpgw/mcpgw/internal/sealbox"
	"github.com/mcpgw/mcpgw/internal/store"
)

// Store is what the manager keeps its records in: the session store's credential records
// and its lock, which every replica sharing the store shares.
type Store interface {
	PutCredential(c *store.Credential, rev int64) (int64, error)
	GetCredential(kind, server, subject string) (*store.Credential, error)
	DeleteCredential(kind, server, subject string) error
	TakeCredential(kind, server, subject string) (*store.Credential, error)
	ListCredentials(kind string) ([]*store.Credential, error)
	Lock(ctx context.Context, name string, ttl time.Duration) (unlock func(), err error)
}

// Server is an upstream mcpgw authenticates to as an OAuth client.
type Server struct {
	Name string
	URL  string // the MCP endpoint
	Auth config.UpstreamAuth
}

// SubjectOf is whose grant a call of subject uses at s: its own, or the server's one.
func (s Server) SubjectOf(subject string) string {
	if s.Auth.Per == config.AuthPerServer {
		return ""
	}
	return subject
}

// Options configure a Manager.
type Options struct {
	Store Store
	Ring  *sealbox.Ring
	// HTTP reaches authorization servers and probes upstreams (nil: http.DefaultClient).
	HTTP *http.Client
	// AllowHTTP lets authorization servers be reached over plain http beyond loopback.
	AllowHTTP bool
	// CallbackURL is the redirect URI: this gateway's /oauth/callback.
	CallbackURL   string
	RefreshBefore time.Duration
	FlowTimeout   time.Duration
	// ClientName is the name mcpgw registers under.
	ClientName string
	Now        func() time.Time
}

// Manager obtains, keeps and refreshes upstream tokens.
type Manager struct {
	o       Options
	oc      *oauth.Client
	callers callerTokens
}

// New returns a manager over o's store and key ring.
func New(o Options) *Manager {
	if o.HTTP == nil {
		o.HTTP = http.DefaultClient
	}
	if o.RefreshBefore == 0 {
		o.RefreshBefore = config.DefaultRefreshBefore
	}
	if o.FlowTimeout == 0 {
		o.FlowTimeout = config.DefaultFlowTimeout
	}
	if o.ClientName == "" {
		o.ClientName = "mcpgw"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Manager{o: o, oc: &oauth.Client{HTTP: o.HTTP, AllowHTTP: o.AllowHTTP, Now: o.Now}, callers: newCallerTokens()}
}

// Kinds of the manager's records, and the server name of flow records (a callback knows
// only its state).
const (
	kindGrant  = store.CredentialGrant
	kindClient = store.CredentialClient
	kindFlow   = store.CredentialFlow
	flowServer = "-"
	// lockTTL bounds one refresh or grant under the lock.
	lockTTL = 30 * time.Second
)

// NeedConsent is the answer for an identity with no usable grant: a person must open URL
// and approve (once; the grant is then kept and refreshed).
//
// URL is the gateway's consent page and Code the confirmation code it asks for: only
// whoever is told the code can go on to the authorization server (confirm.go).
type NeedConsent struct {
	Server string
	URL    string
	Code   string
	// StepUp: the server asked for more scopes than the grant has.
	StepUp bool
}

func (e *NeedConsent) Error() string {
	what := "needs your authorization"
	if e.StepUp {
		what = "needs more permissions than you granted"
	}
	return fmt.Sprintf("upstream %s %s: open %s and enter the code %s", e.Server, what, e.URL, e.Code)
}

// grant is a grant record's sealed content.
type grant struct {
	Token    oauth.Token          `json:"token"`
	Server   oauth.ServerMetadata `json:"server"` // the authorization server that issued it
	Client   storedClient         `json:"client"`
	Resource string               `json:"resource"`
	StepUps  int                  `json:"step_ups,omitempty"`
	// Refused is when the upstream last refused this grant's token (a 401): a refresh
	// is tried first, and a grant refused again soon after it is given up.
	Refused time.Time `json:"refused,omitzero"`
}

// storedClient is the part of an oauth.ClientInfo a record keeps: a signing key comes
// from the config each time.
type storedClient struct {
	Issuer       string    `json:"issuer,omitempty"`
	ID           string    `json:"id"`
	Secret       string    `json:"secret,omitempty"`
	AuthMethod   string    `json:"auth_method"`
	ExpiresAt    time.Time `json:"expires_at,omitzero"`
	RegisteredBy string    `json:"registered_by,omitempty"`
}

// flow is a pending authorization's sealed content.
type flow struct {
	Server  string               `json:"server"`
	Subject string               `json:"subject"`
	Pending oauth.Pending        `json:"pending"`
	AS      oauth.ServerMetadata `json:"as"`
	Client  storedClient         `json:"client"`
	StepUps int                  `json:"step_ups,omitempty"`
	// AuthURL is the authorization server's URL the consent page sends a browser to once
	// it gave the code, whose digest is CodeHash; Bound is the digest of the secret that
	// browser was given, which the callback must present; Tries counts wrong codes.
	AuthURL  string `json:"auth_url"`
	CodeHash string `json:"code_hash"`
	Bound    string `json:"bound,omitempty"`
	Tries    int    `json:"tries,omitempty"`
}

// seal and open bind a record's content to its place (kind, server, subject), so a record
// copied to another identity's place does not open.
func (m *Manager) seal(kind, server, subject string, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return m.o.Ring.Seal(b, sealbox.AAD(kind, server, subject)), nil
}

func (m *Manager) open(c *store.Credential, v any) error {
	b, err := m.o.Ring.Open(c.Sealed, sealbox.AAD(c.Kind, c.Server, c.Subject))
	if err != nil {
		return fmt.Errorf("upstream credential %s of %s: %w", c.Kind, c.Server, err)
	}
	return json.Unmarshal(b, v)
}

// loadGrant reads subject's grant at server (nil when there is none) and its revision.
func (m *Manager) loadGrant(server, subject string) (*grant, int64, error) {
	c, err := m.o.Store.GetCredential(kindGrant, server, subject)
	if errors.Is(err, store.ErrNotFound) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	var g grant
	if err := m.open(c, &g); err != nil {
		return nil, 0, err
	}
	return &g, c.Rev, nil
}

// putGrant writes g as subject's grant at server if its revision is still rev.
func (m *Manager) putGrant(server, subject string, g *grant, rev int64) error {
	sealed, err := m.seal(kindGrant, server, subject, g)
	if err != nil {
		return err
	}
	_, err = m.o.Store.PutCredential(&store.Credential{Kind: kindGrant, Server: server, Subject: subject,
		Sealed: sealed, Updated: m.o.Now().UTC()}, rev)
	return err
}

// Header returns the Authorization header value for subject's calls to srv, refreshing
// the token first when it expires within the refresh margin. With no usable grant it
// obtains one where no person is needed (client credentials), else answers "": the
// request goes without a token, and the upstream's refusal (Challenged) starts the
// authorization with what the upstream asks for. A server that serves some requests
// without a token (initialize) is thus served as it wants.
func (m *Manager) Header(ctx context.Context, srv Server, subject string) (string, error) {
	sub := srv.SubjectOf(subject)
	g, _, err := m.loadGrant(srv.Name, sub)
	if err != nil {
		return "", err
	}
	if g != nil && g.Token.Fresh(m.o.Now(), m.o.RefreshBefore) {
		return g.Token.AuthorizationHeader(), nil
	}
	tok, err := m.renew(ctx, srv, sub)
	if err != nil || tok.AccessToken == "" {
		return "", err
	}
	return tok.AuthorizationHeader(), nil
}

// renew makes subject's grant at srv fresh under the store's lock: another replica may
// have done it while this one waited, and then its token is used. A refresh token is
// used once: the rotated one is stored before the access token is handed out.
func (m *Manager) renew(ctx context.Context, srv Server, sub string) (oauth.Token, error) {
	unlock, err := m.o.Store.Lock(ctx, "upauth:"+srv.Name+"\x00"+sub, lockTTL)
	if err != nil {
		return oauth.Token{}, err
	}
	defer unlock()
	g, rev, err := m.loadGrant(srv.Name, sub)
	if err != nil {
		return oauth.Token{}, err
	}
	now := m.o.Now()
	if g != nil && g.Token.Fresh(now, m.o.RefreshBefore) {
		return g.Token, nil
	}
	if g != nil && g.Token.RefreshToken != "" {
		cl, err := m.clientInfo(srv, g.Client)
		if err != nil {
			return oauth.Token{}, err
		}
		tok, err := m.oc.Refresh(ctx, &g.Server, cl, g.Token.RefreshToken, g.Resource, nil)
		switch {
		case err == nil:
			g.Token = tok
			if err := m.putGrant(srv.Name, sub, g, rev); err != nil {
				return oauth.Token{}, err
			}
			return tok, nil
		case errors.Is(err, oauth.ErrGrantRevoked):
			_ = m.o.Store.DeleteCredential(kindGrant, srv.Name, sub)
			g, rev = nil, 0
		default:
			return oauth.Token{}, err
		}
	}
	switch srv.Auth.Grant {
	case config.GrantClientCredentials:
		return m.clientCredentials(ctx, srv, rev)
	case config.GrantTokenExchange:
		tok, err := m.exchange(ctx, srv, sub, rev)
		var none *NoCallerToken
		if errors.As(err, &none) && g != nil && g.Token.Fresh(now, 0) {
			return g.Token, nil // no token to exchange now: the last one serves until it expires
		}
		return tok, err
	}
	if g != nil && g.Token.Fresh(now, 0) {
		return g.Token, nil // no refresh token: used until it expires
	}
	return oauth.Token{}, nil // none: the upstream's refusal starts the authorization
}

// clientCredentials obtains the server-wide token of a machine credential.
func (m *Manager) clientCredentials(ctx context.Context, srv Server, rev int64) (oauth.Token, error) {
	d, err := m.discover(ctx, srv, nil)
	if err != nil {
		return oauth.Token{}, err
	}
	cl, err := m.clientInfo(srv, storedClient{ID: srv.Auth.ClientID, Secret: srv.Auth.ClientSecret})
	if err != nil {
		return oauth.Token{}, err
	}
	cl.AuthMethod = oauth.ChooseAuthMethod(d.Server.TokenEndpointAuthMethodsSupported, cl.Secret != "", cl.SigningKey != nil)
	tok, err := m.oc.ClientCredentials(ctx, d.Server, cl, d.Resource, srv.Auth.Scopes)
	if err != nil {
		return oauth.Token{}, err
	}
	g := &grant{Token: tok, Server: *d.Server, Client: stored(cl), Resource: d.Resource}
	if err := m.putGrant(srv.Name, "", g, rev); err != nil {
		return oauth.Token{}, err
	}
	return tok, nil
}

// clientInfo is a stored client as the oauth client uses it, with the config's signing key.
func (m *Manager) clientInfo(srv Server, s storedClient) (oauth.ClientInfo, error) {
	cl := oauth.ClientInfo{Issuer: s.Issuer, ID: s.ID, Secret: s.Secret, AuthMethod: s.AuthMethod,
		SecretExpiresAt: s.ExpiresAt, RegisteredBy: s.RegisteredBy}
	if srv.Auth.PrivateKey != "" && s.ID == srv.Auth.ClientID {
		k, err := oauth.ParsePrivateKeyPEM([]byte(srv.Auth.PrivateKey))
		if err != nil {
			return cl, fmt.Errorf("servers.%s.auth.private_key: %w", srv.Name, err)
		}
		cl.SigningKey = k
	}
	return cl, nil
}

func stored(cl oauth.ClientInfo) storedClient {
	return storedClient{Issuer: cl.Issuer, ID: cl.ID, Secret: cl.Secret, AuthMethod: cl.AuthMethod,
		ExpiresAt: cl.SecretExpiresAt, RegisteredBy: cl.RegisteredBy}
}

// discover finds srv's authorization server, from ch when the upstream answered with a
// challenge, else from a probe: an unauthenticated request whose 401 names the metadata.
func (m *Manager) discover(ctx context.Context, srv Server, ch *oauth.Challenge) (*oauth.Discovery, error) {
	if ch == nil {
		c := m.probe(ctx, srv.URL)
		ch = &c
	}
	return m.oc.Discover(ctx, srv.URL, *ch)
}

// probe sends the upstream an unauthenticated request and reads the challenge of its
// answer (none when it answers anything but 401).
func (m *Manager) probe(ctx context.Context, url string) oauth.Challenge {
	body := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcpgw","version":"probe"}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return oauth.Challenge{}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := m.o.HTTP.Do(req)
	if err != nil {
		return oauth.Challenge{}
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		return oauth.Challenge{}
	}
	return oauth.ParseChallenge(resp.Header)
}
