package gateway

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/mcpgw/mcpgw/gateway/internal/ui"
)

// The web UI's pages (gateway/internal/ui has them, but Usage: it reads the gateway's
// metrics snapshots, usage.go).

func (g *Gateway) uiPages() []ui.Page {
	return []ui.Page{
		{Path: "/ui/servers", Handler: http.HandlerFunc(g.ui.ServeServers)},
		{Path: "/ui/tasks", Handler: http.HandlerFunc(g.ui.ServeTasks)},
		{Path: "/ui/sessions", Handler: http.HandlerFunc(g.ui.ServeSessions)},
		{Path: "/ui/sessions/{id}", Handler: http.HandlerFunc(g.ui.ServeSession)},
		{Path: "/ui/usage", Handler: http.HandlerFunc(g.uiUsage)},
		{Path: "/ui/agents", Handler: http.HandlerFunc(g.ui.ServeAgents)},
		{Path: "/ui/agents/{id}/explain", Handler: http.HandlerFunc(g.ui.ServeExplain)},
		{Path: "/ui/executors", Handler: http.HandlerFunc(g.ui.ServeExecutors)},
	}
}

func ftoa(f float64, prec int) string { return strconv.FormatFloat(f, 'f', prec, 64) }

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
