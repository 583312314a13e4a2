package gateway

import (
	"context"
	"fmt"
	"net/http"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/admin"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/store"
)

// adminPort is the gateway as the admin API and the web UI see it (the ports of
// internal/gateway/internal/admin and internal/gateway/internal/ui): a thin adapter, so that what they may
// do to the gateway is this file's methods and not the Gateway's whole method set. Its
// methods are those of its four parts, one per concern.
type adminPort struct {
	adminGuard
	adminConfig
	adminSessions
	adminServers
}

func newAdminPort(g *Gateway) adminPort {
	return adminPort{adminGuard{g}, adminConfig{g}, adminSessions{g}, adminServers{g}}
}

// adminGuard is who may use the admin API and the UI: origins, the local owner,
// credentials and their slowing, the audit.
type adminGuard struct{ g *Gateway }

// CheckOrigin refuses a request from an Origin the gateway does not serve.
func (p adminGuard) CheckOrigin(w http.ResponseWriter, r *http.Request) bool {
	return p.g.gate.checkOrigin(w, r)
}

// LocalOwner names the local owner, who may use the admin API and the UI without a
// credential while auth is off and no admin token is set.
func (p adminGuard) LocalOwner(r *http.Request) (string, bool) {
	cfg := p.g.policy().cfg
	if cfg.Auth.AdminToken != "" || cfg.Auth.Mode != "none" {
		return "", false
	}
	return p.g.gate.localOwner(r)
}

// Slowed is the refusal for a source that sent too many wrong credentials.
func (p adminGuard) Slowed(r *http.Request) *auth.Failure { return p.g.gate.slowed(r) }

// AdminCredential checks tok as an admin credential.
func (p adminGuard) AdminCredential(ctx context.Context, tok string) (actor string, ok, valid bool) {
	return p.g.gate.adminCredential(ctx, tok)
}

// CredentialFailed counts a wrong credential from r's source.
func (p adminGuard) CredentialFailed(r *http.Request, where string) {
	p.g.gate.credentialFailed(r, where)
}

// CredentialSucceeded forgets r's source's wrong credentials.
func (p adminGuard) CredentialSucceeded(r *http.Request) {
	p.g.gate.signins.Succeeded(p.g.gate.sourceOf(r))
}

// Audit records one audit event.
func (p adminGuard) Audit(ev auth.AuditEvent) { p.g.audit.Record(ev) }

// PeerUser names the local user at the far end of r's connection (ui.Port), where the OS
// tells.
func (p adminGuard) PeerUser(r *http.Request) (int, bool) { return p.g.gate.local.PeerUser(r) }

// adminConfig is the config the API edits and applies, and the agents, executors, tasks
// and projects it defines.
type adminConfig struct{ g *Gateway }

// Config is the running config.
func (p adminConfig) Config() *config.Config { return p.g.policy().cfg }

// FileConfig is the config as the file gave it.
func (p adminConfig) FileConfig() *config.Config { return p.g.FileConfig() }

// Store is the session store, where the API's config entries and tasks are kept.
func (p adminConfig) Store() admin.Store { return p.g.configStore }

// LockConfig takes cfgMu, which serialises computing and applying the running config
// (controlplane.go).
func (p adminConfig) LockConfig() (unlock func()) {
	p.g.cfgMu.Lock()
	return p.g.cfgMu.Unlock
}

// Apply reloads the gateway with cfg and, once it runs, tells the other replicas.
func (p adminConfig) Apply(cfg *config.Config) error {
	if err := p.g.Reload(cfg); err != nil {
		return err
	}
	p.g.PublishReload()
	return nil
}

// Task is a task by id, stored or the file's.
func (p adminConfig) Task(id string) (*store.Task, error) { return p.g.gate.task(id) }

// Explain is Gateway.Explain.
func (p adminConfig) Explain(agent, task, executor string) (any, *auth.Failure) {
	return p.g.Explain(agent, task, executor)
}

// AgentViews are the admin API's agents (the UI's Agents page).
func (p adminConfig) AgentViews() ([]map[string]any, error) { return p.g.admin.AgentViews() }

// ExecutorViews are the admin API's executors (the UI's Executors page).
func (p adminConfig) ExecutorViews() ([]map[string]any, error) { return p.g.admin.ExecutorViews() }

// AllTasks are the file's and the API's tasks.
func (p adminConfig) AllTasks() ([]*store.Task, error) { return p.g.admin.AllTasks() }

// ProjectViews are the admin API's projects (the UI's Projects page).
func (p adminConfig) ProjectViews() ([]map[string]any, error) { return p.g.admin.ProjectViews() }

// adminSessions is the sessions: stored, live here, ended by an admin; and the usage
// they made (adminusage.go).
type adminSessions struct{ g *Gateway }

// SessionCount is how many sessions are live.
func (p adminSessions) SessionCount() int { return p.g.live.sessionCount() }

// SessionRecords lists the session store.
func (p adminSessions) SessionRecords() ([]*store.Record, error) { return p.g.store.List() }

// SessionRecord reads one session from the store.
func (p adminSessions) SessionRecord(id string) (*store.Record, error) { return p.g.store.Get(id) }

// SessionRow is a stored session with what this process knows of it.
func (p adminSessions) SessionRow(rec *store.Record) admin.SessionRow { return p.g.sessionRowOf(rec) }

// SessionView is the tools in a live session's view.
func (p adminSessions) SessionView(id string) ([]admin.SessionTool, bool) {
	s := p.g.live.liveSession(id)
	if s == nil || s.IsClosed() {
		return nil, false
	}
	var tools []admin.SessionTool
	for _, t := range s.View().Tools {
		tools = append(tools, admin.SessionTool{Name: t.Exposed, Server: t.Server, Tool: t.Name})
	}
	return tools, true
}

// EndSession ends a session: its instances stop and it leaves the store.
func (p adminSessions) EndSession(id, reason string) error { return p.g.endSession(id, reason) }

// adminServers is the servers and plugins the registry runs, their integrity pins and
// their upstream grants.
type adminServers struct{ g *Gateway }

// PluginStatuses are the registry's plugins' states.
func (p adminServers) PluginStatuses() []registry.PluginStatus { return p.g.reg.PluginStatuses() }

// Plugin is the registry's plugin of that name (nil: none).
func (p adminServers) Plugin(name string) *registry.Plugin { return p.g.reg.Plugin(name) }

// RestartServer restarts a configured server (selfplugin.go).
func (p adminServers) RestartServer(name string) error { return p.g.RestartServer(name) }

// RestartPlugin replaces a plugin by a new one of the same definition.
func (p adminServers) RestartPlugin(name string) error {
	pl := p.g.reg.Plugin(name)
	if pl == nil {
		return fmt.Errorf("no plugin %q", name)
	}
	return pl.Restart()
}

// PluginRows are the admin API's plugins (the UI's Plugins page).
func (p adminServers) PluginRows() []admin.PluginRow { return p.g.admin.PluginRows() }

// ServerStatus is a running server's state.
func (p adminServers) ServerStatus(name string) (registry.Status, bool) {
	s := p.g.reg.Server(name)
	if s == nil {
		return registry.Status{}, false
	}
	return s.Status(), true
}

// Probe connects to a server once (the test connection).
func (p adminServers) Probe(ctx context.Context, name string, def *config.ServerDef) (*registry.Catalog, error) {
	return p.g.reg.Probe(ctx, name, def)
}

// ServerViews are the admin API's servers (the UI's Servers page).
func (p adminServers) ServerViews() ([]admin.ServerView, error) { return p.g.admin.ServerViews() }

// Instances is how many instances of a server run now.
func (p adminServers) Instances(server string) int64 { return p.g.reg.Instances().Count(server) }

func (p adminServers) Integrity() *registry.Integrity { return p.g.reg.Integrity() }

// IntegrityDecided tells the other replicas that an admin approved or rejected
// definitions of server, so that they read the pins again.
func (p adminServers) IntegrityDecided(server string) { p.g.replicas.publish("integrity", server) }

// IntegrityRows are the admin API's integrity records (the UI's Integrity page).
func (p adminServers) IntegrityRows(q admin.IntegrityQuery) (admin.IntegrityPage, error) {
	return p.g.admin.IntegrityRows(q)
}

// IntegrityWaiting is how many definitions of all servers and plugins wait for an admin's
// decision, held or (policy warn) served while they wait: the count beside the UI's
// Integrity link.
func (p adminServers) IntegrityWaiting() int {
	n := 0
	for _, pin := range p.g.reg.Integrity().Pins() {
		if pin.Held != nil && !pin.Held.Rejected && pin.Kind != "server" {
			n++
		}
	}
	return n
}

// UpstreamAuth is the registry's upstream authorization part, for the admin API's and the
// web UI's upstream grants.
func (p adminServers) UpstreamAuth() admin.UpstreamAuth { return p.g.reg.UpstreamAuth() }
