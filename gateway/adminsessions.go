package gateway

import (
	"context"
	"maps"
	"net/http"
	"time"

	"github.com/mcpgw/mcpgw/gateway/internal/admin"
	"github.com/mcpgw/mcpgw/sessions"
)

// sessionRow is a session as the admin API, the UI and the mcpgw plugin show it.
type sessionRow = admin.SessionRow

// sessionTool is one tool of a session's view.
type sessionTool = admin.SessionTool

func (g *Gateway) sessionRowOf(rec *sessions.Record) sessionRow {
	row := sessionRow{ID: rec.ID, Transport: rec.Transport, Agent: rec.Agent, Conversation: rec.Conversation, Task: rec.Task,
		Servers: rec.Servers, Created: rec.Created, LastSeen: rec.LastSeen, Executor: rec.Executor, LastActivity: rec.LastSeen}
	if row.Servers == nil {
		row.Servers = []string{}
	}
	g.mu.RLock()
	s := g.sessions[rec.ID]
	g.mu.RUnlock()
	if s != nil {
		row.Live = true
		row.Calls = s.calls.Load()
		s.mu.Lock()
		row.Stream = s.stream != nil && !s.stream.isClosed()
		s.mu.Unlock()
		row.LastActivity = time.Unix(0, s.lastSeen.Load()).UTC()
		s.viewMu.Lock()
		row.Handshake = s.lastForm
		if s.view != nil {
			row.Tools = len(s.view.Tools)
		}
		s.viewMu.Unlock()
	}
	return row
}

// probeTimeout bounds a "test connection" when the server sets no connect timeout.
const probeTimeout = 30 * time.Second

// apiTestServer checks a server body as POST /api/servers would (the name may exist: an
// edit is tested too) and then connects to it once, answering the tools it would add.
// A server that cannot be reached is a 200 with ok false and the error: the test ran.
func (g *Gateway) apiTestServer(w http.ResponseWriter, r *http.Request) {
	body, ok := admin.ReadBody(w, r)
	if !ok {
		return
	}
	b, ok := readServerBody(w, body, "")
	if !ok {
		return
	}
	doc := b.serverDoc
	// Secrets sent back as the redaction marker take the stored server's values.
	var curEnv, curHeaders map[string]string
	if cur, err := g.findServer(b.Name); err == nil {
		if cur.doc != nil {
			curEnv, curHeaders = cur.doc.Env, cur.doc.Headers
		} else {
			curEnv, curHeaders = cur.def.Env, cur.def.Headers
		}
	}
	for _, u := range []struct {
		next, cur map[string]string
		field     string
	}{{doc.Env, curEnv, "env"}, {doc.Headers, curHeaders, "headers"}} {
		if fe := unredact(u.next, u.cur, u.field); fe != nil {
			admin.FieldErrors(w, http.StatusBadRequest, fe.WithField(), []admin.FieldError{*fe}, nil)
			return
		}
	}
	def, ferrs := doc.def("servers." + b.Name + ".")
	cfg := *g.policy().cfg
	cfg.Servers = maps.Clone(cfg.Servers)
	cfg.ApplyServerDefaults(def)
	cfg.Servers[b.Name] = def
	errs, warns := problemsFor(cfg.Validate(), "servers."+b.Name)
	errs = append(ferrs, errs...)
	if len(errs) > 0 {
		admin.FieldErrors(w, http.StatusBadRequest, "the config would be invalid: "+errs[0].WithField(), errs, warns)
		return
	}
	if def.Command != "" && !g.admin.MayRunCommands(w, r, []string{"servers." + b.Name + " (test)"}) {
		return
	}
	timeout := def.Timeouts.Connect
	if timeout <= 0 || timeout > probeTimeout {
		timeout = probeTimeout
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	start := time.Now()
	cat, err := g.reg.Probe(ctx, b.Name, def)
	ms := time.Since(start).Milliseconds()
	if err != nil {
		admin.JSON(w, http.StatusOK, map[string]any{"ok": false, "error": err.Error(), "ms": ms, "warnings": nonNil(warns)})
		return
	}
	tools := []sessionTool{}
	for _, t := range cat.Tools {
		tools = append(tools, sessionTool{Name: t.Exposed, Server: b.Name, Tool: t.Name})
	}
	admin.JSON(w, http.StatusOK, map[string]any{"ok": true, "tools": tools, "prompts": len(cat.Prompts),
		"resources": len(cat.Resources) + len(cat.Templates), "problems": nonNil(cat.Problems), "ms": ms, "warnings": nonNil(warns)})
}
