package admin

import (
	"context"
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/telemetry"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/store"
)

// Guard is who may use the admin API and the web UI: the origin check, local trust, the
// admin credential check with its per-source back-off, and the audit log. The admin Port
// and the UI's both start with it.
type Guard interface {
	// CheckOrigin refuses (false, answered) a request from an Origin the gateway does not
	// serve.
	CheckOrigin(w http.ResponseWriter, r *http.Request) bool
	// LocalOwner names the caller when it is the user who runs the gateway on this host
	// and may come in without a credential: only while auth is off and no admin token is
	// set.
	LocalOwner(r *http.Request) (who string, ok bool)
	// Slowed is the refusal for a source that sent too many wrong credentials (nil: none).
	Slowed(r *http.Request) *auth.Failure
	// AdminCredential checks tok as an admin credential (the admin token, the local token,
	// an admin key, a token with the admin scope): ok names its actor; valid without ok
	// is a good credential that is not an admin's.
	AdminCredential(ctx context.Context, tok string) (actor string, ok, valid bool)
	// CredentialFailed and CredentialSucceeded count a wrong or a good credential from
	// r's source for the back-off (and the audit log).
	CredentialFailed(r *http.Request, where string)
	CredentialSucceeded(r *http.Request)
	// Audit records one audit event.
	Audit(ev auth.AuditEvent)
}

// Port is what the admin API needs of the running gateway. The gateway implements it with
// a thin adapter; nothing here reaches the gateway any other way.
type Port interface {
	Guard
	// Config is the running config: the file's merged with the API's stored entries.
	Config() *config.Config
	// SessionCount is how many sessions are live.
	SessionCount() int
	// PluginStatuses and Plugin are the plugins the registry runs.
	PluginStatuses() []registry.PluginStatus
	Plugin(name string) *registry.Plugin
	// RestartServer replaces a server's connection by a new one (registry.ErrNoServer:
	// none of that name; registry.ErrRetired: it is going away).
	RestartServer(name string) error
	// RestartPlugin replaces a plugin by a new one of the same definition (an error: none
	// of that name).
	RestartPlugin(name string) error
	// SessionRecords and SessionRecord read the session store (store.ErrNotFound: no
	// such session); SessionRow adds what this process knows of a live one.
	SessionRecords() ([]*store.Record, error)
	SessionRecord(id string) (*store.Record, error)
	SessionRow(rec *store.Record) SessionRow
	// SessionView is the tools in a session's view, when it is live and open here.
	SessionView(id string) (tools []SessionTool, live bool)
	// EndSession ends a session as its client's DELETE would, for reason.
	EndSession(id, reason string) error

	// FileConfig is the config as the file (or the embedded defaults) gave it: what the
	// stored entries are merged into (Merge).
	FileConfig() *config.Config
	// Store keeps the entries the API creates and the tasks.
	Store() Store
	// LockConfig takes the lock that serialises computing and applying the running config
	// (a file reload takes it too); the function it returns gives it back.
	LockConfig() (unlock func())
	// Apply makes cfg the running config (the gateway's Reload) and tells the other
	// replicas; an error leaves the running config as it was.
	Apply(cfg *config.Config) error
	// ServerStatus is a running server's state (false: it does not run).
	ServerStatus(name string) (registry.Status, bool)
	// Probe connects to a server defined by def once and reads its catalogue, changing
	// nothing.
	Probe(ctx context.Context, name string, def *config.ServerDef) (*registry.Catalog, error)
	// Task is a task by id, stored or the file's (store.ErrNotFound: none).
	Task(id string) (*store.Task, error)
	// Explain is what an agent (with a task and an executor) may see, tool by tool.
	Explain(agent, task, executor string) (view any, fail *auth.Failure)
	// Integrity is the registry's integrity part (pins, holds, decisions);
	// IntegrityDecided tells the other replicas that definitions of server were approved
	// or rejected.
	Integrity() *registry.Integrity
	IntegrityDecided(server string)
	// UpstreamAuth is the registry's upstream authorization part: the kept grants,
	// consent URLs, revocation (GET/POST/DELETE /api/upstream-grants).
	UpstreamAuth() UpstreamAuth
	// Skills are the skills the running servers list (only server's, when not empty),
	// with what integrity holds of them (GET /api/skills).
	Skills(server string) []SkillRow
	// Usage is the last window (at most an hour) of tool calls and tools/list tokens,
	// from the gateway's own metrics (GET /api/usage).
	Usage(window time.Duration) *telemetry.UsageReport
}

// Store is the part of the session store the admin API keeps its config entries and the
// tasks in (store.Store has it).
type Store interface {
	ListConfig() ([]*store.ConfigEntry, error)
	GetConfig(kind, name string) (*store.ConfigEntry, error)
	PutConfig(e *store.ConfigEntry) error
	DeleteConfig(kind, name string) error
	ListTasks() ([]*store.Task, error)
	GetTask(id string) (*store.Task, error)
	PutTask(t *store.Task) error
	DeleteTask(id string) error
}

// Guard guards the admin API: the admin token (auth.admin_token) as a bearer
// token, or, when no admin token is set and auth is off, a loopback caller. It also
// makes gorilla/mux's path variables readable with r.PathValue.
func (a *API) Guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !a.port.CheckOrigin(w, r) {
			return
		}
		actor, cred, ok := a.actor(w, r)
		if !ok {
			return
		}
		for k, v := range mux.Vars(r) {
			r.SetPathValue(k, v)
		}
		next.ServeHTTP(w, r.WithContext(WithCaller(r.Context(), actor, cred)))
	})
}

// Credentials names what the admin API takes, for its refusals.
const Credentials = "the gateway's local token (state_dir/local-token; the CLI reads it), auth.admin_token, an admin key (mcpgw token create-key --admin) or a token with the mcpgw:admin scope"

// actor decides whether a request may use the admin API and names its caller: a
// bearer token that is an admin credential (Port.AdminCredential); without a token, the local
// owner (Port.LocalOwner). cred reports a
// caller that showed a credential. Otherwise it answers 401 (a token was wrong, or none
// was sent), 403 (a good credential, not an admin's) or 429 (too many wrong ones).
func (a *API) actor(w http.ResponseWriter, r *http.Request) (actor string, cred, ok bool) {
	if tok, has := auth.BearerToken(r.Header.Get("Authorization")); has && tok != "" {
		if fail := a.port.Slowed(r); fail != nil {
			w.Header().Set("Retry-After", fail.RetryAfter)
			Error(w, fail.Status, fail.Message)
			return "", false, false
		}
		actor, ok, valid := a.port.AdminCredential(r.Context(), tok)
		if ok {
			a.port.CredentialSucceeded(r)
			return actor, true, true
		}
		if valid {
			Error(w, http.StatusForbidden, "this credential is not an admin's: the admin API takes "+Credentials)
			return "", false, false
		}
		a.port.CredentialFailed(r, "admin API")
		w.Header().Set("WWW-Authenticate", `Bearer realm="mcpgw-admin"`)
		Error(w, http.StatusUnauthorized, "admin credential wrong: send "+Credentials)
		return "", false, false
	}
	if who, ok := a.port.LocalOwner(r); ok {
		return who, false, true
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="mcpgw-admin"`)
	Error(w, http.StatusUnauthorized, "the admin API needs a credential: "+Credentials)
	return "", false, false
}
