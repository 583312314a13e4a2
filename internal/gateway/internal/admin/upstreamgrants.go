package admin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/registry"
)

// Upstream grants (docs/auth.md, "Upstream authorization"): the OAuth upstreams of the
// config, the grants the gateway keeps for them (never a token), a consent URL to start
// one, and revocation. The web UI's "Upstream sign-in" page calls the same functions.

// UpstreamAuth is the registry's upstream authorization part as the admin API uses it
// (registry.UpstreamAuth has it).
type UpstreamAuth interface {
	// Grants lists the kept grants (of subject only, when not "").
	Grants(subject string) ([]registry.GrantInfo, error)
	// Revoke forgets subject's grant at server ("" for the server-wide one).
	Revoke(server, subject string) error
	// ConsentURL starts an authorization of subject at server and returns the consent
	// page a person opens to approve it and the code that page asks for.
	ConsentURL(ctx context.Context, server, subject string) (registry.Consent, error)
}

// GrantsPort is what the upstream grant functions need of the gateway: the admin Port
// and the UI's both have it.
type GrantsPort interface {
	Config() *config.Config
	UpstreamAuth() UpstreamAuth
}

// OAuthServerRow is one OAuth upstream of the config as GET /api/upstream-grants lists it.
type OAuthServerRow struct {
	Name  string `json:"name"`
	Per   string `json:"per"`   // server (one grant) or user (one per identity)
	Grant string `json:"grant"` // authorization_code, client_credentials, token_exchange
	// Granted reports whether a grant is kept for it (for the subject asked, if any).
	Granted bool `json:"granted"`
	// Connect reports whether a person's consent gives its grant (authorization_code):
	// POST /api/upstream-grants/{name}/connect applies.
	Connect bool `json:"connect"`
}

// GrantRow is one kept grant: what may be shown of it, never a token.
type GrantRow struct {
	Server      string    `json:"server"`
	Subject     string    `json:"subject"` // "" for the server-wide grant
	Issuer      string    `json:"issuer"`
	Scopes      []string  `json:"scopes"`
	Expires     time.Time `json:"expires"` // the access token's; zero: the server did not say
	Refreshable bool      `json:"refreshable"`
	Updated     time.Time `json:"updated"`
}

// UpstreamGrants is the answer of GET /api/upstream-grants.
type UpstreamGrants struct {
	Servers []OAuthServerRow `json:"servers"`
	Grants  []GrantRow       `json:"grants"`
}

// GrantError is a refusal of an upstream grant request: its HTTP status and message.
type GrantError struct {
	Status int
	Msg    string
}

func (e *GrantError) Error() string { return e.Msg }

func grantErr(status int, format string, args ...any) *GrantError {
	return &GrantError{Status: status, Msg: fmt.Sprintf(format, args...)}
}

// maxSubject bounds a subject's length (an identity's principal, or agent:<id>).
const maxSubject = 512

// checkSubject refuses a subject that is too long, not UTF-8, or has control characters
// (a newline would forge a log or audit line).
func checkSubject(s string) *GrantError {
	switch {
	case len(s) > maxSubject:
		return grantErr(http.StatusBadRequest, "subject longer than %d bytes", maxSubject)
	case !utf8.ValidString(s):
		return grantErr(http.StatusBadRequest, "subject is not UTF-8")
	case strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) || unicode.In(r, unicode.Zl, unicode.Zp) }):
		return grantErr(http.StatusBadRequest, "subject has control characters")
	}
	return nil
}

// ListUpstreamGrants is GET /api/upstream-grants: every OAuth upstream of the running
// config (with or without a grant) and the kept grants, narrowed to server and subject
// when they are not "". Grants of a server no longer in the config are listed too, so
// that they can be revoked.
func ListUpstreamGrants(p GrantsPort, server, subject string) (UpstreamGrants, error) {
	out := UpstreamGrants{Servers: []OAuthServerRow{}, Grants: []GrantRow{}}
	infos, err := p.UpstreamAuth().Grants(subject)
	if err != nil {
		return out, err
	}
	granted := map[string]bool{}
	for _, g := range infos {
		if server != "" && g.Server != server {
			continue
		}
		granted[g.Server] = true
		out.Grants = append(out.Grants, GrantRow{Server: g.Server, Subject: g.Subject, Issuer: g.Issuer,
			Scopes: nonNil(slices.Clone(g.Scopes)), Expires: g.Expires, Refreshable: g.Refreshable, Updated: g.Updated})
	}
	slices.SortFunc(out.Grants, func(a, b GrantRow) int {
		if c := strings.Compare(a.Server, b.Server); c != 0 {
			return c
		}
		return strings.Compare(a.Subject, b.Subject)
	})
	for name, d := range p.Config().Servers {
		if d == nil || !d.Auth.OAuth() || (server != "" && name != server) {
			continue
		}
		out.Servers = append(out.Servers, OAuthServerRow{Name: name, Per: d.Auth.Per, Grant: d.Auth.Grant,
			Granted: granted[name], Connect: d.Auth.Grant == config.GrantAuthorizationCode})
	}
	slices.SortFunc(out.Servers, func(a, b OAuthServerRow) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// ConnectUpstream starts an authorization at server and returns the consent page a person
// opens and the code it asks for: the code goes to the caller only, and the browser that
// enters it is the one whose approval makes the grant (the caller's own, or that of the
// person the caller hands address and code to). A per-server grant takes no subject; a
// per-user one needs the subject whose grant it is (an identity's principal, or
// agent:<X-Agent-ID>). Refusals are GrantErrors.
func ConnectUpstream(ctx context.Context, p GrantsPort, server, subject string) (registry.Consent, error) {
	d := p.Config().Servers[server]
	if d == nil || !d.Auth.OAuth() {
		return registry.Consent{}, grantErr(http.StatusNotFound, "no OAuth upstream named %q", server)
	}
	if d.Auth.Grant != config.GrantAuthorizationCode {
		return registry.Consent{}, grantErr(http.StatusBadRequest, "%s gets its grant by %s, not by a person's consent", server, d.Auth.Grant)
	}
	if e := checkSubject(subject); e != nil {
		return registry.Consent{}, e
	}
	switch {
	case d.Auth.Per == config.AuthPerServer && subject != "":
		return registry.Consent{}, grantErr(http.StatusBadRequest, "%s has one server-wide grant (per: server): send no subject", server)
	case d.Auth.Per != config.AuthPerServer && subject == "":
		return registry.Consent{}, grantErr(http.StatusBadRequest, "%s keeps a grant per user (per: user): the subject whose grant it is is required", server)
	}
	cs, err := p.UpstreamAuth().ConsentURL(ctx, server, subject)
	if err != nil {
		return registry.Consent{}, grantErr(http.StatusBadGateway, "the authorization of %s could not start: %v", server, err)
	}
	return cs, nil
}

// RevokeUpstream forgets subject's grant at server ("" for the server-wide one) and
// returns what was shown of it; a grant that is not kept is a 404 GrantError.
func RevokeUpstream(p GrantsPort, server, subject string) (GrantRow, error) {
	if e := checkSubject(subject); e != nil {
		return GrantRow{}, e
	}
	ua := p.UpstreamAuth()
	infos, err := ua.Grants(subject)
	if err != nil {
		return GrantRow{}, grantErr(http.StatusServiceUnavailable, "store: %v", err)
	}
	i := slices.IndexFunc(infos, func(g registry.GrantInfo) bool { return g.Server == server && g.Subject == subject })
	if i < 0 {
		if subject == "" {
			return GrantRow{}, grantErr(http.StatusNotFound, "no server-wide grant of %q is kept", server)
		}
		return GrantRow{}, grantErr(http.StatusNotFound, "no grant of %q for subject %q is kept", server, subject)
	}
	g := infos[i]
	if err := ua.Revoke(server, subject); err != nil {
		return GrantRow{}, grantErr(http.StatusServiceUnavailable, "store: %v", err)
	}
	return GrantRow{Server: g.Server, Subject: g.Subject, Issuer: g.Issuer, Scopes: nonNil(g.Scopes),
		Expires: g.Expires, Refreshable: g.Refreshable, Updated: g.Updated}, nil
}

// GrantObject names a grant in the audit log: upstream-grants/<server>[/<subject>].
func GrantObject(server, subject string) string {
	if subject == "" {
		return "upstream-grants/" + server
	}
	return "upstream-grants/" + server + "/" + subject
}

// grantFail answers err: a GrantError's status and message, else 500.
func grantFail(w http.ResponseWriter, err error) {
	var ge *GrantError
	if errors.As(err, &ge) {
		Error(w, ge.Status, ge.Msg)
		return
	}
	Error(w, http.StatusInternalServerError, err.Error())
}

// grantAPI is the admin API's upstream grants (/api/upstream-grants): list, connect,
// revoke, through the functions the web UI's page uses too.
type grantAPI struct{ port Port }

// ServeUpstreamGrants is GET /api/upstream-grants (?server=, ?subject=).
func (a grantAPI) ServeUpstreamGrants(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	out, err := ListUpstreamGrants(a.port, q.Get("server"), q.Get("subject"))
	if err != nil {
		Error(w, http.StatusServiceUnavailable, "store: "+err.Error())
		return
	}
	JSON(w, http.StatusOK, out)
}

// connectBody is the body of POST /api/upstream-grants/{name}/connect (it may be empty
// for a per-server grant).
type connectBody struct {
	Subject string `json:"subject"`
}

// ServeUpstreamConnect is POST /api/upstream-grants/{name}/connect: {"url": consent URL}.
func (a grantAPI) ServeUpstreamConnect(w http.ResponseWriter, r *http.Request) {
	server := r.PathValue("name")
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	switch {
	case err != nil:
		ReadFailed(w, err)
		return
	case len(body) > MaxBody:
		Error(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body larger than %d bytes", MaxBody))
		return
	}
	var b connectBody
	if len(strings.TrimSpace(string(body))) > 0 {
		if errs := DecodeStrict(body, &b, nil); len(errs) > 0 {
			FieldErrors(w, http.StatusBadRequest, "invalid body: "+errs[0].WithField(), errs, nil)
			return
		}
	}
	cs, err := ConnectUpstream(r.Context(), a.port, server, b.Subject)
	if err != nil {
		grantFail(w, err)
		return
	}
	AuditWrite(a.port, r, GrantObject(server, b.Subject), "started", nil, b)
	JSON(w, http.StatusOK, map[string]string{"url": cs.URL, "code": cs.Code, "server": server, "subject": b.Subject})
}

// ServeUpstreamRevoke is DELETE /api/upstream-grants/{name} (?subject= for one user's).
func (a grantAPI) ServeUpstreamRevoke(w http.ResponseWriter, r *http.Request) {
	server, subject := r.PathValue("name"), r.URL.Query().Get("subject")
	g, err := RevokeUpstream(a.port, server, subject)
	if err != nil {
		grantFail(w, err)
		return
	}
	AuditWrite(a.port, r, GrantObject(server, subject), "revoked", g, nil)
	JSON(w, http.StatusOK, map[string]any{"revoked": g})
}
