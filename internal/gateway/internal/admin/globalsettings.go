package admin

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/store"
)

// GET and PUT /api/settings/global speak the orchestrator seed's shape of the global
// server list, {"mcpServers": [McpServerConfig]}, so that a client written against the
// seed works unchanged; the servers are the gateway's own (config.ServerDef, stored as
// API server entries), converted both ways (docs/admin-api.md "Global settings",
// docs/decisions.md).

// globalSettingsAPI is the admin API's global server list in the seed's shape
// (/api/settings/global): read, and replaced as one config change.
type globalSettingsAPI struct{ configWriter }

// mcpServerConfig is the seed's McpServerConfig.
type mcpServerConfig struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Description is the server's meta.description. Left out of a PUT, the stored one
	// stays (a client that does not know the field does not erase it); "" clears it.
	Description *string      `json:"description,omitempty"`
	Transport   mcpTransport `json:"transport"`
	Enabled     *bool        `json:"enabled,omitempty"`
	CreatedAt   string       `json:"createdAt,omitempty"`
	// UpdatedAt is the API entry's last change (none for file servers); ignored in a PUT.
	UpdatedAt string `json:"updatedAt,omitempty"`
}

// mcpTransport is the seed's transport: type stdio | http | sse | streamable-http.
type mcpTransport struct {
	Type    string `json:"type"`
	Command string `json:"command,omitempty"`
	// Args is a pointer so that a stdio server's empty list is answered as [] (the seed's
	// clients read args as a list), and left out for the HTTP types.
	Args    *[]string         `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

type globalSettings struct {
	MCPServers []mcpServerConfig `json:"mcpServers"`
	// Warnings (a PUT's answer only) are what /api/servers/validate says of the listed
	// servers: a command the gateway cannot find, and the config's warnings.
	Warnings []FieldError `json:"warnings,omitempty"`
}

// seedTime is how the seed writes a time (JavaScript's toISOString), so that a createdAt
// sent is read back byte for byte.
const seedTime = "2006-01-02T15:04:05.000Z"

// seedType is the seed's spelling of a server type: a type stored as the client wrote it
// comes back as written; the config's normalised streamable_http reads as streamable-http.
func seedType(t string) string {
	if t == config.TransportHTTP {
		return "streamable-http"
	}
	return t
}

// seedServer shows a server document as the seed's McpServerConfig; e is its API entry
// (nil for a file server: the file has no creation or change time).
func seedServer(name string, d *ServerDoc, e *store.ConfigEntry) mcpServerConfig {
	on := d.enabled() && (d.DefaultEnabled == nil || *d.DefaultEnabled)
	s := mcpServerConfig{ID: name, Name: name, Enabled: &on,
		Transport: mcpTransport{Type: seedType(d.Type), Command: d.Command,
			Env: redactValues(d.Env), URL: d.URL, Headers: redactValues(d.Headers)}}
	if len(d.Args) > 0 || config.NormalizeTransport(d.Type) == config.TransportStdio {
		args := append([]string{}, d.Args...)
		s.Transport.Args = &args
	}
	if d.Meta != nil && d.Meta.Title != "" {
		s.Name = d.Meta.Title
	}
	if d.Meta != nil && d.Meta.Description != "" {
		s.Description = &d.Meta.Description
	}
	if e != nil {
		s.CreatedAt = e.Created.UTC().Format(seedTime)
		s.UpdatedAt = e.Updated.UTC().Format(seedTime)
	}
	return s
}

// applySeed writes what the seed's shape carries onto d (a copy of the current document,
// or a new one), keeping the gateway's own fields (mode, timeouts, pool …) as they were.
// Redaction markers keep the current values of cur (nil: none).
func applySeed(d *ServerDoc, s mcpServerConfig, cur *ServerDoc, where string) *FieldError {
	if t := config.NormalizeTransport(s.Transport.Type); t != config.TransportStdio && t != config.TransportHTTP && t != config.TransportSSE {
		return &FieldError{Field: where + ".transport.type", Message: fmt.Sprintf("%q is not stdio, http, sse or streamable-http", s.Transport.Type)}
	}
	var curEnv, curHeaders map[string]string
	if cur != nil {
		curEnv, curHeaders = cur.Env, cur.Headers
	}
	d.Type, d.Command, d.Args, d.URL = s.Transport.Type, s.Transport.Command, nil, s.Transport.URL
	if s.Transport.Args != nil {
		d.Args = slices.Clone(*s.Transport.Args)
	}
	d.Env, d.Headers = maps.Clone(s.Transport.Env), maps.Clone(s.Transport.Headers)
	if fe := unredact(d.Env, curEnv, where+".transport.env"); fe != nil {
		return fe
	}
	if fe := unredact(d.Headers, curHeaders, where+".transport.headers"); fe != nil {
		return fe
	}
	meta := metaDoc{}
	if d.Meta != nil {
		meta = *d.Meta // a copy: d may share its meta with the stored document
	}
	meta.Title = ""
	if s.Name != "" && s.Name != s.ID {
		meta.Title = s.Name
	}
	if s.Description != nil {
		meta.Description = *s.Description
	}
	d.Meta = nil
	if meta != (metaDoc{}) {
		d.Meta = &meta
	}
	d.DefaultEnabled = nil
	if s.Enabled != nil && !*s.Enabled {
		d.DefaultEnabled = s.Enabled
	} else {
		d.Enabled = nil // an enabled server runs
	}
	return nil
}

// globalServers lists every server, file and API ones, by id, in the seed's shape.
func (a globalSettingsAPI) globalServers() (*globalSettings, error) {
	entries, err := a.port.Store().ListConfig()
	if err != nil {
		return nil, err
	}
	file := a.port.FileConfig()
	out := &globalSettings{MCPServers: []mcpServerConfig{}}
	for _, name := range sortedKeys(file.Servers) {
		d := docOf(file.Servers[name])
		out.MCPServers = append(out.MCPServers, seedServer(name, &d, nil))
	}
	for _, e := range entries {
		if e.Kind != kindServer || file.Servers[e.Name] != nil {
			continue
		}
		d, err := entryDoc[ServerDoc](e)
		if err != nil {
			continue
		}
		out.MCPServers = append(out.MCPServers, seedServer(e.Name, d, e))
	}
	slices.SortFunc(out.MCPServers, func(x, y mcpServerConfig) int { return strings.Compare(x.ID, y.ID) })
	return out, nil
}

// ServeGlobalSettings is GET /api/settings/global.
func (a globalSettingsAPI) ServeGlobalSettings(w http.ResponseWriter, r *http.Request) {
	g, err := a.globalServers()
	if err != nil {
		Error(w, http.StatusServiceUnavailable, "store: "+err.Error())
		return
	}
	JSON(w, http.StatusOK, g)
}

// ServePutGlobalSettings is PUT /api/settings/global: the API servers become the list's
// (created, replaced, deleted when left out) as one config change. A file server may be
// listed as GET shows it, and is kept when left out; a PUT that changes one is refused with
// 409 naming it. Fields the seed's shape lacks (mode, timeouts …) keep their values.
func (a globalSettingsAPI) ServePutGlobalSettings(w http.ResponseWriter, r *http.Request) {
	body, ok := ReadBody(w, r)
	if !ok {
		return
	}
	var in struct {
		MCPServers *[]mcpServerConfig `json:"mcpServers"`
	}
	// Lenient on purpose: a seed client may send fields the gateway has no use for.
	if err := json.Unmarshal(body, &in); err != nil || in.MCPServers == nil {
		msg := "a JSON object with mcpServers, a list of servers, is expected"
		if err != nil {
			msg = "bad JSON: " + err.Error()
		}
		FieldErrors(w, http.StatusBadRequest, msg, []FieldError{{Field: "mcpServers", Message: msg}}, nil)
		return
	}
	defer a.port.LockConfig()()
	plan, err := a.seedChanges(*in.MCPServers)
	switch {
	case err != nil:
		Error(w, http.StatusServiceUnavailable, "store: "+err.Error())
		return
	case len(plan.errs) > 0:
		FieldErrors(w, http.StatusBadRequest, "bad mcpServers: "+plan.errs[0].WithField(), plan.errs, nil)
		return
	case len(plan.conflicts) > 0:
		a.fileManaged(w, "server "+strings.Join(plan.conflicts, ", server "))
		return
	}
	var warns []FieldError
	if len(plan.changes) > 0 {
		var ok bool
		if warns, ok = a.commitChanges(w, r, plan.changes, nil, nil, false, "servers"); !ok {
			return
		}
	}
	g, err := a.globalServers()
	if err != nil {
		Error(w, http.StatusServiceUnavailable, "store: "+err.Error())
		return
	}
	g.Warnings = plan.warnings(warns)
	JSON(w, http.StatusOK, g)
}

// seedPlan is what a PUT's list changes: the entry changes, bad fields (errs), the file
// servers it would change (conflicts), and the documents of the API servers it lists.
type seedPlan struct {
	changes   []entryChange
	errs      []FieldError
	conflicts []string
	docs      map[string]*ServerDoc
}

// warnings are the config's warnings about the listed API servers, and for each of them
// the command warning /api/servers/validate gives, in name order.
func (p *seedPlan) warnings(config []FieldError) []FieldError {
	var out []FieldError
	for _, fe := range config {
		for name := range p.docs {
			if where := "servers." + name; fe.Field == where || strings.HasPrefix(fe.Field, where+".") {
				out = append(out, fe)
				break
			}
		}
	}
	for _, name := range sortedKeys(p.docs) {
		if fe := commandWarning(name, p.docs[name]); fe != nil {
			out = append(out, *fe)
		}
	}
	return out
}

// seedChanges turns a PUT's list into a plan of entry changes.
func (a globalSettingsAPI) seedChanges(list []mcpServerConfig) (*seedPlan, error) {
	file := a.port.FileConfig()
	entries, err := a.port.Store().ListConfig()
	if err != nil {
		return nil, err
	}
	p := &seedPlan{docs: map[string]*ServerDoc{}}
	stored := map[string]*store.ConfigEntry{}
	for _, e := range entries {
		if e.Kind == kindServer && file.Servers[e.Name] == nil {
			stored[e.Name] = e
		}
	}
	seen := map[string]bool{}
	now := time.Now().UTC()
	for i, s := range list {
		where := fmt.Sprintf("mcpServers[%d]", i)
		switch {
		case s.ID == "":
			p.errs = append(p.errs, FieldError{Field: where + ".id", Message: "is required"})
			continue
		case seen[s.ID]:
			p.errs = append(p.errs, FieldError{Field: where + ".id", Message: fmt.Sprintf("%q is listed twice", s.ID)})
			continue
		}
		seen[s.ID] = true
		if fd := file.Servers[s.ID]; fd != nil {
			if !a.sameAsFile(fd, s, where) {
				p.conflicts = append(p.conflicts, s.ID)
			}
			continue
		}
		c, doc, fe := seedChange(s, stored[s.ID], where, now)
		switch {
		case fe != nil:
			p.errs = append(p.errs, *fe)
		case c != nil:
			p.changes = append(p.changes, *c)
		}
		if doc != nil {
			p.docs[s.ID] = doc
		}
	}
	for _, name := range sortedKeys(stored) {
		if !seen[name] {
			p.changes = append(p.changes, entryChange{kind: kindServer, name: name, cur: stored[name]})
		}
	}
	return p, nil
}

// seedChange is the change one listed API server makes (nil: none), and the server's
// document after it.
func seedChange(s mcpServerConfig, cur *store.ConfigEntry, where string, now time.Time) (*entryChange, *ServerDoc, *FieldError) {
	var doc ServerDoc
	var curDoc *ServerDoc
	if cur != nil {
		d, err := entryDoc[ServerDoc](cur)
		if err != nil {
			return nil, nil, &FieldError{Field: where, Message: err.Error()}
		}
		doc, curDoc = *d, d
	}
	if fe := applySeed(&doc, s, curDoc, where); fe != nil {
		return nil, nil, fe
	}
	if cur != nil {
		if raw, _ := json.Marshal(&doc); string(raw) == string(cur.Doc) {
			return nil, &doc, nil // unchanged: not stored again, not reloaded
		}
	}
	next := serverEntry(s.ID, &doc, cur, now)
	if cur == nil && s.CreatedAt != "" {
		// The seed's client names its creation time; keep it, so a PUT then GET agrees.
		t, err := time.Parse(time.RFC3339Nano, s.CreatedAt)
		if err != nil {
			return nil, nil, &FieldError{Field: where + ".createdAt", Message: fmt.Sprintf("%q is not an RFC 3339 time", s.CreatedAt)}
		}
		next.Created = t.UTC()
	}
	return &entryChange{kind: kindServer, name: s.ID, cur: cur, next: next}, &doc, nil
}

// sameAsFile reports whether a listed file server is the file's, as GET shows it (values
// written as the redaction marker stand for the file's).
func (a globalSettingsAPI) sameAsFile(fd *config.ServerDef, s mcpServerConfig, where string) bool {
	fileDoc := docOf(fd)
	want := seedServer(s.ID, &fileDoc, nil)
	doc := ServerDoc{Meta: fileDoc.Meta} // a description left out is the file's
	if applySeed(&doc, s, &fileDoc, where) != nil {
		return false
	}
	got := seedServer(s.ID, &doc, nil)
	got.Transport.Type = seedType(config.NormalizeTransport(got.Transport.Type))
	got.Transport.Env, got.Transport.Headers = redactValues(doc.Env), redactValues(doc.Headers)
	same := func(x, y mcpServerConfig) bool {
		bx, _ := json.Marshal(x)
		by, _ := json.Marshal(y)
		return string(bx) == string(by)
	}
	return same(got, want) && maps.Equal(doc.Env, fd.Env) && maps.Equal(doc.Headers, fd.Headers)
}
