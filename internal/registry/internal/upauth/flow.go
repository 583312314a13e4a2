package upauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/oauth"
	"github.com/mcpgw/mcpgw/internal/store"
)

// Begin starts an authorization of subject at srv and returns the consent page a person
// opens to approve it and the code that page asks for (confirm.go). The authorization server is discovered from ch (an upstream's challenge) or
// a probe; mcpgw's client there is the configured one, or the one it registered before
// with that issuer, or a new registration. The pending flow is kept in the store under its
// state until the callback, at most the flow timeout, so the callback may reach any
// replica.
func (m *Manager) Begin(ctx context.Context, srv Server, subject string, ch *oauth.Challenge) (Consent, error) {
	return m.begin(ctx, srv, srv.SubjectOf(subject), ch, nil, 0)
}

func (m *Manager) begin(ctx context.Context, srv Server, sub string, ch *oauth.Challenge, scopes []string, stepUps int) (Consent, error) {
	if ch == nil {
		// The probe's challenge names the metadata and the scopes the server wants.
		c := m.probe(ctx, srv.URL)
		ch = &c
	}
	d, err := m.discover(ctx, srv, ch)
	if err != nil {
		return Consent{}, err
	}
	cl, err := m.client(ctx, srv, d.Server)
	if err != nil {
		return Consent{}, err
	}
	if scopes == nil {
		scopes = union(oauth.SelectScopes(*ch, d.ResourceMetadata, d.Server, true), srv.Auth.Scopes)
	}
	u, p, err := oauth.NewAuthorization(oauth.AuthRequest{Server: d.Server, Client: cl,
		RedirectURI: m.o.CallbackURL, Resource: d.Resource, Scopes: scopes})
	if err != nil {
		return Consent{}, err
	}
	code := newCode()
	f := flow{Server: srv.Name, Subject: sub, Pending: p, AS: *d.Server, Client: stored(cl), StepUps: stepUps,
		AuthURL: u, CodeHash: digest(code)}
	sealed, err := m.seal(kindFlow, flowServer, p.State, f)
	if err != nil {
		return Consent{}, err
	}
	now := m.o.Now().UTC()
	_, err = m.o.Store.PutCredential(&store.Credential{Kind: kindFlow, Server: flowServer, Subject: p.State,
		Sealed: sealed, Expires: now.Add(m.o.FlowTimeout), Updated: now}, 0)
	if err != nil {
		return Consent{}, err
	}
	return Consent{URL: m.consentPage(p.State), Code: code}, nil
}

// pendingConsent is the consent kept for subject at a server while its flow is young: a
// caller that calls again and again before a person approves gets the same page and
// code, and the store one flow, not one per call.
type pendingConsent struct {
	Consent Consent `json:"consent"`
}

// consent is subject's pending authorization at srv, started now unless one was started
// within half the flow timeout.
func (m *Manager) consent(ctx context.Context, srv Server, sub string, ch *oauth.Challenge) (Consent, error) {
	if c, err := m.o.Store.GetCredential(kindFlow, srv.Name, sub); err == nil {
		var p pendingConsent
		if m.open(c, &p) == nil && p.Consent.URL != "" {
			return p.Consent, nil
		}
	}
	cs, err := m.begin(ctx, srv, sub, ch, nil, 0)
	if err != nil {
		return Consent{}, err
	}
	if sealed, err := m.seal(kindFlow, srv.Name, sub, pendingConsent{Consent: cs}); err == nil {
		now := m.o.Now().UTC()
		c := &store.Credential{Kind: kindFlow, Server: srv.Name, Subject: sub, Sealed: sealed,
			Expires: now.Add(m.o.FlowTimeout / 2), Updated: now}
		// Another call may have started one at the same moment (a conflict); either works.
		_, _ = m.o.Store.PutCredential(c, 0)
	}
	return cs, nil
}

// client is mcpgw's client at the authorization server as: the configured one, else the
// one registered with that issuer before (kept in the store), else a new registration
// (kept for next time). Registrations are per issuer: a server that moved to another
// authorization server gets a new one, and no client id travels between them.
func (m *Manager) client(ctx context.Context, srv Server, as *oauth.ServerMetadata) (oauth.ClientInfo, error) {
	a := srv.Auth
	if a.ClientID != "" {
		cl, err := m.clientInfo(srv, storedClient{ID: a.ClientID, Secret: a.ClientSecret, RegisteredBy: oauth.RegisteredByHand})
		if err != nil {
			return cl, err
		}
		return m.oc.Register(ctx, as, oauth.RegisterOptions{Preregistered: &cl})
	}
	if c, err := m.o.Store.GetCredential(kindClient, srv.Name, as.Issuer); err == nil {
		var s storedClient
		if m.open(c, &s) == nil && s.Issuer == as.Issuer && (s.ExpiresAt.IsZero() || m.o.Now().Before(s.ExpiresAt)) {
			return m.clientInfo(srv, s)
		}
	}
	cl, err := m.oc.Register(ctx, as, oauth.RegisterOptions{MetadataDocumentURL: a.ClientMetadataURL,
		ClientName: m.o.ClientName, RedirectURIs: []string{m.o.CallbackURL}})
	if err != nil {
		return cl, err
	}
	if cl.RegisteredBy == oauth.RegisteredDynamic {
		if sealed, err := m.seal(kindClient, srv.Name, as.Issuer, stored(cl)); err == nil {
			_, _ = m.o.Store.PutCredential(&store.Credential{Kind: kindClient, Server: srv.Name, Subject: as.Issuer,
				Sealed: sealed, Expires: cl.SecretExpiresAt, Updated: m.o.Now().UTC()}, 0)
		}
	}
	return cl, nil
}

// Completed is what a callback finished: whose grant at which server.
type Completed struct {
	Server, Subject string
}

// Complete finishes the authorization a callback's query answers, in the browser that
// holds binding (the secret Confirm gave it): the pending flow is taken by its state
// (once: a second callback with the same state finds nothing), the browser checked, the
// query checked (state, iss, an error answer), the code exchanged, and the grant stored.
func (m *Manager) Complete(ctx context.Context, q url.Values, binding string) (Completed, error) {
	state := q.Get("state")
	if state == "" || len(q["state"]) > 1 {
		return Completed{}, errors.New("the callback has no single state: it answers no authorization mcpgw started")
	}
	c, err := m.o.Store.TakeCredential(kindFlow, flowServer, state)
	if errors.Is(err, store.ErrNotFound) {
		return Completed{}, errors.New("the callback's state is unknown or expired (an authorization waits at most " + m.o.FlowTimeout.String() + "): start again")
	}
	if err != nil {
		return Completed{}, err
	}
	var f flow
	if err := m.open(c, &f); err != nil {
		return Completed{}, err
	}
	done := Completed{Server: f.Server, Subject: f.Subject}
	_ = m.o.Store.DeleteCredential(kindFlow, f.Server, f.Subject) // its consent URL is spent
	if !f.bound(binding) {
		// An authorization server's URL opened in a browser that did not give the code on
		// the consent page (someone sent it on): its grant would be another person's.
		return done, errors.New("this browser did not confirm the authorization with its code on mcpgw's consent page: the grant is not made; whoever asked for it must open the address they were given and enter its code")
	}
	code, err := f.Pending.Callback(q)
	if err != nil {
		return done, err
	}
	tok, err := m.oc.Exchange(ctx, f.Pending, oauth.ClientInfo{Issuer: f.Client.Issuer, ID: f.Client.ID,
		Secret: f.Client.Secret, AuthMethod: f.Client.AuthMethod}, code)
	if err != nil {
		return done, err
	}
	g := &grant{Token: tok, Server: f.AS, Client: f.Client, Resource: f.Pending.Resource, StepUps: f.StepUps}
	for range 3 {
		_, rev, err := m.loadGrant(f.Server, f.Subject)
		if err != nil {
			return done, err
		}
		if err = m.putGrant(f.Server, f.Subject, g, rev); !errors.Is(err, store.ErrConflict) {
			return done, err
		}
	}
	return done, store.ErrConflict
}

// Challenged handles an upstream's refusal of the Authorization header sent on subject's
// behalf: a 403 asking for more scopes starts a step-up authorization (bounded:
// oauth.DefaultMaxStepUps in a row); a 401 refreshes a grant that can be (answer nil: try
// again), else drops it and starts a new one. When the
// grant no longer presents sent (another call or replica renewed it meanwhile), nothing
// is dropped and the answer is nil: try again. Otherwise the answer is the *NeedConsent
// to pass on, or why none can be started.
func (m *Manager) Challenged(ctx context.Context, srv Server, subject, sent string, status int, h http.Header) error {
	sub := srv.SubjectOf(subject)
	ch := oauth.ParseChallenge(h)
	g, rev, err := m.loadGrant(srv.Name, sub)
	if err != nil {
		return err
	}
	if g != nil && g.Token.AuthorizationHeader() != sent {
		return nil
	}
	if srv.Auth.Grant == config.GrantTokenExchange {
		return m.exchangeRefused(srv, sub, g)
	}
	if status == http.StatusForbidden && ch.InsufficientScope() {
		var prev []string
		done := 0
		if g != nil {
			prev, done = g.Token.Scopes, g.StepUps
		}
		scopes, err := oauth.StepUp(prev, ch, done, oauth.DefaultMaxStepUps)
		if err != nil {
			return fmt.Errorf("upstream %s: %w", srv.Name, err)
		}
		cs, err := m.begin(ctx, srv, sub, &ch, scopes, done+1)
		if err != nil {
			return err
		}
		return &NeedConsent{Server: srv.Name, URL: cs.URL, Code: cs.Code, StepUp: true}
	}
	now := m.o.Now()
	if g != nil && g.Token.RefreshToken != "" && now.Sub(g.Refused) > refusedAgain {
		// An upstream may refuse a token before its expiry (it restarted, it revoked
		// access tokens): the refresh token may still be good, so the token is marked
		// stale and the request tried again, which refreshes it. Only a grant refused
		// again soon after is given up and asked for anew.
		g.Token.Expiry, g.Refused = now.Add(-time.Second), now
		if err := m.putGrant(srv.Name, sub, g, rev); err == nil || errors.Is(err, store.ErrConflict) {
			return nil
		}
	}
	if g != nil {
		if err := m.o.Store.DeleteCredential(kindGrant, srv.Name, sub); err != nil {
			return err
		}
	}
	if srv.Auth.Grant == config.GrantClientCredentials {
		_, err := m.renew(ctx, srv, sub)
		return err
	}
	cs, err := m.consent(ctx, srv, sub, &ch)
	if err != nil {
		return err
	}
	return &NeedConsent{Server: srv.Name, URL: cs.URL, Code: cs.Code}
}

// refusedAgain is how soon a second refusal of a refreshed grant gives it up.
const refusedAgain = time.Minute

// Revoke forgets subject's grant at server (the authorization server keeps it until it
// expires; mcpgw no longer uses it).
func (m *Manager) Revoke(server, subject string) error {
	return m.o.Store.DeleteCredential(kindGrant, server, subject)
}

// GrantInfo is what may be shown of a grant: never a token.
type GrantInfo struct {
	Server, Subject string
	Issuer          string
	Scopes          []string
	Expires         time.Time // the access token's; zero: the server did not say
	Refreshable     bool
	Updated         time.Time
}

// Grants lists the grants kept (of subject only, when it is not ""), by server.
func (m *Manager) Grants(subject string) ([]GrantInfo, error) {
	cs, err := m.o.Store.ListCredentials(kindGrant)
	if err != nil {
		return nil, err
	}
	var out []GrantInfo
	for _, c := range cs {
		if subject != "" && c.Subject != subject {
			continue
		}
		var g grant
		if m.open(c, &g) != nil {
			continue
		}
		out = append(out, GrantInfo{Server: c.Server, Subject: c.Subject, Issuer: g.Server.Issuer,
			Scopes: slices.Clone(g.Token.Scopes), Expires: g.Token.Expiry, Refreshable: g.Token.RefreshToken != "", Updated: c.Updated})
	}
	return out, nil
}

// AnySubject names an identity with a grant kept at server (the first by name; ok false
// when none has one): whose grant lists the catalogue of a per-user server.
func (m *Manager) AnySubject(server string) (string, bool) {
	cs, err := m.o.Store.ListCredentials(kindGrant)
	if err != nil {
		return "", false
	}
	var best string
	ok := false
	for _, c := range cs {
		if c.Server == server && c.Subject != "" && (!ok || c.Subject < best) {
			best, ok = c.Subject, true
		}
	}
	return best, ok
}

// union is a's scopes, then b's not in a.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
