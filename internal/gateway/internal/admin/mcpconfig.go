package admin

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/store"
)

// The per-agent MCP document orchestrators already keep (GET and POST
// /api/mcp-config?agent=ID), in exactly their shape:
//
//	{"agent_id": "…", "enabled": true, "servers": {"name": {…server fields…, "mode": "…"}}, "meta": {…}}
//
// A server given with fields is defined (an API server is created or replaced); one given
// as {} or {"mode": …} is a reference to a server that exists. "mode" is the agent's mode
// for that server. One POST is one change: everything it defines and the agent are
// validated together and applied at once, or nothing is.

// mcpConfigAPI is the admin API's MCP config documents (/api/mcp-config): an agent and
// the servers it uses, read and written as one; it defines servers through serverAPI.
type mcpConfigAPI struct{ serverAPI }

type mcpConfigDoc struct {
	AgentID string                     `json:"agent_id"`
	Enabled *bool                      `json:"enabled,omitempty"`
	Servers map[string]json.RawMessage `json:"servers"`
	// Plugins the agent uses, as GET shows them ({} or {"type", "source"}): a plugin is
	// enabled by name as a server is, so servers may name one too.
	Plugins map[string]json.RawMessage `json:"plugins,omitempty"`
	Meta    map[string]any             `json:"meta,omitempty"`
}

// mcpConfigPlugin is one plugin of the document as GET shows it: plugins are defined in
// the config file, so the document only names them.
type mcpConfigPlugin struct {
	Type   string `json:"type"`
	Source string `json:"source"`
}

// mcpConfigServer is one server of the document as GET shows it.
type mcpConfigServer struct {
	ServerDoc
	Mode   string `json:"mode,omitempty"` // the agent's mode for this server ("" = the server's own)
	Source string `json:"source"`
}

func (a mcpConfigAPI) ServeMCPConfig(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("agent")
	if id == "" {
		FieldErrors(w, http.StatusBadRequest, "?agent= is required", []FieldError{{Field: "agent", Message: "is required"}}, nil)
		return
	}
	doc, ok := a.mcpConfigOf(w, id)
	if !ok {
		return
	}
	JSON(w, http.StatusOK, doc)
}

// mcpConfigOf builds the document of agent id from the running config.
func (a mcpConfigAPI) mcpConfigOf(w http.ResponseWriter, id string) (map[string]any, bool) {
	cfg := a.port.Config()
	// An agent without a config yet is answered as it would start: enabled, with the
	// servers enabled by default (an orchestrator reads before it writes).
	ag := cfg.Agents[id]
	enabled := true
	var uses []config.AgentUse
	var meta map[string]any
	if ag != nil {
		enabled = ag.Enabled == nil || *ag.Enabled
		uses = ag.Servers
		if e, err := a.port.Store().GetConfig(kindAgent, id); err == nil {
			if d, err := entryDoc[agentDoc](e); err == nil {
				meta = d.Meta
			}
		}
	}
	if uses == nil { // no list: the defaults ([] is no server)
		for _, n := range sortedKeys(cfg.Servers) {
			if d := cfg.Servers[n]; d != nil && d.Enabled() {
				uses = append(uses, config.AgentUse{Name: n})
			}
		}
	}
	if ag == nil || len(ag.Servers) == 0 {
		for _, n := range sortedKeys(cfg.Plugins) {
			if d := cfg.Plugins[n]; d != nil && d.Enabled() {
				uses = append(uses, config.AgentUse{Name: n})
			}
		}
	}
	servers, plugins := map[string]mcpConfigServer{}, map[string]mcpConfigPlugin{}
	for _, u := range uses {
		if d := cfg.Plugins[u.Name]; d != nil {
			plugins[u.Name] = mcpConfigPlugin{Type: d.Type, Source: "file"}
			continue
		}
		e, err := a.findServer(u.Name)
		if err != nil {
			continue
		}
		v := a.view(e)
		servers[u.Name] = mcpConfigServer{ServerDoc: v.ServerDoc, Mode: u.Mode, Source: v.Source}
	}
	out := map[string]any{"agent_id": id, "enabled": enabled, "servers": servers, "plugins": plugins}
	if meta != nil {
		out["meta"] = meta
	}
	return out, true
}

func (a mcpConfigAPI) ServePostMCPConfig(w http.ResponseWriter, r *http.Request) {
	body, ok := ReadBody(w, r)
	if !ok {
		return
	}
	var in mcpConfigDoc
	if errs := DecodeStrict(body, &in, nil); errs != nil {
		FieldErrors(w, http.StatusBadRequest, errs[0].WithField(), errs, nil)
		return
	}
	id, ok := mcpConfigAgentID(w, r.URL.Query().Get("agent"), in.AgentID)
	if !ok {
		return
	}
	defer a.port.LockConfig()()
	if _, inFile := a.port.FileConfig().Agents[id]; inFile {
		a.fileManaged(w, fmt.Sprintf("agent %q", id))
		return
	}
	curAgent, err := a.port.Store().GetConfig(kindAgent, id)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		Error(w, http.StatusServiceUnavailable, "store: "+err.Error())
		return
	}
	agent := agentDoc{}
	if curAgent != nil {
		if d, err := entryDoc[agentDoc](curAgent); err == nil {
			agent = *d
		}
	}
	agent.Enabled, agent.Meta, agent.Servers = in.Enabled, in.Meta, nil
	if in.Servers != nil { // {}: no server; absent or null: the defaults
		agent.Servers = []agentUseDoc{}
	}
	p := &mcpConfigPlan{a: a.serverAPI, w: w, agent: &agent, now: time.Now().UTC()}
	for _, name := range sortedKeys(in.Servers) {
		if !p.server(name, in.Servers[name]) {
			return
		}
	}
	for _, name := range sortedKeys(in.Plugins) {
		p.plugin(name, "plugins."+name, in.Plugins[name])
	}
	raw, _ := json.Marshal(agent)
	next := &store.ConfigEntry{Kind: kindAgent, Name: id, Doc: raw, Source: "api", Created: p.now, Updated: p.now, Version: 1}
	if curAgent != nil {
		next.Created, next.Version = curAgent.Created, curAgent.Version+1
	}
	p.changes = append(p.changes, entryChange{kind: kindAgent, name: id, cur: curAgent, next: next})
	if _, ok := a.commitChanges(w, r, p.changes, p.fieldErrs, nil, false, "agents."+id); !ok {
		return
	}
	doc, ok := a.mcpConfigOf(w, id)
	if !ok {
		return
	}
	// What a session of the agent would be told at its start (the executor's policy
	// skipping a server), as a PUT of the agent answers it.
	if ws := resolveWarnings(a.port.Config(), id); len(ws) > 0 {
		doc["warnings"] = ws
	}
	JSON(w, http.StatusOK, doc)
}

// mcpConfigAgentID is the agent a POST /api/mcp-config is for: ?agent= or the body's
// agent_id, which must agree when both are given. It answers 400 itself otherwise.
func mcpConfigAgentID(w http.ResponseWriter, query, body string) (string, bool) {
	switch {
	case query == "" && body == "":
		FieldErrors(w, http.StatusBadRequest, "?agent= is required", []FieldError{{Field: "agent_id", Message: "is required"}}, nil)
		return "", false
	case query == "":
		return body, true
	case body != "" && body != query:
		msg := fmt.Sprintf("the body is agent %q, the query %q", body, query)
		FieldErrors(w, http.StatusBadRequest, msg, []FieldError{{Field: "agent_id", Message: msg}}, nil)
		return "", false
	}
	return query, true
}

// mcpConfigPlan gathers what a POST /api/mcp-config changes: the agent's server list, the
// server entries it adds or changes, and the field errors found on the way.
type mcpConfigPlan struct {
	a         serverAPI
	w         http.ResponseWriter
	agent     *agentDoc
	now       time.Time
	changes   []entryChange
	fieldErrs []FieldError
}

// server plans servers.<name> of the document: a reference to a server (no fields but
// mode) or its definition. It reports false when it has answered the request itself.
func (p *mcpConfigPlan) server(name string, raw json.RawMessage) bool {
	where := "servers." + name
	if p.a.port.Config().Plugins[name] != nil {
		p.plugin(name, where, raw) // a plugin is enabled by name as a server is
		return true
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		p.fieldErrs = append(p.fieldErrs, FieldError{Field: where, Message: "is not an object"})
		return true
	}
	var mode string
	if m, ok := fields["mode"]; ok {
		if err := json.Unmarshal(m, &mode); err != nil {
			p.fieldErrs = append(p.fieldErrs, FieldError{Field: where + ".mode", Message: "is not a string (auto, shared, per_session, per_agent or per_call)"})
			return true
		}
		delete(fields, "mode")
	}
	p.agent.Servers = append(p.agent.Servers, agentUseDoc{Name: name, Mode: mode})
	cur, err := p.a.findServer(name)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		Error(p.w, http.StatusServiceUnavailable, "store: "+err.Error())
		return false
	}
	if len(fields) == 0 { // a reference
		if cur == nil {
			p.fieldErrs = append(p.fieldErrs, FieldError{Field: where, Message: "names no server (give its fields to define it)"})
		}
		return true
	}
	return p.serverDef(name, where, cur, fields)
}

// plugin plans a plugin the document names (at where): {} or what GET shows of it
// ({"type", "source"}, read and ignored). Plugins are defined in the config file, so
// the document cannot define or change one.
func (p *mcpConfigPlan) plugin(name, where string, raw json.RawMessage) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		p.fieldErrs = append(p.fieldErrs, FieldError{Field: where, Message: "is not an object"})
		return
	}
	if p.a.port.Config().Plugins[name] == nil {
		p.fieldErrs = append(p.fieldErrs, FieldError{Field: where, Message: "names no plugin (plugins are defined in the config file's plugins section)"})
		return
	}
	for _, k := range sortedKeys(fields) {
		switch k {
		case "type", "source": // as GET shows them
		case "mode":
			p.fieldErrs = append(p.fieldErrs, FieldError{Field: where + ".mode", Message: "a plugin runs in the gateway and has no mode"})
		default:
			p.fieldErrs = append(p.fieldErrs, FieldError{Field: where + "." + k, Message: "a plugin is defined in the config file; name it here with {}"})
		}
	}
	p.agent.Servers = append(p.agent.Servers, agentUseDoc{Name: name})
}

// serverDef plans a server the document defines: new, changed, or the same as it is.
func (p *mcpConfigPlan) serverDef(name, where string, cur *serverEntity, fields map[string]json.RawMessage) bool {
	raw, _ := json.Marshal(fields)
	var def struct {
		ServerDoc
		Source json.RawMessage `json:"source"` // as GET shows it: ignored
	}
	if errs := DecodeStrict(raw, &def, nil); errs != nil {
		for _, fe := range errs {
			p.fieldErrs = append(p.fieldErrs, FieldError{Field: where + "." + fe.Field, Message: fe.Message})
		}
		return true
	}
	doc := def.ServerDoc
	doc.Type = config.NormalizeTransport(doc.Type)
	switch {
	case cur != nil && cur.entry == nil:
		// A file server given with its own fields is a reference; different fields
		// would change a file entry. The document's "mode" is the agent's, so the
		// server's own mode is not in it (GET does not show it either).
		want := docOf(cur.def)
		want.Mode = doc.Mode
		if !sameServerDoc(want, doc) {
			p.a.fileManaged(p.w, fmt.Sprintf("server %q", name))
			return false
		}
		return true
	case cur != nil:
		if fe := unredact(doc.Env, cur.doc.Env, where+".env"); fe != nil {
			p.fieldErrs = append(p.fieldErrs, *fe)
		}
		if fe := unredact(doc.Headers, cur.doc.Headers, where+".headers"); fe != nil {
			p.fieldErrs = append(p.fieldErrs, *fe)
		}
		if sameServerDoc(*cur.doc, doc) {
			return true
		}
		p.changes = append(p.changes, entryChange{kind: kindServer, name: name, cur: cur.entry, next: serverEntry(name, &doc, cur.entry, p.now)})
	default:
		p.changes = append(p.changes, entryChange{kind: kindServer, name: name, next: serverEntry(name, &doc, nil, p.now)})
	}
	if d, errs := doc.def(where + "."); d != nil {
		p.fieldErrs = append(p.fieldErrs, errs...)
	}
	return true
}

// sameServerDoc compares two server documents as the config would run them.
func sameServerDoc(a, b ServerDoc) bool {
	a.Enabled, b.Enabled = nil, nil
	if len(a.Env) == 0 {
		a.Env = nil
	}
	if len(b.Env) == 0 {
		b.Env = nil
	}
	if len(a.Headers) == 0 {
		a.Headers = nil
	}
	if len(b.Headers) == 0 {
		b.Headers = nil
	}
	return reflect.DeepEqual(a, b)
}
