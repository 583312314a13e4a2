// size: being split (issue 41)
package admin

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/store"
)

// policyAPI is the admin API's agents and executors (/api/agents, /api/executors), what a
// session of them would get (/api/resolve), and the gateway-wide settings (settings.go).
type policyAPI struct{ *API }

// agentDoc is an agent as the admin API reads and writes it (the config file's keys).
type agentDoc struct {
	Enabled *bool `json:"enabled,omitempty"`
	// Servers is the agent's list: null (or absent) is the servers enabled by default, []
	// is none. Not omitempty, so that [] survives the store and the answer.
	Servers   []agentUseDoc `json:"servers"`
	Tools     *toolsDoc     `json:"tools,omitempty"`
	ReadOnly  bool          `json:"read_only,omitempty"`
	Handshake string        `json:"handshake,omitempty"`
	// PinnedTools are globs over exposed tool names the search form lists in full for
	// this agent, besides http.search.pinned.
	PinnedTools []string `json:"pinned_tools,omitempty"`
	Executor    string   `json:"executor,omitempty"`
	// Meta is free-form data an orchestrator keeps with the agent (/api/mcp-config); the
	// gateway stores and shows it and never reads it.
	Meta map[string]any `json:"meta,omitempty"`
	// ConnectionScope limits the plugin connections the agent may use: absent, every one;
	// [], none. A pointer, so that [] survives.
	ConnectionScope *[]string `json:"connection_scope,omitempty"`
}

// agentUseDoc is "name" or {"name": …, "mode": …}.
type agentUseDoc struct {
	Name string `json:"name"`
	Mode string `json:"mode,omitempty"`
}

func (u *agentUseDoc) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		u.Name, u.Mode = s, ""
		return nil
	}
	type plain agentUseDoc
	return json.Unmarshal(b, (*plain)(u))
}

func (u agentUseDoc) MarshalJSON() ([]byte, error) {
	if u.Mode == "" {
		return json.Marshal(u.Name)
	}
	type plain agentUseDoc
	return json.Marshal(plain(u))
}

type toolsDoc struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

func (d *agentDoc) config() *config.AgentConfig {
	a := &config.AgentConfig{Enabled: d.Enabled, ReadOnly: d.ReadOnly, Handshake: d.Handshake, Executor: d.Executor,
		PinnedTools: slices.Clone(d.PinnedTools)}
	if d.Servers != nil {
		a.Servers = make([]config.AgentUse, 0, len(d.Servers))
	}
	for _, u := range d.Servers {
		a.Servers = append(a.Servers, config.AgentUse{Name: u.Name, Mode: u.Mode})
	}
	if d.Tools != nil {
		a.Tools = config.ToolFilter{Allow: slices.Clone(d.Tools.Allow), Deny: slices.Clone(d.Tools.Deny)}
	}
	if d.ConnectionScope != nil {
		a.ConnectionScope = append([]string{}, *d.ConnectionScope...)
	}
	return a
}

func agentDocOf(a *config.AgentConfig) agentDoc {
	d := agentDoc{Enabled: a.Enabled, ReadOnly: a.ReadOnly, Handshake: a.Handshake, Executor: a.Executor,
		PinnedTools: slices.Clone(a.PinnedTools)}
	if a.Servers != nil {
		d.Servers = make([]agentUseDoc, 0, len(a.Servers))
	}
	for _, u := range a.Servers {
		d.Servers = append(d.Servers, agentUseDoc{Name: u.Name, Mode: u.Mode})
	}
	if len(a.Tools.Allow) > 0 || len(a.Tools.Deny) > 0 {
		d.Tools = &toolsDoc{Allow: a.Tools.Allow, Deny: a.Tools.Deny}
	}
	if a.ConnectionScope != nil {
		cs := slices.Clone(a.ConnectionScope)
		d.ConnectionScope = &cs
	}
	return d
}

// executorDoc is an executor as the admin API reads and writes it.
type executorDoc struct {
	Type      string    `json:"type"`
	MCPPolicy policyDoc `json:"mcp_policy"`
}

// policyDoc is config.ExecutorPolicy with JSON names.
type policyDoc struct {
	AllowStdio                  *bool             `json:"allow_stdio,omitempty"`
	AllowHTTP                   *bool             `json:"allow_http,omitempty"`
	AllowSSE                    *bool             `json:"allow_sse,omitempty"`
	AllowStreamableHTTP         *bool             `json:"allow_streamable_http,omitempty"`
	URLRewrite                  map[string]string `json:"url_rewrite,omitempty"`
	EnvInjection                map[string]string `json:"env_injection,omitempty"`
	EnvInjectionOverridesServer bool              `json:"env_injection_overrides_server,omitempty"`
	AllowlistServers            []string          `json:"allowlist_servers,omitempty"`
	DenylistServers             []string          `json:"denylist_servers,omitempty"`
}

func (d *executorDoc) config() *config.ExecutorConfig {
	p := d.MCPPolicy
	return &config.ExecutorConfig{Type: d.Type, MCPPolicy: config.ExecutorPolicy{AllowStdio: p.AllowStdio, AllowHTTP: p.AllowHTTP,
		AllowSSE: p.AllowSSE, AllowStreamableHTTP: p.AllowStreamableHTTP, URLRewrite: maps.Clone(p.URLRewrite),
		EnvInjection: maps.Clone(p.EnvInjection), EnvInjectionOverridesServer: p.EnvInjectionOverridesServer,
		AllowlistServers: slices.Clone(p.AllowlistServers), DenylistServers: slices.Clone(p.DenylistServers)}}
}

func executorDocOf(e *config.ExecutorConfig) executorDoc {
	p := e.MCPPolicy
	return executorDoc{Type: e.Type, MCPPolicy: policyDoc{AllowStdio: p.AllowStdio, AllowHTTP: p.AllowHTTP, AllowSSE: p.AllowSSE,
		AllowStreamableHTTP: p.AllowStreamableHTTP, URLRewrite: p.URLRewrite, EnvInjection: p.EnvInjection,
		EnvInjectionOverridesServer: p.EnvInjectionOverridesServer, AllowlistServers: p.AllowlistServers, DenylistServers: p.DenylistServers}}
}

// policySpec describes an entity kind the admin API keeps besides servers: agents and
// executors. Both are PUT (create or replace), PATCH (merge patch) and DELETE by id.
type policySpec struct {
	kind, section string
	// fileDoc returns the file's entity of that id as a document.
	fileDoc func(c *config.Config, id string) (any, bool)
	fileIDs func(c *config.Config) []string
	// decode reads a body strictly into the kind's document.
	decode func(body []byte) (any, []FieldError)
	// redact hides secret values in a document (a JSON object) before it is shown.
	redact func(doc map[string]any)
	// normalize, when set, rewrites a body (a PUT's or a PATCH's) in another accepted
	// shape into the document's own before anything reads it.
	normalize func(body []byte) ([]byte, []FieldError)
}

func agentSpec() *policySpec {
	return &policySpec{kind: kindAgent, section: "agents",
		fileDoc: func(c *config.Config, id string) (any, bool) {
			a, ok := c.Agents[id]
			if !ok || a == nil {
				return nil, ok
			}
			return agentDocOf(a), true
		},
		fileIDs: func(c *config.Config) []string { return sortedKeys(c.Agents) },
		decode: func(b []byte) (any, []FieldError) {
			var d struct {
				agentDoc
				readOnlyFields
			}
			errs := DecodeStrict(b, &d, nil)
			return &d.agentDoc, errs
		},
	}
}

func executorSpec() *policySpec {
	return &policySpec{kind: kindExecutor, section: "executors",
		fileDoc: func(c *config.Config, id string) (any, bool) {
			e, ok := c.Executors[id]
			if !ok || e == nil {
				return nil, ok
			}
			return executorDocOf(e), true
		},
		fileIDs: func(c *config.Config) []string { return sortedKeys(c.Executors) },
		decode: func(b []byte) (any, []FieldError) {
			var d struct {
				executorDoc
				readOnlyFields
			}
			errs := DecodeStrict(b, &d, nil)
			return &d.executorDoc, errs
		},
		normalize: normalizeExecutorBody,
		redact: func(doc map[string]any) {
			if p, _ := doc["mcp_policy"].(map[string]any); p != nil {
				if env, _ := p["env_injection"].(map[string]any); env != nil {
					for k := range env {
						env[k] = Redacted
					}
				}
			}
		},
	}
}

// readOnlyFields are the fields of an answer that a write ignores, so that an answer as
// read can be sent back.
type readOnlyFields struct {
	ID        json.RawMessage `json:"id"`
	Source    json.RawMessage `json:"source"`
	File      json.RawMessage `json:"file"`
	CreatedAt json.RawMessage `json:"created_at"`
	UpdatedAt json.RawMessage `json:"updated_at"`
	Version   json.RawMessage `json:"version"`
	ETag      json.RawMessage `json:"etag"`
}

// policyView shows an entity: its document (secrets redacted) with id, source, version
// and ETag.
func (a policyAPI) policyView(spec *policySpec, id string, doc any, e *store.ConfigEntry) (map[string]any, string) {
	raw, _ := json.Marshal(doc)
	v := map[string]any{}
	_ = json.Unmarshal(raw, &v)
	if spec.redact != nil {
		spec.redact(v)
	}
	var etag string
	if e != nil {
		etag = ETag(Hash(e))
		v["source"], v["created_at"], v["updated_at"], v["version"] = "api", e.Created, e.Updated, e.Version
	} else {
		etag = ETag(Hash(doc))
		v["source"], v["file"] = "file", a.port.FileConfig().Path
	}
	v["id"], v["etag"] = id, etag
	return v, etag
}

func (a policyAPI) policyList(spec *policySpec) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		out, err := a.policyViews(spec)
		if err != nil {
			Error(w, http.StatusServiceUnavailable, "store: "+err.Error())
			return
		}
		JSON(w, http.StatusOK, out)
	}
}

// policyViews lists every entity of a kind, file and API ones, by id.
func (a policyAPI) policyViews(spec *policySpec) ([]map[string]any, error) {
	entries, err := a.port.Store().ListConfig()
	if err != nil {
		return nil, err
	}
	file := a.port.FileConfig()
	out := []map[string]any{}
	for _, id := range spec.fileIDs(file) {
		doc, _ := spec.fileDoc(file, id)
		v, _ := a.policyView(spec, id, doc, nil)
		out = append(out, v)
	}
	for _, e := range entries {
		if e.Kind != spec.kind {
			continue
		}
		if _, inFile := spec.fileDoc(file, e.Name); inFile {
			continue
		}
		var doc any
		_ = json.Unmarshal(e.Doc, &doc)
		v, _ := a.policyView(spec, e.Name, doc, e)
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b map[string]any) int { return strings.Compare(a["id"].(string), b["id"].(string)) })
	return out, nil
}

// policyCurrent finds the entity a request names: file (doc set) or stored (entry set).
func (a policyAPI) policyCurrent(w http.ResponseWriter, spec *policySpec, id string) (fileDoc any, entry *store.ConfigEntry, ok bool) {
	if doc, inFile := spec.fileDoc(a.port.FileConfig(), id); inFile {
		return doc, nil, true
	}
	e, err := a.port.Store().GetConfig(spec.kind, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, nil, true
	case err != nil:
		Error(w, http.StatusServiceUnavailable, "store: "+err.Error())
		return nil, nil, false
	}
	return nil, e, true
}

func (a policyAPI) policyGet(spec *policySpec) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		doc, e, ok := a.policyCurrent(w, spec, id)
		if !ok {
			return
		}
		if doc == nil && e == nil {
			Error(w, http.StatusNotFound, fmt.Sprintf("no %s %q", spec.kind, id))
			return
		}
		if e != nil {
			_ = json.Unmarshal(e.Doc, &doc)
		}
		v, etag := a.policyView(spec, id, doc, e)
		w.Header().Set("ETag", etag)
		JSON(w, http.StatusOK, v)
	}
}

// policyWrite is PUT (create or replace), POST (create: a project's, projects.go), PATCH
// (merge patch of an existing one) and DELETE of an agent, executor or project.
func (a policyAPI) policyWrite(spec *policySpec) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		var body []byte
		if r.Method != http.MethodDelete {
			var ok bool
			if body, ok = ReadBody(w, r); !ok {
				return
			}
		}
		defer a.port.LockConfig()()
		fileDoc, cur, ok := a.policyCurrent(w, spec, id)
		if !ok {
			return
		}
		if fileDoc != nil {
			a.fileManaged(w, fmt.Sprintf("%s %q", spec.kind, id))
			return
		}
		if cur == nil && r.Method != http.MethodPut && r.Method != http.MethodPost {
			Error(w, http.StatusNotFound, fmt.Sprintf("no %s %q", spec.kind, id))
			return
		}
		if cur != nil && r.Method == http.MethodPost {
			Error(w, http.StatusConflict, fmt.Sprintf("%s %q exists; PUT or PATCH /api/%s/%s changes it", spec.kind, id, spec.section, id))
			return
		}
		if cur != nil && PreconditionFailed(w, r, ETag(Hash(cur))) {
			return
		}
		if r.Method == http.MethodDelete {
			if _, ok := a.commitEntry(w, r, spec.kind, spec.section, id, cur, nil, nil, nil, false); ok {
				w.WriteHeader(http.StatusNoContent)
			}
			return
		}
		body, errs := decodeStrictErrs(spec, body)
		if errs != nil {
			FieldErrors(w, http.StatusBadRequest, errs[0].WithField(), errs, nil)
			return
		}
		if r.Method == http.MethodPatch {
			var target, p map[string]any
			_ = json.Unmarshal(cur.Doc, &target)
			_ = json.Unmarshal(body, &p)
			body, _ = json.Marshal(MergePatch(target, p))
		}
		doc, errs := spec.decode(body)
		if errs != nil {
			FieldErrors(w, http.StatusBadRequest, errs[0].WithField(), errs, nil)
			return
		}
		if ed, ok := doc.(*executorDoc); ok && cur != nil {
			var old executorDoc
			_ = json.Unmarshal(cur.Doc, &old)
			if fe := unredact(ed.MCPPolicy.EnvInjection, old.MCPPolicy.EnvInjection, "mcp_policy.env_injection"); fe != nil {
				FieldErrors(w, http.StatusBadRequest, fe.WithField(), []FieldError{*fe}, nil)
				return
			}
		}
		raw, _ := json.Marshal(doc)
		now := time.Now().UTC()
		next := &store.ConfigEntry{Kind: spec.kind, Name: id, Doc: raw, Source: "api", Created: now, Updated: now, Version: 1}
		status := http.StatusCreated
		if cur != nil {
			next.Created, next.Version, status = cur.Created, cur.Version+1, http.StatusOK
		}
		warns, ok := a.commitEntry(w, r, spec.kind, spec.section, id, cur, next, nil, nil, false)
		if !ok {
			return
		}
		if spec.kind == kindAgent {
			warns = append(warns, a.resolveWarnings(id)...)
		}
		v, etag := a.policyView(spec, id, doc, next)
		if len(warns) > 0 {
			v["warnings"] = warns
		}
		w.Header().Set("ETag", etag)
		JSON(w, status, v)
	}
}

// decodeStrictErrs checks a body's fields (a patch's as sent) against the kind's document,
// after rewriting it into the document's own shape (spec.normalize), which it returns.
func decodeStrictErrs(spec *policySpec, body []byte) ([]byte, []FieldError) {
	if spec.normalize != nil {
		var errs []FieldError
		if body, errs = spec.normalize(body); errs != nil {
			return nil, errs
		}
	}
	_, errs := spec.decode(body)
	return body, errs
}

// resolveWarnings are what a session of the agent would be told at its start, with the
// config just applied: the servers its executor's policy skips (not in its allowlist, in
// its denylist, a transport it does not allow) and modes that cannot apply. It is the
// resolution GET /api/resolve and a session start run (auth.Resolve), not a second copy,
// so the answer of a save and the session can never disagree. Called with the config
// lock held, after the change was applied.
func (a policyAPI) resolveWarnings(agent string) []FieldError {
	res, fail := auth.Resolve(a.port.Config(), &auth.Identity{Agent: agent}, nil)
	if fail != nil {
		return []FieldError{{Field: "agents." + agent, Message: fail.Message}}
	}
	var out []FieldError
	for _, w := range res.Warnings {
		out = append(out, FieldError{Field: "agents." + agent + ".servers", Message: w})
	}
	return out
}

// resolvedServer is one server of GET /api/resolve: how a session of that agent, executor
// and task would reach it.
type resolvedServer struct {
	Name string `json:"name"`
	// Kind is server or plugin. A plugin runs inside the gateway: it has a type (sql,
	// go, command, mcpgw) and neither transport nor mode, and the executor's rewrites and
	// environment do not concern it (its allowlist and denylist do).
	Kind      string            `json:"kind"`
	Type      string            `json:"type,omitempty"` // a plugin's
	Transport string            `json:"transport,omitempty"`
	Mode      string            `json:"mode,omitempty"`
	Endpoint  string            `json:"endpoint,omitempty"` // the URL after url_rewrite
	Command   string            `json:"command,omitempty"`
	Env       map[string]string `json:"env,omitempty"`     // after env_injection, values redacted
	Headers   map[string]string `json:"headers,omitempty"` // values redacted
	Source    string            `json:"source"`            // file | api
}

// ServeResolve answers what a session of ?agent= (with ?executor= and ?task=) would get,
// server by server, through the same resolution a session start runs (auth.Resolve).
func (a policyAPI) ServeResolve(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	agent := q.Get("agent")
	if agent == "" {
		agent = "default"
	}
	cfg := a.port.Config()
	if len(cfg.Agents) > 0 {
		if _, ok := cfg.Agents[agent]; !ok {
			Error(w, http.StatusNotFound, "unknown agent "+agent)
			return
		}
	}
	id := &auth.Identity{Agent: agent, Task: q.Get("task"), Executor: q.Get("executor")}
	var taskServers []string
	if id.Task != "" {
		t, err := a.port.Task(id.Task)
		if err != nil {
			Error(w, http.StatusNotFound, "unknown task "+id.Task)
			return
		}
		taskServers = t.EnabledMCPServers
		if taskServers == nil {
			taskServers = []string{}
		}
		id.Project = t.Project
	}
	res, fail := auth.Resolve(cfg, id, taskServers)
	if fail != nil {
		Error(w, fail.Status, fail.Message)
		return
	}
	file := a.port.FileConfig()
	out := struct {
		Agent    string           `json:"agent"`
		Task     string           `json:"task,omitempty"`
		Project  string           `json:"project,omitempty"`
		Executor string           `json:"executor,omitempty"`
		Servers  []resolvedServer `json:"servers"`
		Warnings []string         `json:"warnings"`
	}{Agent: agent, Task: id.Task, Project: id.Project, Executor: res.Executor, Servers: []resolvedServer{}, Warnings: nonNil(res.Warnings)}
	for _, name := range res.Servers {
		if pd := cfg.Plugins[name]; pd != nil {
			rs := resolvedServer{Name: name, Kind: KindPlugin, Type: pd.Type, Source: "file"}
			if p := a.port.Plugin(name); p != nil {
				rs.Type = p.Status().Type
			}
			out.Servers = append(out.Servers, rs)
			continue
		}
		d := cfg.Servers[name]
		if d == nil {
			continue
		}
		o := res.Overrides[name]
		rs := resolvedServer{Name: name, Kind: KindServer, Transport: d.Transport(), Mode: d.ResolvedMode(), Source: "api"}
		if file.Servers[name] != nil {
			rs.Source = "file"
		}
		if o.Mode != "" {
			rs.Mode = o.Mode
		}
		if d.Transport() == config.TransportStdio {
			rs.Command = d.Command
			env := maps.Clone(d.Env)
			if len(o.Env) > 0 && env == nil {
				env = map[string]string{}
			}
			maps.Copy(env, o.Env)
			rs.Env = redactValues(env)
		} else {
			rs.Endpoint = d.URL
			if o.URL != "" {
				rs.Endpoint = o.URL
			}
			rs.Headers = redactValues(d.Headers)
		}
		out.Servers = append(out.Servers, rs)
	}
	JSON(w, http.StatusOK, out)
}

// AgentViews lists every agent, file and API ones, by id, as GET /api/agents does.
func (a *API) AgentViews() ([]map[string]any, error) { return policyAPI{a}.policyViews(agentSpec()) }

// ExecutorViews lists every executor, file and API ones, by id, as GET /api/executors does.
func (a *API) ExecutorViews() ([]map[string]any, error) {
	return policyAPI{a}.policyViews(executorSpec())
}
