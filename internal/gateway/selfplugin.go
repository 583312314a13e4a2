package gateway

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/dispatch"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/selfplugin"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/store"
)

// selfHost is the gateway as the mcpgw plugin (internal/gateway/internal/selfplugin) sees it. What it shows
// is what an operator may show an agent it trusts: no command, URL, header or environment
// of a server, no credential or principal of a session, no key of an agent. Its actions
// run the admin API's code: RestartServer and endSession.
type selfHost struct{ g *Gateway }

func (h selfHost) Servers(context.Context) ([]selfplugin.Server, error) {
	g := h.g
	cfg, file := g.policy().cfg, g.FileConfig()
	var out []selfplugin.Server
	for _, st := range g.reg.Statuses() {
		s := selfplugin.Server{Name: st.Name, Transport: st.Transport, Mode: st.Mode, State: st.State, Error: st.Error,
			Since: st.Since.UTC(), Restarts: st.Restarts, Tools: st.Tools, Prompts: st.Prompts, Resources: st.Resources,
			Retired: st.Retired, Source: "api"}
		if file.Servers[st.Name] != nil {
			s.Source = "file"
		}
		if d := cfg.Servers[st.Name]; d != nil {
			s.Title, s.Description = d.Meta.Title, d.Meta.Description
		}
		out = append(out, s)
	}
	return out, nil
}

func (h selfHost) Sessions(context.Context) ([]selfplugin.Session, error) {
	recs, err := h.g.store.List()
	if err != nil {
		return nil, fmt.Errorf("the session store cannot be read: %v", err)
	}
	out := make([]selfplugin.Session, 0, len(recs))
	for _, rec := range recs {
		row := h.g.sessionRowOf(rec)
		out = append(out, selfplugin.Session{ID: row.ID, Agent: row.Agent, Task: row.Task, Transport: row.Transport,
			Created: row.Created.UTC(), LastUsed: row.LastSeen.UTC(), Live: row.Live, Tools: row.Tools, Calls: row.Calls})
	}
	return out, nil
}

func (h selfHost) Agents(context.Context) ([]selfplugin.Agent, error) {
	g := h.g
	cfg, file := g.policy().cfg, g.FileConfig()
	live := g.live.byAgent()
	out := make([]selfplugin.Agent, 0, len(cfg.Agents))
	for _, id := range sortedKeys(cfg.Agents) {
		a := cfg.Agents[id]
		if a == nil {
			continue
		}
		ag := selfplugin.Agent{ID: id, Enabled: a.Enabled == nil || *a.Enabled, ReadOnly: a.ReadOnly,
			ConnectionScope: slices.Clone(a.ConnectionScope), Executor: a.Executor, ToolsAllow: slices.Clone(a.Tools.Allow),
			ToolsDeny: slices.Clone(a.Tools.Deny), Sessions: live[id], Source: "api", Servers: []string{}}
		for _, u := range a.Servers {
			ag.Servers = append(ag.Servers, u.Name)
		}
		if file.Agents[id] != nil {
			ag.Source = "file"
		}
		out = append(out, ag)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func (h selfHost) RestartServer(ctx context.Context, name string) error {
	err := h.g.RestartServer(name)
	h.audit(ctx, "restart", "server/"+name, err)
	switch {
	case errors.Is(err, registry.ErrNoServer):
		return fmt.Errorf("no server %q", name)
	case err != nil:
		return err
	}
	return nil
}

func (h selfHost) EndSession(ctx context.Context, id string) error {
	caller := dispatch.Caller(ctx)
	if caller != nil && caller.ID == id {
		return errors.New("this is the session making the call; to end it, close the client's connection")
	}
	who := "the mcpgw plugin"
	if caller != nil {
		who += " (agent " + caller.Rec.Agent + ", session " + caller.ID + ")"
	}
	err := h.g.endSession(id, "ended through "+who)
	h.audit(ctx, "end", "session/"+id, err)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no session %q", id)
	}
	return err
}

// audit writes an admin line for an action run through the plugin, naming the agent and
// session that ran it (the tool call has its own line).
func (h selfHost) audit(ctx context.Context, action, object string, err error) {
	actor := "mcpgw_plugin"
	if s := dispatch.Caller(ctx); s != nil {
		actor = "agent:" + s.Rec.Agent + " session:" + s.ID
	}
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	h.g.audit.Record(auth.AuditEvent{Kind: "admin", Actor: actor, Action: "mcpgw plugin " + action, Object: object, Outcome: outcome})
}

// RestartServer restarts a configured server: the registry replaces it by a new instance
// (its old shared connection closes once the calls on it had time to finish), and every
// session's own instance of it stops, so the session's next call starts a fresh one.
// The admin API (POST /api/servers/{name}/restart) and the mcpgw plugin both run it.
func (g *Gateway) RestartServer(name string) error { return g.reg.Restart(name) }

// endSession ends a session as a client's DELETE would: its instances stop, it leaves the
// store (so every replica forgets it), and its client's next request gets 404. The admin
// API (DELETE /api/sessions/{id}) and the mcpgw plugin both run it.
func (g *Gateway) endSession(id, why string) error {
	s, err := g.live.lookup(id)
	if err != nil {
		return err
	}
	g.live.end(s, why)
	return nil
}
