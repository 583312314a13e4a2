package admin

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/store"
)

// Projects (/api/projects) are the tier between the global servers and a task: kept like
// agents and executors (policySpec, stored config entries of kind project merged over the
// file's projects), so GET, PUT, PATCH and DELETE by id are policyWrite's, and POST is a
// create that may leave the id to the gateway.

const kindProject = "project"

// projectDoc is a project as the admin API reads and writes it (the config file's keys).
// Servers is a pointer so that [] (a project with no server) survives.
type projectDoc struct {
	Name      string          `json:"name,omitempty"`
	Servers   *[]string       `json:"servers,omitempty"`
	Overrides map[string]bool `json:"overrides,omitempty"`
}

func (d *projectDoc) config() *config.ProjectConfig {
	p := &config.ProjectConfig{Name: d.Name, Overrides: maps.Clone(d.Overrides)}
	if d.Servers != nil {
		p.Servers = append([]string{}, *d.Servers...)
	}
	return p
}

func projectDocOf(p *config.ProjectConfig) projectDoc {
	d := projectDoc{Name: p.Name, Overrides: p.Overrides}
	if p.Servers != nil {
		s := slices.Clone(p.Servers)
		d.Servers = &s
	}
	return d
}

func projectSpec() *policySpec {
	return &policySpec{kind: kindProject, section: "projects",
		fileDoc: func(c *config.Config, id string) (any, bool) {
			p, ok := c.Projects[id]
			if !ok || p == nil {
				return nil, ok
			}
			return projectDocOf(p), true
		},
		fileIDs: func(c *config.Config) []string { return sortedKeys(c.Projects) },
		decode: func(b []byte) (any, []FieldError) {
			var d struct {
				projectDoc
				readOnlyFields
			}
			errs := DecodeStrict(b, &d, nil)
			return &d.projectDoc, errs
		},
	}
}

func mergeProject(m, file *config.Config, e *store.ConfigEntry, shadowed []string) ([]string, error) {
	if _, inFile := file.Projects[e.Name]; inFile {
		return append(shadowed, "projects."+e.Name), nil
	}
	doc, err := entryDoc[projectDoc](e)
	if err != nil {
		return shadowed, err
	}
	if m.Projects == nil {
		m.Projects = map[string]*config.ProjectConfig{}
	}
	m.Projects[e.Name] = doc.config()
	return shadowed, nil
}

// ServeCreateProject is POST /api/projects: the body's id (or a new one) must not exist;
// the rest is PUT's (policyWrite refuses a POST of an existing id under the config lock).
func (a policyAPI) ServeCreateProject(w http.ResponseWriter, r *http.Request) {
	body, ok := ReadBody(w, r)
	if !ok {
		return
	}
	var head struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(body, &head); err != nil {
		FieldErrors(w, http.StatusBadRequest, "bad project: "+err.Error(), []FieldError{{Message: err.Error()}}, nil)
		return
	}
	if head.ID == "" {
		head.ID = "proj-" + strings.ToLower(rand.Text()[:10])
	}
	r.SetPathValue("id", head.ID)
	r.Body = io.NopCloser(bytes.NewReader(body))
	a.policyWrite(projectSpec())(w, r)
}

// ServeDeleteProject refuses to delete a project that API tasks still name (a file task
// naming it makes the merged config invalid, which policyWrite reports), then deletes it
// as DELETE of an agent does.
func (a policyAPI) ServeDeleteProject(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	tasks, err := a.port.Store().ListTasks()
	if err != nil {
		Error(w, http.StatusServiceUnavailable, "store: "+err.Error())
		return
	}
	var users []string
	for _, t := range tasks {
		if t.Project == id {
			users = append(users, t.ID)
		}
	}
	if len(users) > 0 {
		Error(w, http.StatusConflict, fmt.Sprintf("project %q has tasks: %s; move or delete them first", id, strings.Join(users, ", ")))
		return
	}
	a.policyWrite(projectSpec())(w, r)
}
