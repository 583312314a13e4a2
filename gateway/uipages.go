package gateway

import (
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/mcpgw/mcpgw/gateway/internal/admin"
	"github.com/mcpgw/mcpgw/gateway/internal/ui"
	"github.com/mcpgw/mcpgw/sessions"
)

// The web UI's pages: each reads what the admin API would answer, in process, and
// renders it; the page's script changes things through /ui/api.

func (g *Gateway) uiPages() []ui.Page {
	return []ui.Page{
		{Path: "/ui/servers", Handler: http.HandlerFunc(g.uiServers)},
		{Path: "/ui/tasks", Handler: http.HandlerFunc(g.uiTasks)},
		{Path: "/ui/sessions", Handler: http.HandlerFunc(g.ui.ServeSessions)},
		{Path: "/ui/sessions/{id}", Handler: http.HandlerFunc(g.ui.ServeSession)},
		{Path: "/ui/usage", Handler: http.HandlerFunc(g.uiUsage)},
		{Path: "/ui/agents", Handler: http.HandlerFunc(g.uiAgents)},
		{Path: "/ui/agents/{id}/explain", Handler: http.HandlerFunc(g.uiExplain)},
		{Path: "/ui/executors", Handler: http.HandlerFunc(g.uiExecutors)},
	}
}

func ftoa(f float64, prec int) string { return strconv.FormatFloat(f, 'f', prec, 64) }

// uiServerRow is a server in the Servers page.
type uiServerRow struct {
	admin.ServerView
	Doc       admin.ServerDoc // what the edit form starts from (secret values redacted)
	Instances int64
	RunMode   string // as resolved (auto shows what it runs as)
}

func (g *Gateway) uiServers(w http.ResponseWriter, r *http.Request) {
	views, err := g.admin.ServerViews()
	if err != nil {
		g.ui.StoreTrouble(w, r, err)
		return
	}
	rows := make([]uiServerRow, 0, len(views))
	for _, v := range views {
		row := uiServerRow{ServerView: v, Doc: v.ServerDoc, Instances: g.reg.Instances().Count(v.Name), RunMode: v.ServerDoc.Mode}
		if v.Live != nil {
			row.RunMode = v.Live.Mode
		}
		rows = append(rows, row)
	}
	g.ui.Render(w, r, http.StatusOK, "servers", "Servers", map[string]any{"Servers": rows})
}

// uiTaskRow is a task in the Tasks page: its servers, and the servers its running
// sessions loaded (which may differ: sessions keep what they started with).
type uiTaskRow struct {
	*sessions.Task
	Loaded   []string
	Sessions int
}

func (g *Gateway) uiTasks(w http.ResponseWriter, r *http.Request) {
	tasks, err := g.admin.AllTasks()
	if err != nil {
		g.ui.StoreTrouble(w, r, err)
		return
	}
	recs, err := g.store.List()
	if err != nil {
		g.ui.StoreTrouble(w, r, err)
		return
	}
	var rows []uiTaskRow
	for _, t := range tasks {
		row := uiTaskRow{Task: t}
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
	type serverChoice struct {
		Name, Title string
		Default     bool
	}
	var choices []serverChoice
	cfg := g.policy().cfg
	for _, name := range sortedKeys(cfg.Servers) {
		d := cfg.Servers[name]
		choices = append(choices, serverChoice{Name: name, Title: d.Meta.Title, Default: d.Enabled()})
	}
	g.ui.Render(w, r, http.StatusOK, "tasks", "Tasks", map[string]any{
		"Tasks": rows, "Servers": choices, "Agents": sortedKeys(cfg.Agents)})
}

// uiBar is one bar of a chart, in the chart's own coordinates.
type uiBar struct {
	X, Y, W, H float64
	Class      string
	Label      string
}

// uiChart is a bar chart drawn as SVG by the template (no script, no library).
type uiChart struct {
	ID, Title, Desc string
	W, H            float64
	Max             float64
	Bars            []uiBar
	Ticks           []uiBar // x-axis labels: X and Label
}

const chartW, chartH, chartPad = 640.0, 160.0, 20.0

// minuteChart draws per-minute values as bars, each minute split into the series given.
func minuteChart(id, title, desc string, mins []UsageMinute, series []struct {
	class, name string
	get         func(UsageMinute) float64
}) uiChart {
	c := uiChart{ID: id, Title: title, Desc: desc, W: chartW, H: chartH}
	for _, m := range mins {
		for _, s := range series {
			c.Max = math.Max(c.Max, s.get(m))
		}
	}
	scale := 1.0
	if c.Max > 0 {
		scale = (chartH - chartPad) / c.Max
	}
	// One slot per minute of the hour, the newest at the right: a bar's place says when.
	slots := float64(usageKeep - 1)
	slot := chartW / slots
	bw := math.Max(slot/float64(len(series))-0.5, 1)
	first := slots - float64(len(mins))
	for i, m := range mins {
		for j, s := range series {
			v := s.get(m)
			h := v * scale
			c.Bars = append(c.Bars, uiBar{X: (first+float64(i))*slot + float64(j)*bw, Y: chartH - chartPad - h, W: bw, H: h, Class: s.class,
				Label: m.At.UTC().Format("15:04") + " " + s.name + ": " + ftoa(v, 0)})
		}
	}
	c.Ticks = []uiBar{{X: 2, Y: chartH - 5, Label: "60 min ago"}, {X: chartW/2 - 30, Y: chartH - 5, Label: "30 min ago"}, {X: chartW - 28, Y: chartH - 5, Label: "now"}}
	return c
}

func (g *Gateway) uiUsage(w http.ResponseWriter, r *http.Request) {
	minutes, bad := usageWindow(r)
	if bad != "" {
		minutes = usageMaxMinutes
	}
	rep := g.Usage(time.Duration(minutes) * time.Minute)
	calls := minuteChart("chart-calls", "Tool calls per minute", "ok calls and errors per minute over the last hour", rep.Minutes,
		[]struct {
			class, name string
			get         func(UsageMinute) float64
		}{{"ok", "calls", func(m UsageMinute) float64 { return m.Calls - m.Errors }}, {"err", "errors", func(m UsageMinute) float64 { return m.Errors }}})
	tokens := minuteChart("chart-tokens", "tools/list tokens per minute", "estimated tokens of full and thin tool lists served per minute", rep.Minutes,
		[]struct {
			class, name string
			get         func(UsageMinute) float64
		}{{"full", "full", func(m UsageMinute) float64 { return m.FullTokens }}, {"thin", "thin", func(m UsageMinute) float64 { return m.ThinTokens }}})
	maxTool := 0.0
	for _, t := range rep.ByAgentTool {
		maxTool = math.Max(maxTool, t.Calls)
	}
	type barRow struct {
		UsageRow
		Width float64 // of 100
	}
	var byAgentTool []barRow
	for _, t := range rep.ByAgentTool {
		byAgentTool = append(byAgentTool, barRow{UsageRow: t, Width: 100 * t.Calls / math.Max(maxTool, 1)})
	}
	g.ui.Render(w, r, http.StatusOK, "usage", "Usage", map[string]any{
		"Report": rep, "Calls": calls, "Tokens": tokens, "ByAgentTool": byAgentTool,
		"Minutes": minutes, "Windows": []int{5, 15, 60}})
}

func (g *Gateway) uiAgents(w http.ResponseWriter, r *http.Request) {
	agents, err := g.admin.AgentViews()
	if err != nil {
		g.ui.StoreTrouble(w, r, err)
		return
	}
	cfg := g.policy().cfg
	g.ui.Render(w, r, http.StatusOK, "agents", "Agents", map[string]any{
		"Agents": agents, "Servers": append(sortedKeys(cfg.Servers), sortedKeys(cfg.Plugins)...), "Executors": sortedKeys(cfg.Executors)})
}

func (g *Gateway) uiExplain(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	id := r.PathValue("id")
	v, fail := g.Explain(id, q.Get("task"), q.Get("executor"))
	data := map[string]any{"Agent": id, "Task": q.Get("task"), "Executor": q.Get("executor"), "View": v}
	if fail != nil {
		data["Error"] = fail.Message
	}
	tasks, _ := g.admin.AllTasks()
	data["Tasks"] = tasks
	data["Executors"] = sortedKeys(g.policy().cfg.Executors)
	g.ui.Render(w, r, http.StatusOK, "explain", "Explain "+id, data)
}

func (g *Gateway) uiExecutors(w http.ResponseWriter, r *http.Request) {
	execs, err := g.admin.ExecutorViews()
	if err != nil {
		g.ui.StoreTrouble(w, r, err)
		return
	}
	g.ui.Render(w, r, http.StatusOK, "executors", "Executors", map[string]any{
		"Executors": execs, "Servers": sortedKeys(g.policy().cfg.Servers)})
}
