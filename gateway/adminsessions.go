package gateway

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"sort"
	"time"

	"github.com/mcpgw/mcpgw/gateway/internal/admin"
	"github.com/mcpgw/mcpgw/sessions"
)

// sessionRow is a session as GET /api/sessions shows it. The capitalised keys are the
// ones the endpoint has always answered; the rest describe the session as this process
// sees it (zero for a session live only on another replica).
type sessionRow struct {
	ID           string
	Transport    string
	Agent        string
	Conversation string
	Task         string
	Servers      []string
	Created      time.Time
	LastSeen     time.Time
	Executor     string    `json:"executor"`
	Handshake    string    `json:"handshake"` // full | thin: the form of its last tools/list ("" before one)
	Tools        int       `json:"tools"`     // tools in its view
	Calls        int64     `json:"calls"`     // tool calls through this process
	LastActivity time.Time `json:"last_activity"`
	Live         bool      `json:"live"` // live in this process
	// Stream is whether the session's standalone stream (GET /mcp, or the legacy SSE
	// stream) is open here: where list_changed and other unprompted messages go.
	Stream bool `json:"stream"`
}

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

func (g *Gateway) apiSessions(w http.ResponseWriter, r *http.Request) {
	recs, err := g.store.List()
	if err != nil {
		admin.Error(w, http.StatusServiceUnavailable, "session store: "+err.Error())
		return
	}
	out := []sessionRow{}
	for _, rec := range recs {
		out = append(out, g.sessionRowOf(rec))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Created.Before(out[j].Created) })
	admin.JSON(w, http.StatusOK, out)
}

// sessionTool is one tool of a session's view.
type sessionTool struct {
	Name   string `json:"name"`   // as the client sees it
	Server string `json:"server"` // the upstream server
	Tool   string `json:"tool"`   // the upstream's own name
}

// apiGetSession shows one session and the tools its view holds now.
func (g *Gateway) apiGetSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	rec, err := g.store.Get(id)
	switch {
	case errors.Is(err, sessions.ErrNotFound):
		admin.Error(w, http.StatusNotFound, fmt.Sprintf("no session %q", id))
		return
	case err != nil:
		admin.Error(w, http.StatusServiceUnavailable, "session store: "+err.Error())
		return
	}
	out := struct {
		sessionRow
		ProtocolVersion string        `json:"protocol_version"`
		ViewTools       []sessionTool `json:"view"`
	}{sessionRow: g.sessionRowOf(rec), ProtocolVersion: rec.ProtocolVersion, ViewTools: []sessionTool{}}
	g.mu.RLock()
	s := g.sessions[id]
	g.mu.RUnlock()
	if s != nil && !s.isClosed() {
		for _, t := range s.View().Tools {
			out.ViewTools = append(out.ViewTools, sessionTool{Name: t.Exposed, Server: t.Server, Tool: t.Name})
		}
		out.Tools = len(out.ViewTools)
	}
	admin.JSON(w, http.StatusOK, out)
}

// apiEndSession ends a session as a client's DELETE would: its instances stop, it leaves
// the store (so every replica forgets it), and its client's next request gets 404.
func (g *Gateway) apiEndSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	err := g.endSession(id, "ended by an admin ("+admin.Actor(r)+")")
	switch {
	case errors.Is(err, sessions.ErrNotFound):
		admin.Error(w, http.StatusNotFound, fmt.Sprintf("no session %q", id))
		return
	case err != nil:
		admin.Error(w, http.StatusServiceUnavailable, "session store: "+err.Error())
		return
	}
	g.admin.AuditWrite(r, "session/"+id, "ok", nil, nil)
	w.WriteHeader(http.StatusNoContent)
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
	if def.Command != "" && !g.mayRunCommands(w, r, []string{"servers." + b.Name + " (test)"}) {
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
