package gateway

import (
	"errors"
	"html"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/reply"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/sealbox"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// Upstream authorization (docs/auth.md, "Upstream authorization"): the registry holds the
// grants; the gateway starts its token manager over the session store, and serves where
// a person starts an authorization (/oauth/connect/{server}), the consent page that binds
// it to the browser of whoever asked (/oauth/consent/{state}, upstreamconsent.go), and
// where the authorization server sends them back (/oauth/callback).

// UpstreamKeysEnv names the environment variable of the sealing keys when the config
// gives none.
const UpstreamKeysEnv = "MCPGW_UPSTREAM_KEYS"

// upstreamKeyFile is the key file in the state directory of a gateway with no keys given.
const upstreamKeyFile = "upstream.key"

// useUpstreamAuth starts the registry's upstream token manager when a server of cfg is an
// OAuth upstream and it is not running yet. Its keys and settings are those of the config
// that first had one: changing them takes a restart.
func useUpstreamAuth(g *Gateway, cfg *config.Config) error {
	if !config.HasUpstreamOAuth(cfg.Servers) || g.reg.UpstreamAuth().InUse() {
		return nil
	}
	ring, err := upstreamKeys(cfg)
	if err != nil {
		return err
	}
	u := cfg.UpstreamCredentials
	g.reg.UpstreamAuth().Use(registry.UpstreamAuthOptions{Store: g.store, Ring: ring,
		HTTP:        oauthHTTPClient(),
		CallbackURL: u.CallbackURL, RefreshBefore: u.RefreshBefore, FlowTimeout: u.FlowTimeout,
		ClientName: "mcpgw"})
	return nil
}

// oauthHTTPClient reaches authorization servers. Each request has a connection of its
// own: token requests are rare (a grant, a refresh near each expiry), and a POST sent on a
// kept-alive connection the server closes at that moment fails without being processed,
// which would fail the caller's call for a refresh that never happened (Go does not send
// a POST again). TestUpstreamOAuthRefreshOnClosingConnection holds this.
func oauthHTTPClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableKeepAlives = true
	return &http.Client{Timeout: 30 * time.Second, Transport: tr}
}

// upstreamKeys are the keys that seal upstream tokens: the config's, else the
// environment's, else the state directory's key file (made on first use).
func upstreamKeys(cfg *config.Config) (*sealbox.Ring, error) {
	keys := cfg.UpstreamCredentials.Keys
	if keys == "" {
		keys = os.Getenv(UpstreamKeysEnv)
	}
	if keys != "" {
		r, err := sealbox.ParseKeys(keys)
		if err != nil {
			return nil, errors.New("upstream_credentials.keys: " + err.Error())
		}
		return r, nil
	}
	if cfg.StateDir == "" {
		return nil, errors.New("upstream_credentials.keys: no keys given and no state directory to keep one in")
	}
	return sealbox.LoadOrCreate(filepath.Join(cfg.StateDir, upstreamKeyFile))
}

// oauthPort is the gateway's end of upstream authorization: where a person starts one and
// where the authorization server sends them back.
type oauthPort struct{ g *Gateway }

// serveConnect starts an authorization at the server the path names and sends the
// browser to it. The caller is identified as on /mcp: a per-user grant is the caller's
// own; a server-wide grant is given by the gateway's owner (the local owner, or a holder
// of an admin credential).
func (p oauthPort) serveConnect(w http.ResponseWriter, r *http.Request) {
	g := p.g
	if !onlyGet(w, r) {
		return
	}
	server := strings.TrimPrefix(r.URL.Path, "/oauth/connect/")
	srv := g.reg.Server(server)
	if srv == nil || !srv.Def.Auth.OAuth() {
		reply.Error(w, http.StatusNotFound, wire.CodeInvalidRequest, "no OAuth upstream named "+server)
		return
	}
	var subject string
	if srv.Def.Auth.Per == config.AuthPerServer {
		if !p.mayGrantServer(r) {
			reply.Error(w, http.StatusForbidden, wire.CodeConnection,
				"Forbidden: the server-wide grant of "+server+" is given by the gateway's owner or an admin")
			return
		}
	} else {
		id, ok := g.gate.authenticate(w, r)
		if !ok {
			return
		}
		subject = session.Subject(id.Principal, id.Agent)
		if subject == "" {
			reply.Error(w, http.StatusBadRequest, wire.CodeInvalidRequest, "Bad Request: a per-user grant needs an identity (X-Agent-ID or a credential)")
			return
		}
	}
	// The caller proved here who it is (as on /mcp, or as the owner): this browser is the
	// one bound, and goes straight on to the authorization server.
	cs, err := g.reg.UpstreamAuth().ConsentURL(r.Context(), server, subject)
	var authURL, binding string
	state := cs.URL[strings.LastIndex(cs.URL, "/")+1:]
	if err == nil {
		authURL, binding, err = g.reg.UpstreamAuth().ConfirmConsent(state, cs.Code)
	}
	if err != nil {
		g.log.Warn("upstream authorization could not start", "server", server, "err", err)
		reply.Error(w, http.StatusBadGateway, wire.CodeInternalError, "the authorization of "+server+" could not start: "+err.Error())
		return
	}
	p.bindBrowser(w, r, state, binding)
	http.Redirect(w, r, authURL, http.StatusFound)
}

// mayGrantServer reports whether r may give a server-wide grant: the local owner while
// auth is off, or a holder of an admin credential.
func (p oauthPort) mayGrantServer(r *http.Request) bool {
	g := p.g
	if _, ok := (adminGuard{g}).LocalOwner(r); ok {
		return true
	}
	tok, has := auth.BearerToken(r.Header.Get("Authorization"))
	if !has {
		return false
	}
	_, ok, _ := g.gate.adminCredential(r.Context(), tok)
	return ok
}

// onlyGet refuses any method but GET (405 with Allow); false means it answered.
func onlyGet(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet {
		return true
	}
	w.Header().Set("Allow", "GET")
	reply.Error(w, http.StatusMethodNotAllowed, wire.CodeConnection, "Method not allowed")
	return false
}

// serveCallback is where an authorization server sends the person back: the
// authorization its state names is completed, once.
func (p oauthPort) serveCallback(w http.ResponseWriter, r *http.Request) {
	g := p.g
	if !onlyGet(w, r) {
		return
	}
	state := r.URL.Query().Get("state")
	done, err := g.reg.UpstreamAuth().Complete(r.Context(), r.URL.Query(), browserBinding(r, state))
	pageHeaders(w)
	http.SetCookie(w, &http.Cookie{Name: consentCookieName(state), Value: "", Path: "/", MaxAge: -1})
	if err != nil {
		g.log.Warn("upstream authorization failed", "server", done.Server, "err", err)
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte("<!doctype html><title>mcpgw</title><p>The authorization failed: " + html.EscapeString(err.Error()) + "</p>"))
		return
	}
	g.audit.Record(auth.AuditEvent{Kind: "upstream_grant", Agent: done.Subject, Outcome: "granted", Rule: done.Server})
	go g.calls.ConsentGiven(done.Server, done.Subject)
	_, _ = w.Write([]byte("<!doctype html><title>mcpgw</title><p>mcpgw may now use " + html.EscapeString(done.Server) + " for you. You can close this window.</p>"))
}
