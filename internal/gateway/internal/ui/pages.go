package ui

import (
	"net/http"
	"slices"
	"sort"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/admin"
	"github.com/mcpgw/mcpgw/internal/store"
)

// The pages that list what the admin API changes: each reads what the admin API would
// answer, in process, through the Port, and renders it; the page's script changes things
// through /ui/api.

// serverRow is a server in the Servers page.
type serverRow struct {
	admin.ServerView
	Doc       admin.ServerDoc // the configured mode beside the resolved one (the edit form reads the server from /ui/api)
	Instances int64
	RunMode   string     // as resolved (auto shows what it runs as)
	Skills    skillCount // the skills it lists, and how many integrity holds
}

// ServeServers is the Servers page.
func (u *UI) ServeServers(w http.ResponseWriter, r *http.Request) {
	views, err := u.port.ServerViews()
	if err != nil {
		u.view.StoreTrouble(w, r, err)
		return
	}
	skills := u.skills()
	rows := make([]serverRow, 0, len(views))
	for _, v := range views {
		row := serverRow{ServerView: v, Doc: v.ServerDoc, Instances: u.port.Instances(v.Name), RunMode: v.ServerDoc.Mode, Skills: skills.Counts[v.Name]}
		if v.Live != nil {
			row.RunMode = v.Live.Mode
		}
		rows = append(rows, row)
	}
	u.view.Render(w, r, http.StatusOK, "servers", "Servers", map[string]any{"Servers": rows, "Skills": skills})
}

// ServePlugins is the Plugins page: every plugin with its state, connections, resource
// types, tools, restarts and last error, as GET /api/plugins answers them.
func (u *UI) ServePlugins(w http.ResponseWriter, r *http.Request) {
	u.view.Render(w, r, http.StatusOK, "plugins", "Plugins", map[string]any{"Plugins": u.port.PluginRows()})
}

// taskRow is a task in the Tasks page: its servers, and the servers its running
// sessions loaded (which may differ: sessions keep what they started with).
type taskRow struct {
	*store.Task
	Loaded   []string
	Sessions int
}

// ServeTasks is the Tasks page.
func (u *UI) ServeTasks(w http.ResponseWriter, r *http.Request) {
	tasks, err := u.port.AllTasks()
	if err != nil {
		u.view.StoreTrouble(w, r, err)
		return
	}
	recs, err := u.port.SessionRecords()
	if err != nil {
		u.view.StoreTrouble(w, r, err)
		return
	}
	var rows []taskRow
	for _, t := range tasks {
		row := taskRow{Task: t}
		for _, rec := range recs {
			if rec.Task != t.ID {
				continue
			}
			row.Sessions++
			for _, s := range rec.Servers {
				if !slices.Contains(row.Loaded, s) {
					row.Loaded = append(row.Loaded, s)
				}
			}
		}
		slices.Sort(row.Loaded)
		rows = append(rows, row)
	}
	// Plugins are offered beside servers, as on the Projects page: a task's
	// enabled_mcp_servers names both, and a plugin it leaves out is off for its sessions.
	cfg := u.port.Config()
	u.view.Render(w, r, http.StatusOK, "tasks", "Tasks", map[string]any{
		"Tasks": rows, "Servers": serverChoices(cfg), "Agents": sortedKeys(cfg.Agents), "Projects": sortedKeys(cfg.Projects)})
}

// ServeAgents is the Agents page.
func (u *UI) ServeAgents(w http.ResponseWriter, r *http.Request) {
	agents, err := u.port.AgentViews()
	if err != nil {
		u.view.StoreTrouble(w, r, err)
		return
	}
	cfg := u.port.Config()
	u.view.Render(w, r, http.StatusOK, "agents", "Agents", map[string]any{
		"Agents": agents, "Servers": append(sortedKeys(cfg.Servers), sortedKeys(cfg.Plugins)...), "Executors": sortedKeys(cfg.Executors)})
}

// ServeExplain is an agent's Explain page: what it (with ?task= and ?executor=) may see.
func (u *UI) ServeExplain(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	id := r.PathValue("id")
	v, fail := u.port.Explain(id, q.Get("task"), q.Get("executor"))
	data := map[string]any{"Agent": id, "Task": q.Get("task"), "Executor": q.Get("executor"), "View": v}
	if fail != nil {
		data["Error"] = fail.Message
	}
	tasks, _ := u.port.AllTasks()
	data["Tasks"] = tasks
	data["Executors"] = sortedKeys(u.port.Config().Executors)
	u.view.Render(w, r, http.StatusOK, "explain", "Explain "+id, data)
}

// ServeExecutors is the Executors page.
func (u *UI) ServeExecutors(w http.ResponseWriter, r *http.Request) {
	execs, err := u.port.ExecutorViews()
	if err != nil {
		u.view.StoreTrouble(w, r, err)
		return
	}
	u.view.Render(w, r, http.StatusOK, "executors", "Executors", map[string]any{
		"Executors": execs, "Servers": sortedKeys(u.port.Config().Servers), "Runners": u.runnerStates()})
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
