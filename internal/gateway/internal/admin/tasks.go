package admin

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/mcpgw/mcpgw/internal/store"
)

// taskAPI is the admin API's tasks (/api/tasks).
type taskAPI struct{ port Port }

// allTasks merges file-provisioned tasks with those created through the API.
func (a taskAPI) allTasks() ([]*store.Task, error) {
	stored, err := a.port.Store().ListTasks()
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, t := range stored {
		seen[t.ID] = true
	}
	cfg := a.port.Config()
	for id, tc := range cfg.Tasks {
		if !seen[id] && tc != nil {
			stored = append(stored, &store.Task{ID: id, EnabledMCPServers: tc.EnabledMCPServers, Agent: tc.Agent, Project: tc.Project, FileManaged: true})
		}
	}
	sort.Slice(stored, func(i, j int) bool { return stored[i].ID < stored[j].ID })
	return stored, nil
}

func (a taskAPI) ServeTasks(w http.ResponseWriter, r *http.Request) {
	ts, err := a.allTasks()
	if err != nil {
		Error(w, http.StatusServiceUnavailable, "store: "+err.Error())
		return
	}
	JSON(w, http.StatusOK, ts)
}

// taskBody is what POST and PUT /api/tasks accept. enabledMcpServers is an alias of
// enabled_mcp_servers (the spelling agents' own configs use); created_at and file_managed
// are read-only fields of an answer, ignored.
type taskBody struct {
	ID                string          `json:"id"`
	EnabledMCPServers *[]string       `json:"enabled_mcp_servers"`
	Agent             string          `json:"agent"`
	Project           *string         `json:"project"`
	Created           json.RawMessage `json:"created_at"`
	FileManaged       json.RawMessage `json:"file_managed"`
}

var taskAliases = map[string]string{"enabledMcpServers": "enabled_mcp_servers"}

func (a taskAPI) readTask(w http.ResponseWriter, r *http.Request) (*taskBody, bool) {
	var b taskBody
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBody))
	if err != nil {
		ReadFailed(w, err)
		return nil, false
	}
	if len(bytes.TrimSpace(body)) > 0 {
		if errs := DecodeStrict(body, &b, taskAliases); errs != nil {
			FieldErrors(w, http.StatusBadRequest, "bad task: "+errs[0].WithField(), errs, nil)
			return nil, false
		}
	}
	cfg := a.port.Config()
	if b.EnabledMCPServers != nil {
		for _, s := range *b.EnabledMCPServers {
			if !cfg.Has(s) {
				Error(w, http.StatusBadRequest, "unknown server "+s+" (no server or plugin has that name)")
				return nil, false
			}
		}
	}
	if b.Project != nil && *b.Project != "" && cfg.Projects[*b.Project] == nil {
		fe := FieldError{Field: "project", Message: "unknown project " + *b.Project}
		FieldErrors(w, http.StatusBadRequest, "bad task: "+fe.WithField(), []FieldError{fe}, nil)
		return nil, false
	}
	if b.Agent != "" && len(cfg.Agents) > 0 {
		if _, ok := cfg.Agents[b.Agent]; !ok {
			Error(w, http.StatusBadRequest, "unknown agent "+b.Agent)
			return nil, false
		}
	}
	return &b, true
}

// ServeCreateTask creates a task. Without enabled_mcp_servers it is pre-filled from its
// project's servers, or without a project from the servers' default_enabled.
func (a taskAPI) ServeCreateTask(w http.ResponseWriter, r *http.Request) {
	b, ok := a.readTask(w, r)
	if !ok {
		return
	}
	if b.ID == "" {
		b.ID = "task-" + strings.ToLower(rand.Text()[:10])
	}
	if _, err := a.port.Task(b.ID); err == nil {
		Error(w, http.StatusConflict, "task "+b.ID+" exists")
		return
	}
	t := &store.Task{ID: b.ID, Agent: b.Agent, Created: time.Now().UTC()}
	if b.Project != nil {
		t.Project = *b.Project
	}
	if b.EnabledMCPServers != nil {
		t.EnabledMCPServers = *b.EnabledMCPServers
	} else if names, ok := a.port.Config().ProjectServers(t.Project); ok {
		t.EnabledMCPServers = names // a project's task starts with the project's servers
	} else {
		cfg := a.port.Config()
		for name, d := range cfg.Servers {
			if d != nil && d.Enabled() {
				t.EnabledMCPServers = append(t.EnabledMCPServers, name)
			}
		}
		for name, d := range cfg.Plugins {
			if d != nil && d.Enabled() {
				t.EnabledMCPServers = append(t.EnabledMCPServers, name)
			}
		}
		sort.Strings(t.EnabledMCPServers)
	}
	if t.EnabledMCPServers == nil {
		t.EnabledMCPServers = []string{}
	}
	if err := a.port.Store().PutTask(t); err != nil {
		Error(w, http.StatusServiceUnavailable, "store: "+err.Error())
		return
	}
	AuditWrite(a.port, r, "task/"+t.ID, "ok", nil, t)
	JSON(w, http.StatusCreated, t)
}

func (a taskAPI) ServeTask(w http.ResponseWriter, r *http.Request) {
	t, err := a.port.Task(r.PathValue("id"))
	if err != nil {
		Error(w, http.StatusNotFound, "unknown task "+r.PathValue("id"))
		return
	}
	JSON(w, http.StatusOK, t)
}

// editableTask finds the task a request names and refuses file-managed ones.
func (a taskAPI) editableTask(w http.ResponseWriter, r *http.Request) (*store.Task, bool) {
	t, err := a.port.Task(r.PathValue("id"))
	if err != nil {
		Error(w, http.StatusNotFound, "unknown task "+r.PathValue("id"))
		return nil, false
	}
	if t.FileManaged {
		Error(w, http.StatusConflict, "task "+t.ID+" is managed by the config file; edit the file instead")
		return nil, false
	}
	return t, true
}

// ServePutTask changes a task's servers. Sessions already running keep theirs.
func (a taskAPI) ServePutTask(w http.ResponseWriter, r *http.Request) {
	t, ok := a.editableTask(w, r)
	if !ok {
		return
	}
	b, ok := a.readTask(w, r)
	if !ok {
		return
	}
	before := *t
	if b.EnabledMCPServers != nil {
		t.EnabledMCPServers = *b.EnabledMCPServers
	}
	if b.Agent != "" {
		t.Agent = b.Agent
	}
	if b.Project != nil {
		t.Project = *b.Project // "" takes the task out of its project
	}
	if err := a.port.Store().PutTask(t); err != nil {
		Error(w, http.StatusServiceUnavailable, "store: "+err.Error())
		return
	}
	AuditWrite(a.port, r, "task/"+t.ID, "ok", &before, t)
	JSON(w, http.StatusOK, t)
}

func (a taskAPI) ServeDeleteTask(w http.ResponseWriter, r *http.Request) {
	t, ok := a.editableTask(w, r)
	if !ok {
		return
	}
	if err := a.port.Store().DeleteTask(t.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
		Error(w, http.StatusServiceUnavailable, "store: "+err.Error())
		return
	}
	AuditWrite(a.port, r, "task/"+t.ID, "ok", t, nil)
	w.WriteHeader(http.StatusNoContent)
}
