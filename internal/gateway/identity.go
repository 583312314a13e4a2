package gateway

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strconv"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/connshare"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/localtrust"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/reply"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/signin"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/store"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// policy is the part of the config that a reload may change: agents, executors, tasks
// and credentials. Requests read it through one atomic pointer.
type policy struct {
	cfg   *config.Config
	authn *auth.Authenticator
	gen   uint64
	// proxies is http.trusted_proxies, parsed.
	proxies []netip.Prefix
	// exchanging: an upstream takes tokens exchanged for the callers' own, so a caller's
	// bearer token is noted for it (registry.Exchanging).
	exchanging bool
}

func (g *Gateway) policy() *policy { return g.pol.Load() }

// gatekeeper decides who a caller is and what it may do: credentials and the local owner,
// the session's agent, task and executor and their re-resolution after a reload, the
// refusals. local decides who on this host is believed without a credential
// (localtrust.go); signins slows wrong credentials per source (signin.go).
type gatekeeper struct {
	g       *Gateway
	local   localtrust.Trust
	signins signin.Guard
	// refusals counts the refusals of callers not known (signin.Tally), so that only
	// some are audit lines.
	refusals signin.Tally
}

// authenticate establishes the caller's identity or writes the refusal.
func (gk *gatekeeper) authenticate(w http.ResponseWriter, r *http.Request) (*auth.Identity, bool) {
	g := gk.g
	pol := g.policy()
	// An agent's key or JWT is not slowed when wrong: neither can be guessed (a key is 256
	// random bits, a JWT is signed), and slowing a source would let one broken client
	// behind a shared address lock out the others. Admin credentials and the local token,
	// which a person may choose or copy, are (signin.go).
	if pol.cfg.Auth.Mode == "none" && !pol.cfg.Auth.AllowNonLoopback {
		if fail := gk.localOnly(r); fail != nil {
			gk.refuseUnauthenticated(w, r, fail, nil)
			return nil, false
		}
	}
	id, fail := pol.authn.Authenticate(r.Context(), r)
	if fail != nil {
		gk.refuseUnauthenticated(w, r, fail, id)
		return nil, false
	}
	noteCallerToken(g, pol, id, r)
	// The connection is an admitted caller's: it draws on the reserve of
	// http.max_connections that strangers cannot take (connshare).
	connshare.Admit(r.Context())
	return id, true
}

// noteCallerToken keeps the bearer token of r, whose caller is id, for the upstreams that
// take tokens exchanged for it (registry.UpstreamAuth.NoteCallerToken).
func noteCallerToken(g *Gateway, pol *policy, id *auth.Identity, r *http.Request) {
	if !pol.exchanging {
		return
	}
	if tok, ok := auth.BearerToken(r.Header.Get("Authorization")); ok {
		g.reg.UpstreamAuth().NoteCallerToken(session.Subject(id.Principal, id.Agent), tok)
	}
}

// refuse answers a refusal of a caller whose identity is id: counted, an audit line, and
// the error.
func (gk *gatekeeper) refuse(w http.ResponseWriter, fail *auth.Failure, id *auth.Identity) {
	agent := gk.denied(fail, id)
	gk.g.audit.Record(auth.AuditEvent{Kind: "denial", Agent: agent, Outcome: "refused", Rule: fail.Message})
	answerRefusal(w, fail)
}

// refuseUnauthenticated answers a request whose caller could not be established (no
// credential, a wrong one, a source that may not): it is counted, and audited per source,
// each of the first ten, then every tenth, so a flood of them cannot fill the audit log
// (the metric still counts every one).
func (gk *gatekeeper) refuseUnauthenticated(w http.ResponseWriter, r *http.Request, fail *auth.Failure, id *auth.Identity) {
	agent := gk.denied(fail, id)
	src := gk.sourceOf(r)
	if n, sampled := gk.refusals.Count(src); sampled {
		gk.g.audit.Record(auth.AuditEvent{Kind: "denial", Agent: agent, Actor: src, Outcome: "refused",
			Rule: fail.Message + " (" + strconv.Itoa(n) + " from this source)"})
	}
	answerRefusal(w, fail)
}

// denied counts a refusal in the metrics and returns the agent the caller named.
func (gk *gatekeeper) denied(fail *auth.Failure, id *auth.Identity) string {
	g := gk.g
	agent, label := "", "unauthenticated"
	if id != nil {
		agent = id.Agent
		cfg := g.policy().cfg
		if _, known := cfg.Agents[agent]; known || (len(cfg.Agents) == 0 && agent != "") {
			label = g.metrics.AgentLabel(agent)
		} else {
			label = "unknown" // refused names must not take the bounded label's slots
		}
	}
	g.metrics.Denied(label, fail.Reason)
	return agent
}

func answerRefusal(w http.ResponseWriter, fail *auth.Failure) {
	if fail.WWWAuthenticate != "" {
		w.Header().Set("WWW-Authenticate", fail.WWWAuthenticate)
	}
	if fail.RetryAfter != "" {
		w.Header().Set("Retry-After", fail.RetryAfter)
	}
	reply.Error(w, fail.Status, wire.CodeConnection, fail.Message)
}

// continueSession checks that a request may use session s: same principal. In mode none a
// request that names no agent continues as the session's agent.
func (gk *gatekeeper) continueSession(w http.ResponseWriter, id *auth.Identity, s *session.Session) bool {
	if id.Method == "header" && id.Agent == "" {
		return true
	}
	if id.Principal != s.Rec.Principal {
		gk.refuse(w, &auth.Failure{Status: http.StatusForbidden, Reason: "session_principal",
			Message: "Forbidden: this session belongs to another principal"}, id)
		return false
	}
	return true
}

// startIdentity resolves the server set of a new session, or refuses.
func (gk *gatekeeper) startIdentity(ctx context.Context, id *auth.Identity, rec *store.Record) *auth.Failure {
	g := gk.g
	pol := g.policy()
	if id.Agent == "" {
		return pol.authn.NoAgent()
	}
	var taskServers []string
	if id.Task != "" {
		t, err := gk.task(id.Task)
		if err != nil {
			return &auth.Failure{Status: http.StatusForbidden, Reason: "unknown_task",
				Message: fmt.Sprintf("Forbidden: task %q does not exist", id.Task)}
		}
		if t.Agent != "" && t.Agent != id.Agent {
			return &auth.Failure{Status: http.StatusForbidden, Reason: "task_agent",
				Message: fmt.Sprintf("Forbidden: task %q belongs to agent %q", id.Task, t.Agent)}
		}
		taskServers = t.EnabledMCPServers
		if taskServers == nil {
			taskServers = []string{}
		}
		id.Project = t.Project
	}
	res, fail := auth.Resolve(pol.cfg, id, taskServers)
	if fail != nil {
		return fail
	}
	for _, w := range res.Warnings {
		g.log.Warn("session resolution", "agent", id.Agent, "task", id.Task, "warning", w)
	}
	rec.Agent, rec.Conversation, rec.Task, rec.Executor = id.Agent, id.Conversation, id.Task, res.Executor
	rec.Principal = id.Principal
	rec.Servers = res.Servers
	if rec.Servers == nil {
		rec.Servers = []string{}
	}
	if len(res.Overrides) > 0 {
		rec.Overrides = make(map[string]store.Override, len(res.Overrides))
		for k, o := range res.Overrides {
			rec.Overrides[k] = store.Override(o)
		}
	}
	if c := id.Claims; c != nil && (c.Servers != nil || c.Tools != nil || c.ReadOnly || c.ConnectionScope != nil) {
		rec.Narrow = &store.Narrow{Servers: c.Servers, Tools: c.Tools, ReadOnly: c.ReadOnly,
			HasServers: c.Servers != nil, HasTools: c.Tools != nil,
			Connections: c.ConnectionScope, HasConnections: c.ConnectionScope != nil}
	}
	return nil
}

// task finds a task: the store first (admin API), then the config file.
func (gk *gatekeeper) task(id string) (*store.Task, error) {
	g := gk.g
	if t, err := g.store.GetTask(id); err == nil {
		return t, nil
	}
	if tc := g.policy().cfg.Tasks[id]; tc != nil {
		return &store.Task{ID: id, EnabledMCPServers: tc.EnabledMCPServers, Agent: tc.Agent, Project: tc.Project, FileManaged: true}, nil
	}
	return nil, store.ErrNotFound
}

// reresolve recomputes a live session's server set under the current policy: the servers
// its agent, executor, task and credential allow now. A task session also keeps the
// servers it started with that have since been removed from the config (they are retired,
// not stopped, while it runs): a running task is never changed under its feet. It
// reports whether the set changed.
func (gk *gatekeeper) reresolve(s *session.Session) bool {
	g := gk.g
	if why := gk.identityGone(&s.Rec); why != "" {
		// Its identity would be refused a new session now: it is refused this one too.
		g.metrics.Evicted(evictIdentity)
		g.live.end(s, why)
		return true
	}
	pol := g.policy()
	id := identityOf(&s.Rec)
	var taskServers []string
	if id.Task != "" {
		if t, err := gk.task(id.Task); err == nil {
			taskServers, id.Project = t.EnabledMCPServers, t.Project
		}
		if taskServers == nil {
			taskServers = []string{}
		}
	}
	res, fail := auth.Resolve(pol.cfg, id, taskServers)
	if fail != nil {
		// The agent or executor is gone: the session keeps nothing but what a task holds.
		res = &auth.Resolution{}
	}
	next := res.Servers
	old := s.Servers()
	if id.Task != "" {
		for _, name := range old {
			if _, configured := pol.cfg.Servers[name]; !configured && g.reg.Server(name) != nil && !slices.Contains(next, name) {
				next = append(next, name)
			}
		}
		slices.Sort(next)
	}
	if next == nil {
		next = []string{}
	}
	if slices.Equal(next, old) {
		return false
	}
	g.log.Info("session servers changed", "session", s.ID, "agent", id.Agent, "task", id.Task, "servers", next, "before", old)
	s.SetServers(next)
	return true
}

// identityGone says why the identity that created a session no longer admits it under
// the current policy, or "" when it does. A session is bound to its agent: once agents are
// defined, an agent that is not among them (deleted, or the implicit "default" of a config
// that had none) or is disabled would be refused a new session (auth.md), so its existing
// sessions end too, whatever a later request's headers say. Narrower permissions do not
// end a session: its view is recomputed and it is told (list_changed).
func (gk *gatekeeper) identityGone(rec *store.Record) string {
	g := gk.g
	agents := g.policy().cfg.Agents
	if len(agents) == 0 {
		return ""
	}
	ac, ok := agents[rec.Agent]
	switch {
	case !ok:
		return fmt.Sprintf("its agent %q is no longer configured", rec.Agent)
	case ac != nil && ac.Enabled != nil && !*ac.Enabled:
		return fmt.Sprintf("its agent %q is disabled", rec.Agent)
	}
	return ""
}

// identityOf rebuilds a session's identity from its record (for its filter).
func identityOf(rec *store.Record) *auth.Identity {
	id := &auth.Identity{Agent: rec.Agent, Conversation: rec.Conversation, Task: rec.Task, Executor: rec.Executor, Principal: rec.Principal}
	if n := rec.Narrow; n != nil {
		id.Claims = &auth.Claims{Agent: rec.Agent, ReadOnly: n.ReadOnly}
		if n.HasServers {
			id.Claims.Servers = append([]string{}, n.Servers...)
		}
		if n.HasTools {
			id.Claims.Tools = append([]string{}, n.Tools...)
		}
		if n.HasConnections {
			id.Claims.ConnectionScope = append([]string{}, n.Connections...)
		}
	}
	return id
}

// filter returns the session's decision function under the current policy.
func (gk *gatekeeper) filter(s *session.Session) *auth.Filter {
	pol := gk.g.policy()
	return s.Shown.Filter(pol.gen, func() *auth.Filter { return auth.NewFilter(pol.cfg, identityOf(&s.Rec)) })
}

// refusal says why a tool call the session's view lacks is refused (the dispatcher's
// observer records it): hidden, with the rule that hides it, when the session's servers
// hold the tool, else unknown.
func (gk *gatekeeper) refusal(s *session.Session, tool string) (reason, rule string) {
	g := gk.g
	rule = "unknown tool"
	for _, name := range s.Servers() {
		var cat *registry.Catalog
		if srv := g.reg.Server(name); srv != nil {
			cat = srv.Catalog()
		} else if p := g.reg.Plugin(name); p != nil {
			cat = p.CatalogFor(pluginScope(s.Filter().PluginScope()), s.Caps.Elicitation)
		}
		if cat != nil {
			for _, t := range cat.Tools {
				if t.Exposed == tool {
					_, rule = s.Filter().Tool(t.Server, t.Exposed, t.ReadOnly, t.OtherNames()...)
				}
			}
		}
	}
	if rule != "unknown tool" {
		return "hidden_tool", rule
	}
	return "unknown_tool", rule
}
