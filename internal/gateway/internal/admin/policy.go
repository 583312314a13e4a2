package admin

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/store"
)

// policyAPI is the admin API's agents, executors and projects (/api/agents,
// /api/executors, /api/projects): one set of handlers for the three, each kind described
// by a policySpec (agents.go, executors.go, projects.go).
type policyAPI struct{ configWriter }

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
			warns = append(warns, resolveWarnings(a.port.Config(), id)...)
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
