package ui

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/gorilla/mux"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/admin"
)

// The Upstream sign-in page (docs/ui.md, docs/auth.md "Upstream authorization"): the OAuth
// upstreams of the config with the grants the gateway keeps for them, a Connect button
// that starts an authorization and shows the consent URL to open (or to hand to the user
// whose grant it is), and a Revoke button per grant. Both buttons are forms posted with
// the page's CSRF token; the page needs no script. The data and the checks are the admin
// API's (admin.ListUpstreamGrants, ConnectUpstream, RevokeUpstream).

// upstreamPage is the Upstream sign-in page and its two forms, behind the UI's sign-in.
type upstreamPage struct {
	port   Port
	view   *renderer
	signin *signIn
}

// upstreamFormMax bounds the body of the page's forms.
const upstreamFormMax = 64 << 10

// upstreamServer is one OAuth upstream on the page, with its grants.
type upstreamServer struct {
	admin.OAuthServerRow
	Table grantTable
}

// grantTable is a table of grants, each with its Revoke form (CSRF: the page's token).
type grantTable struct {
	Name   string // whose grants, for the table's caption
	Grants []admin.GrantRow
	CSRF   string
}

// upstreamData is the page's data: the servers, grants of servers no longer configured,
// and what the last form did.
type upstreamData struct {
	Servers []upstreamServer
	Orphans grantTable // grants of servers no longer configured
	Consent *upstreamConsent
	Revoked string // the grant a revocation just forgot (server, or server for subject)
	Error   string
	Status  int
}

// upstreamConsent is the consent page a Connect form started and the code it asks for.
type upstreamConsent struct {
	Server, Subject, URL, Code string
}

// mount adds the page and its two forms to root (from Mount).
func (u upstreamPage) mount(root *mux.Router) {
	root.Handle("/ui/upstream", u.signin.guard(false, http.HandlerFunc(u.ServeUpstream))).Methods("GET", "HEAD")
	root.Handle("/ui/upstream/connect", limitForm(u.signin.guard(false, http.HandlerFunc(u.ServeUpstreamConnect)))).Methods("POST")
	root.Handle("/ui/upstream/revoke", limitForm(u.signin.guard(false, http.HandlerFunc(u.ServeUpstreamRevoke)))).Methods("POST")
}

// limitForm bounds a form's body before the guard reads its CSRF field.
func limitForm(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, upstreamFormMax)
		next.ServeHTTP(w, r)
	})
}

// ServeUpstream is the Upstream sign-in page (?revoked= says what a revocation forgot).
func (u upstreamPage) ServeUpstream(w http.ResponseWriter, r *http.Request) {
	revoked := r.URL.Query().Get("revoked")
	if len(revoked) > 1200 { // a server and a subject at most; longer is not ours
		revoked = ""
	}
	u.render(w, r, upstreamData{Revoked: revoked})
}

// render answers the page with d and the upstreams and grants the store keeps now.
func (u upstreamPage) render(w http.ResponseWriter, r *http.Request, d upstreamData) {
	list, err := admin.ListUpstreamGrants(u.port, "", "")
	if err != nil {
		u.view.StoreTrouble(w, r, err)
		return
	}
	csrf := ""
	if s := uiSessionFrom(r); s != nil {
		csrf = s.csrf
	}
	byName := map[string]int{}
	for _, s := range list.Servers {
		byName[s.Name] = len(d.Servers)
		d.Servers = append(d.Servers, upstreamServer{OAuthServerRow: s, Table: grantTable{Name: s.Name, CSRF: csrf}})
	}
	d.Orphans = grantTable{Name: "servers no longer configured", CSRF: csrf}
	for _, g := range list.Grants {
		if i, ok := byName[g.Server]; ok {
			d.Servers[i].Table.Grants = append(d.Servers[i].Table.Grants, g)
		} else {
			d.Orphans.Grants = append(d.Orphans.Grants, g)
		}
	}
	status := http.StatusOK
	if d.Status != 0 {
		status = d.Status
	}
	u.view.Render(w, r, status, "upstream", "Upstream sign-in", d)
}

// formError answers a refused form: the page again, with the refusal at the top.
func (u upstreamPage) formError(w http.ResponseWriter, r *http.Request, err error) {
	d := upstreamData{Error: err.Error(), Status: http.StatusInternalServerError}
	var ge *admin.GrantError
	if errors.As(err, &ge) {
		d.Status = ge.Status
	}
	u.render(w, r, d)
}

// readForm parses the posted form; a body over the bound is a 413.
func (u upstreamPage) readForm(w http.ResponseWriter, r *http.Request) bool {
	if err := r.ParseForm(); err != nil {
		var mb *http.MaxBytesError
		status := http.StatusBadRequest
		if errors.As(err, &mb) {
			status = http.StatusRequestEntityTooLarge
		}
		u.formError(w, r, &admin.GrantError{Status: status, Msg: "the form could not be read: " + err.Error()})
		return false
	}
	return true
}

// ServeUpstreamConnect starts an authorization of the posted server (and subject, for a
// per-user grant) and shows the page with the consent URL to open.
func (u upstreamPage) ServeUpstreamConnect(w http.ResponseWriter, r *http.Request) {
	if !u.readForm(w, r) {
		return
	}
	server, subject := r.PostForm.Get("server"), r.PostForm.Get("subject")
	cs, err := admin.ConnectUpstream(r.Context(), u.port, server, subject)
	if err != nil {
		u.formError(w, r, err)
		return
	}
	admin.AuditWrite(u.port, r, admin.GrantObject(server, subject), "started", nil, map[string]string{"subject": subject})
	u.render(w, r, upstreamData{Consent: &upstreamConsent{Server: server, Subject: subject, URL: cs.URL, Code: cs.Code}})
}

// ServeUpstreamRevoke forgets the posted grant and goes back to the page.
func (u upstreamPage) ServeUpstreamRevoke(w http.ResponseWriter, r *http.Request) {
	if !u.readForm(w, r) {
		return
	}
	server, subject := r.PostForm.Get("server"), r.PostForm.Get("subject")
	g, err := admin.RevokeUpstream(u.port, server, subject)
	if err != nil {
		u.formError(w, r, err)
		return
	}
	admin.AuditWrite(u.port, r, admin.GrantObject(server, subject), "revoked", g, nil)
	what := server
	if subject != "" {
		what += " for " + subject
	}
	http.Redirect(w, r, "/ui/upstream?revoked="+url.QueryEscape(what), http.StatusSeeOther)
}
