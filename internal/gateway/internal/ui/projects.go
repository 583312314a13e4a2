package ui

import (
	"net/http"
	"slices"
	"strings"

	"github.com/mcpgw/mcpgw/config"
)

// projectRow is a project in the Projects page: its document as GET /api/projects shows
// it, the servers it enables (config.ProjectServers, what its tasks' sessions start from)
// and the tasks that name it.
type projectRow struct {
	ID, Name, Source string
	// Listed is the project's own server list (nil: it starts from the default set).
	Listed    []string
	Overrides map[string]bool
	Enabled   []string
	Tasks     []string
}

// ServeProjects is the Projects page.
func (u *UI) ServeProjects(w http.ResponseWriter, r *http.Request) {
	views, err := u.port.ProjectViews()
	if err != nil {
		u.view.StoreTrouble(w, r, err)
		return
	}
	tasks, err := u.port.AllTasks()
	if err != nil {
		u.view.StoreTrouble(w, r, err)
		return
	}
	cfg := u.port.Config()
	rows := make([]projectRow, 0, len(views))
	for _, v := range views {
		row := projectRow{ID: str(v["id"]), Name: str(v["name"]), Source: str(v["source"])}
		if l, ok := v["servers"].([]any); ok {
			row.Listed = []string{}
			for _, s := range l {
				row.Listed = append(row.Listed, str(s))
			}
		}
		if o, ok := v["overrides"].(map[string]any); ok {
			row.Overrides = map[string]bool{}
			for k, on := range o {
				row.Overrides[k], _ = on.(bool)
			}
		}
		row.Enabled, _ = cfg.ProjectServers(row.ID)
		for _, t := range tasks {
			if t.Project == row.ID {
				row.Tasks = append(row.Tasks, t.ID)
			}
		}
		rows = append(rows, row)
	}
	u.view.Render(w, r, http.StatusOK, "projects", "Projects", map[string]any{
		"Projects": rows, "Servers": serverChoices(cfg)})
}

// serverChoice is a server or plugin a form may tick.
type serverChoice struct {
	Name, Title string
	Default     bool
}

func serverChoices(cfg *config.Config) []serverChoice {
	var out []serverChoice
	for _, name := range sortedKeys(cfg.Servers) {
		d := cfg.Servers[name]
		out = append(out, serverChoice{Name: name, Title: d.Meta.Title, Default: d.Enabled()})
	}
	for _, name := range sortedKeys(cfg.Plugins) {
		d := cfg.Plugins[name]
		out = append(out, serverChoice{Name: name, Title: "plugin " + d.Type, Default: d.Enabled()})
	}
	slices.SortFunc(out, func(a, b serverChoice) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
