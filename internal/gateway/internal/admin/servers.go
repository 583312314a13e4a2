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
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/store"
)

// serverAPI is the admin API's servers (/api/servers): list, read, create, validate,
// replace, patch, delete, test a connection (testserver.go), restart. The MCP config
// document (mcpconfig.go) defines servers through it.
type serverAPI struct{ configWriter }

// serverBody is what POST, PUT and PATCH accept: a document, its name, and the read-only
// fields of an answer (ignored), so that an answer as read can be sent back.
type serverBody struct {
	Name string `json:"name"`
	ServerDoc
	Source    json.RawMessage `json:"source"`
	File      json.RawMessage `json:"file"`
	CreatedAt json.RawMessage `json:"created_at"`
	UpdatedAt json.RawMessage `json:"updated_at"`
	Version   json.RawMessage `json:"version"`
	ETag      json.RawMessage `json:"etag"`
	Live      json.RawMessage `json:"live"`
	Kind      json.RawMessage `json:"kind"`
}

// ServerView is a server in an answer: its document with secret values redacted, where it
// comes from, its version, and its live state.
type ServerView struct {
	Name string `json:"name"`
	Kind string `json:"kind"` // server (GET /api/servers lists plugins too, as kind plugin)
	ServerDoc
	Enabled   bool       `json:"enabled"`
	Source    string     `json:"source"` // file | api
	File      string     `json:"file,omitempty"`
	CreatedAt *time.Time `json:"created_at,omitempty"`
	UpdatedAt *time.Time `json:"updated_at,omitempty"`
	Version   int64      `json:"version,omitempty"`
	ETag      string     `json:"etag"`
	// Live is the running server's state (nil while it does not run: disabled).
	Live *registry.Status `json:"live"`
}

// serverEntity is a server the API knows: from the file (def) or the store (entry).
type serverEntity struct {
	name  string
	def   *config.ServerDef
	entry *store.ConfigEntry
	doc   *ServerDoc
}

func (e *serverEntity) etag() string {
	if e.entry != nil {
		return ETag(Hash(e.entry))
	}
	return ETag(Hash(docOf(e.def)))
}

func (a serverAPI) view(e *serverEntity) ServerView {
	v := ServerView{Name: e.name, Kind: KindServer, ETag: e.etag(), Enabled: true}
	if e.entry != nil {
		v.ServerDoc = *e.doc
		v.Enabled = e.doc.enabled()
		v.Source = "api"
		c, u := e.entry.Created, e.entry.Updated
		v.CreatedAt, v.UpdatedAt, v.Version = &c, &u, e.entry.Version
	} else {
		v.ServerDoc = docOf(e.def)
		v.Source = "file"
		v.File = a.port.FileConfig().Path
	}
	v.Env, v.Headers = redactValues(v.Env), redactValues(v.Headers)
	if st, ok := a.port.ServerStatus(e.name); ok && v.Enabled {
		v.Live = &st
	}
	return v
}

// findServer looks a server up: the file first (it wins over a stored entry of the same
// name), then the store.
func (a serverAPI) findServer(name string) (*serverEntity, error) {
	if d := a.port.FileConfig().Servers[name]; d != nil {
		return &serverEntity{name: name, def: d}, nil
	}
	e, err := a.port.Store().GetConfig(kindServer, name)
	if err != nil {
		return nil, err
	}
	doc, err := entryDoc[ServerDoc](e)
	if err != nil {
		return nil, err
	}
	return &serverEntity{name: name, entry: e, doc: doc}, nil
}

// ServeServers lists every server, file and API ones, and every plugin as a row of kind
// "plugin" (pluginServerRow), by name: every source of tools in one list.
func (a serverAPI) ServeServers(w http.ResponseWriter, r *http.Request) {
	servers, err := a.serverViews()
	if err != nil {
		Error(w, http.StatusServiceUnavailable, "store: "+err.Error())
		return
	}
	type row struct {
		name string
		v    any
	}
	rows := make([]row, 0, len(servers))
	for _, v := range servers {
		rows = append(rows, row{v.Name, v})
	}
	for _, p := range pluginServerRows(a.port) {
		rows = append(rows, row{p.Name, p})
	}
	slices.SortStableFunc(rows, func(x, y row) int { return strings.Compare(x.name, y.name) })
	out := make([]any, len(rows))
	for i, r := range rows {
		out[i] = r.v
	}
	JSON(w, http.StatusOK, out)
}

// serverViews lists every server, file and API ones, by name, with live state.
func (a serverAPI) serverViews() ([]ServerView, error) {
	entries, err := a.port.Store().ListConfig()
	if err != nil {
		return nil, err
	}
	file := a.port.FileConfig()
	out := []ServerView{}
	for _, name := range sortedKeys(file.Servers) {
		out = append(out, a.view(&serverEntity{name: name, def: file.Servers[name]}))
	}
	for _, e := range entries {
		if e.Kind != kindServer || file.Servers[e.Name] != nil {
			continue
		}
		doc, err := entryDoc[ServerDoc](e)
		if err != nil {
			a.log.Error("admin API", "err", err)
			continue
		}
		out = append(out, a.view(&serverEntity{name: e.Name, entry: e, doc: doc}))
	}
	slices.SortFunc(out, func(a, b ServerView) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// serverOr404 finds the server a request names, or answers 404 (or 503).
func (a serverAPI) serverOr404(w http.ResponseWriter, r *http.Request) (*serverEntity, bool) {
	name := r.PathValue("name")
	e, err := a.findServer(name)
	switch {
	case errors.Is(err, store.ErrNotFound):
		Error(w, http.StatusNotFound, fmt.Sprintf("no server %q", name))
		return nil, false
	case err != nil:
		Error(w, http.StatusServiceUnavailable, "store: "+err.Error())
		return nil, false
	}
	return e, true
}

func (a serverAPI) ServeServer(w http.ResponseWriter, r *http.Request) {
	e, ok := a.serverOr404(w, r)
	if !ok {
		return
	}
	w.Header().Set("ETag", e.etag())
	JSON(w, http.StatusOK, a.view(e))
}

// readServerBody decodes and checks a server body. name is the path's name ("" for POST,
// where the body names it).
func readServerBody(w http.ResponseWriter, body []byte, name string) (*serverBody, bool) {
	var b serverBody
	if errs := DecodeStrict(body, &b, nil); errs != nil {
		FieldErrors(w, http.StatusBadRequest, errs[0].WithField(), errs, nil)
		return nil, false
	}
	switch {
	case name == "" && b.Name == "":
		FieldErrors(w, http.StatusBadRequest, "name is required", []FieldError{{Field: "name", Message: "is required"}}, nil)
		return nil, false
	case name != "" && b.Name != "" && b.Name != name:
		msg := fmt.Sprintf("the body names server %q, the path %q; a server is renamed by creating the new one and deleting the old", b.Name, name)
		FieldErrors(w, http.StatusBadRequest, msg, []FieldError{{Field: "name", Message: msg}}, nil)
		return nil, false
	}
	if name != "" {
		b.Name = name
	}
	// As loading does for the file: every spelling of a transport is stored as one.
	b.Type = config.NormalizeTransport(b.Type)
	return &b, true
}

func (a serverAPI) ServeCreateServer(w http.ResponseWriter, r *http.Request) {
	a.createServer(w, r, false)
}

func (a serverAPI) ServeValidateServer(w http.ResponseWriter, r *http.Request) {
	a.createServer(w, r, true)
}

func (a serverAPI) createServer(w http.ResponseWriter, r *http.Request, dry bool) {
	body, ok := ReadBody(w, r)
	if !ok {
		return
	}
	b, ok := readServerBody(w, body, "")
	if !ok {
		return
	}
	defer a.port.LockConfig()()
	switch cur, err := a.findServer(b.Name); {
	case err == nil && cur.entry == nil:
		a.fileManaged(w, fmt.Sprintf("server %q", b.Name))
		return
	case err == nil:
		Error(w, http.StatusConflict, fmt.Sprintf("server %q exists (created %s); PUT /api/servers/%s changes it", b.Name, cur.entry.Created.Format(time.RFC3339), b.Name))
		return
	case !errors.Is(err, store.ErrNotFound):
		Error(w, http.StatusServiceUnavailable, "store: "+err.Error())
		return
	}
	now := time.Now().UTC()
	doc := b.ServerDoc
	if fe := unredact(doc.Env, nil, "env"); fe != nil {
		FieldErrors(w, http.StatusBadRequest, fe.WithField(), []FieldError{*fe}, nil)
		return
	}
	if fe := unredact(doc.Headers, nil, "headers"); fe != nil {
		FieldErrors(w, http.StatusBadRequest, fe.WithField(), []FieldError{*fe}, nil)
		return
	}
	next := serverEntry(b.Name, &doc, nil, now)
	status := http.StatusCreated
	if dry {
		status = http.StatusOK
	}
	a.writeEntity(w, r, nil, next, dry, status)
}

// serverEntry builds the stored entry for doc, following cur (nil: a new one).
func serverEntry(name string, doc *ServerDoc, cur *store.ConfigEntry, now time.Time) *store.ConfigEntry {
	return newEntry(kindServer, name, doc, cur, now)
}

func (a serverAPI) ServePutServer(w http.ResponseWriter, r *http.Request) {
	a.updateServer(w, r, false)
}

func (a serverAPI) ServePatchServer(w http.ResponseWriter, r *http.Request) {
	a.updateServer(w, r, true)
}

// updateServer replaces (PUT) or merge-patches (PATCH, RFC 7396) an API-created server.
func (a serverAPI) updateServer(w http.ResponseWriter, r *http.Request, patch bool) {
	body, ok := ReadBody(w, r)
	if !ok {
		return
	}
	defer a.port.LockConfig()()
	cur, ok := a.serverOr404(w, r)
	if !ok {
		return
	}
	if cur.entry == nil {
		a.fileManaged(w, fmt.Sprintf("server %q", cur.name))
		return
	}
	if PreconditionFailed(w, r, cur.etag()) {
		return
	}
	if patch {
		// Check the patch's own fields first, so an unknown one is named as sent.
		var probe serverBody
		if errs := DecodeStrict(body, &probe, nil); errs != nil {
			FieldErrors(w, http.StatusBadRequest, errs[0].WithField(), errs, nil)
			return
		}
		var target, p map[string]any
		_ = json.Unmarshal(cur.entry.Doc, &target)
		_ = json.Unmarshal(body, &p)
		body, _ = json.Marshal(MergePatch(target, p))
	}
	b, ok := readServerBody(w, body, cur.name)
	if !ok {
		return
	}
	doc := b.ServerDoc
	for _, u := range []struct {
		next, cur map[string]string
		field     string
	}{{doc.Env, cur.doc.Env, "env"}, {doc.Headers, cur.doc.Headers, "headers"}} {
		if fe := unredact(u.next, u.cur, u.field); fe != nil {
			FieldErrors(w, http.StatusBadRequest, fe.WithField(), []FieldError{*fe}, nil)
			return
		}
	}
	next := serverEntry(cur.name, &doc, cur.entry, time.Now().UTC())
	a.writeEntity(w, r, cur, next, false, http.StatusOK)
}

func (a serverAPI) ServeDeleteServer(w http.ResponseWriter, r *http.Request) {
	defer a.port.LockConfig()()
	cur, ok := a.serverOr404(w, r)
	if !ok {
		return
	}
	if cur.entry == nil {
		a.fileManaged(w, fmt.Sprintf("server %q", cur.name))
		return
	}
	if PreconditionFailed(w, r, cur.etag()) {
		return
	}
	a.writeEntity(w, r, cur, nil, false, http.StatusNoContent)
}

// writeEntity validates the config with cur replaced by next (nil: deleted), and unless
// dry stores the change and applies the new config live. Called with cfgMu held.
func (a serverAPI) writeEntity(w http.ResponseWriter, r *http.Request, cur *serverEntity, next *store.ConfigEntry, dry bool, status int) {
	name := ""
	var curEntry *store.ConfigEntry
	if cur != nil {
		name, curEntry = cur.name, cur.entry
	} else {
		name = next.Name
	}
	var nextDoc *ServerDoc
	var fieldErrs []FieldError
	var check func(*config.Config) *config.Config
	if next != nil {
		nextDoc, _ = entryDoc[ServerDoc](next)
		var def *config.ServerDef
		def, fieldErrs = nextDoc.def("servers." + name + ".")
		if !nextDoc.enabled() {
			// A disabled server is checked all the same, so enabling it later cannot fail.
			check = func(cfg *config.Config) *config.Config {
				c := *cfg
				c.Servers = maps.Clone(cfg.Servers)
				c.ApplyServerDefaults(def)
				c.Servers[name] = def
				return &c
			}
		}
	}
	warns, ok := a.commitEntry(w, r, kindServer, "servers", name, curEntry, next, fieldErrs, check, dry)
	if !ok {
		return
	}
	if next != nil {
		if fe := commandWarning(name, nextDoc); fe != nil {
			warns = append(warns, *fe)
		}
	}
	if dry {
		JSON(w, status, map[string]any{"valid": true, "warnings": nonNil(warns)})
		return
	}
	if next == nil {
		w.WriteHeader(status)
		return
	}
	e := &serverEntity{name: name, entry: next, doc: nextDoc}
	w.Header().Set("ETag", e.etag())
	if status == http.StatusCreated {
		w.Header().Set("Location", "/api/servers/"+name)
	}
	JSON(w, status, struct {
		ServerView
		Warnings []FieldError `json:"warnings,omitempty"`
	}{a.view(e), warns})
}

// ServeRestartServer restarts a server (Gateway.RestartServer, which the mcpgw plugin's
// restart action runs too).
func (a serverAPI) ServeRestartServer(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	err := a.port.RestartServer(name)
	switch {
	case errors.Is(err, registry.ErrNoServer):
		Error(w, http.StatusNotFound, fmt.Sprintf("no server %q", name))
		return
	case errors.Is(err, registry.ErrRetired):
		Error(w, http.StatusConflict, err.Error())
		return
	case err != nil:
		Error(w, http.StatusInternalServerError, err.Error())
		return
	}
	AuditWrite(a.port, r, "server/"+name, "ok", nil, nil)
	JSON(w, http.StatusAccepted, map[string]any{"restarted": name})
}
