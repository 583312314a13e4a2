package registry

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync/atomic"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/registry/internal/upauth"
	"github.com/mcpgw/mcpgw/internal/upstream"
)

// Upstream authorization (docs/auth.md, "Upstream authorization"): for a server whose
// config says auth type oauth, mcpgw is the server's OAuth client. The registry's
// UpstreamAuth part holds the token manager; each instance of such a server gets an
// authorizer for whose grant its requests carry.

// UpstreamAuthOptions configure the registry's upstream authorization (upauth.Options).
type UpstreamAuthOptions = upauth.Options

// NeedConsent is the error of a call or start that waits for a person's authorization:
// it carries the URL to open.
type NeedConsent = upauth.NeedConsent

// Consent is an authorization for a person to give: the consent page and its code.
type Consent = upauth.Consent

// ErrConsentUnknown: no pending authorization has the state a consent page names.
const ErrConsentUnknown = upauth.ErrConsentUnknown

// Completed names the grant a callback completed.
type Completed = upauth.Completed

// GrantInfo is what may be shown of a kept grant (never a token).
type GrantInfo = upauth.GrantInfo

// UpstreamAuth is the registry's part that holds upstream grants: Registry.UpstreamAuth.
type UpstreamAuth struct {
	r *Registry
	m atomic.Pointer[upauth.Manager]
}

// Use starts the token manager over o (the gateway's store and key ring). Without it, an
// OAuth server's requests go without a token and are refused.
func (ua *UpstreamAuth) Use(o UpstreamAuthOptions) { ua.m.Store(upauth.New(o)) }

// InUse reports whether Use started the token manager.
func (ua *UpstreamAuth) InUse() bool { return ua.m.Load() != nil }

// manager is the token manager, nil before Use.
func (ua *UpstreamAuth) manager() *upauth.Manager { return ua.m.Load() }

// target is the upauth view of server name, if it is an OAuth server.
func (ua *UpstreamAuth) target(name string) (upauth.Server, bool) {
	s := ua.r.Server(name)
	if s == nil || !s.Def.Auth.OAuth() {
		return upauth.Server{}, false
	}
	return upauth.Server{Name: name, URL: s.Def.URL, Auth: s.Def.Auth}, true
}

// GrantSubject is whose grant at server a call of subject (an identity, session.Subject)
// uses: its own at a per-user server, the server's one ("") at a per-server one.
func (ua *UpstreamAuth) GrantSubject(server, subject string) string {
	if t, ok := ua.target(server); ok {
		return t.SubjectOf(subject)
	}
	return subject
}

// ConsentURL starts an authorization of subject at server and returns the consent page a
// person opens to approve it and the code that page asks for (subject is ignored for a
// per-server grant). The code goes only to whoever asked: the browser that gives it is
// the one whose approval makes the grant.
func (ua *UpstreamAuth) ConsentURL(ctx context.Context, server, subject string) (Consent, error) {
	m := ua.manager()
	t, ok := ua.target(server)
	if m == nil || !ok {
		return Consent{}, errNotOAuth(server)
	}
	return m.Begin(ctx, t, subject, nil)
}

// PendingConsent names whose grant at which server the pending authorization state is.
func (ua *UpstreamAuth) PendingConsent(state string) (Completed, error) {
	m := ua.manager()
	if m == nil {
		return Completed{}, errNotOAuth("")
	}
	return m.Pending(state)
}

// ConfirmConsent checks the code a browser gave on the consent page of the pending
// authorization state: the answer is the authorization server's URL to send it to and
// the secret it must present at the callback.
func (ua *UpstreamAuth) ConfirmConsent(state, code string) (authURL, binding string, err error) {
	m := ua.manager()
	if m == nil {
		return "", "", errNotOAuth("")
	}
	return m.Confirm(state, code)
}

// Complete finishes the authorization a callback's query answers, in the browser that
// holds binding (ConfirmConsent). A server-wide grant's server is restarted at once, so
// that it comes up with the new token.
func (ua *UpstreamAuth) Complete(ctx context.Context, q url.Values, binding string) (Completed, error) {
	m := ua.manager()
	if m == nil {
		return Completed{}, errNotOAuth("")
	}
	done, err := m.Complete(ctx, q, binding)
	if err != nil {
		return done, err
	}
	if s := ua.r.Server(done.Server); s != nil {
		// A server-wide grant's server comes up with the new token; a per-user server
		// whose catalogue waited for any identity's grant lists it now, instead of at its
		// next retry.
		if state, _ := s.State(); s.Def.Auth.Per == config.AuthPerServer || state != StateUp {
			_ = ua.r.Restart(done.Server)
		}
	}
	return done, nil
}

// Revoke forgets subject's grant at server ("" for the server-wide one).
func (ua *UpstreamAuth) Revoke(server, subject string) error {
	m := ua.manager()
	if m == nil {
		return errNotOAuth(server)
	}
	return m.Revoke(server, subject)
}

// Grants lists the kept grants (of subject only, when not "").
func (ua *UpstreamAuth) Grants(subject string) ([]GrantInfo, error) {
	m := ua.manager()
	if m == nil {
		return nil, nil
	}
	return m.Grants(subject)
}

// Exchanging reports whether a server of cfg takes tokens exchanged for its callers' own
// (grant token_exchange): only then are callers' tokens noted (NoteCallerToken).
func Exchanging(cfg *config.Config) bool {
	for _, d := range cfg.Servers {
		if d != nil && d.Auth.OAuth() && d.Auth.Grant == config.GrantTokenExchange {
			return true
		}
	}
	return false
}

// NoteCallerToken keeps token, the bearer token a caller presented, as subject's latest:
// what a token_exchange server's grant of subject is exchanged from (in memory only). The
// first token any caller brings starts the catalogue of such servers that waited for one.
func (ua *UpstreamAuth) NoteCallerToken(subject, token string) {
	m := ua.manager()
	if m == nil || !m.NoteCallerToken(subject, token) {
		return
	}
	for _, name := range ua.r.Names() {
		s := ua.r.Server(name)
		if s == nil || !s.Def.Auth.PerUser() || s.Def.Auth.Grant != config.GrantTokenExchange {
			continue
		}
		if state, _ := s.State(); state != StateUp {
			_ = ua.r.Restart(name)
		}
	}
}

// UpstreamAuth is the registry's upstream authorization part: grants, consent, callbacks.
func (r *Registry) UpstreamAuth() *UpstreamAuth { return &r.uauth }

// authorizerFor is the authorizer of an instance of server name whose requests carry
// subject's grant, when the server is an OAuth upstream whose grants are per (user or
// server); nil otherwise (and before Use).
func (ua *UpstreamAuth) authorizerFor(name, subject, per string) upstream.Authorizer {
	m := ua.manager()
	t, ok := ua.target(name)
	if m == nil || !ok || t.Auth.Per != per {
		return nil
	}
	return authorizer{m: m, t: t, subject: subject}
}

// catalogAuthorizerFor is the authorizer of a per-user server's own instance, the one
// that only lists its catalogue (nil for any other server, and before Use).
func (ua *UpstreamAuth) catalogAuthorizerFor(name string) upstream.Authorizer {
	m := ua.manager()
	t, ok := ua.target(name)
	if m == nil || !ok || !t.Auth.PerUser() {
		return nil
	}
	return catalogAuthorizer{m: m, t: t}
}

// catalogAuthorizer lists a per-user server's catalogue with the grant of an identity
// that has one (the first by name): a server's tools are the same for the identities
// that may list them, and every call goes out on the caller's own instance, with the
// caller's own grant. With no grant yet the server waits for the first identity's
// authorization; the listing never starts one itself, so no consent is begun in
// nobody's name.
type catalogAuthorizer struct {
	m *upauth.Manager
	t upauth.Server
}

func (a catalogAuthorizer) Header(ctx context.Context) (string, error) {
	sub, ok := a.m.AnySubject(a.t.Name)
	if !ok && a.t.Auth.Grant == config.GrantTokenExchange {
		sub, ok = a.m.AnyCaller()
	}
	if !ok {
		return "", nil
	}
	return a.m.Header(ctx, a.t, sub)
}

func (a catalogAuthorizer) Refused(_ context.Context, sent string, status int, _ http.Header) error {
	return &WaitingForGrant{Server: a.t.Name, Exchange: a.t.Auth.Grant == config.GrantTokenExchange, Refused: sent != "", Status: status}
}

// WaitingForGrant is the state of a per-user server whose catalogue no grant could list
// yet: none was given (or brought, for token exchange), or the one borrowed was refused.
// The server's own retries list it once one serves.
type WaitingForGrant struct {
	Server   string
	Exchange bool // token exchange: a caller's token, not a person, gives the grant
	Refused  bool // a grant was sent and refused (Status)
	Status   int
}

func (e *WaitingForGrant) Error() string {
	switch {
	case e.Refused:
		return fmt.Sprintf("the upstream refused the grant mcpgw lists %s's tools with (HTTP %d): they are listed again at the next retry", e.Server, e.Status)
	case e.Exchange:
		return "no caller has brought a token to exchange for " + e.Server + " yet: its tools are listed after the first request with Authorization: Bearer"
	}
	return "no identity has authorized " + e.Server + " yet: its tools are listed once one does (GET /oauth/connect/" + e.Server + " as that identity)"
}

// authorizer is an instance's upstream.Authorizer: the grant of subject at the server.
type authorizer struct {
	m       *upauth.Manager
	t       upauth.Server
	subject string
}

func (a authorizer) Header(ctx context.Context) (string, error) {
	if a.subject == "" && a.t.Auth.PerUser() {
		return "", errNoIdentity(a.t.Name)
	}
	return a.m.Header(ctx, a.t, a.subject)
}

func (a authorizer) Refused(ctx context.Context, sent string, status int, challenge http.Header) error {
	return a.m.Challenged(ctx, a.t, a.subject, sent, status, challenge)
}

// errNoIdentity: a per-user grant is someone's; a caller nobody can name has none.
type errNoIdentity string

func (e errNoIdentity) Error() string {
	return "each identity authorizes " + string(e) + " for itself, and this session has none: send X-Agent-ID or a credential"
}

type errNotOAuth string

func (e errNotOAuth) Error() string {
	if e == "" {
		return "no upstream uses OAuth here"
	}
	return "server " + string(e) + " is not an OAuth upstream of this gateway"
}
