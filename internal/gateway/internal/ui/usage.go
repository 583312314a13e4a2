package ui

import (
	"math"
	"net/http"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/telemetry"
)

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
func minuteChart(id, title, desc string, mins []telemetry.UsageMinute, series []struct {
	class, name string
	get         func(telemetry.UsageMinute) float64
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
	slots := float64(telemetry.UsageMaxMinutes)
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

// ServeUsage is the Usage page: tool calls, errors and tools/list tokens per minute over
// the last ?minutes= (at most an hour), and calls by agent and tool.
func (u *UI) ServeUsage(w http.ResponseWriter, r *http.Request) {
	minutes, bad := telemetry.UsageMinutes(r.URL.Query().Get("minutes"))
	if bad != "" {
		minutes = telemetry.UsageMaxMinutes
	}
	rep := u.port.Usage(time.Duration(minutes) * time.Minute)
	calls := minuteChart("chart-calls", "Tool calls per minute", "ok calls and errors per minute over the last hour", rep.Minutes,
		[]struct {
			class, name string
			get         func(telemetry.UsageMinute) float64
		}{{"ok", "calls", func(m telemetry.UsageMinute) float64 { return m.Calls - m.Errors }}, {"err", "errors", func(m telemetry.UsageMinute) float64 { return m.Errors }}})
	tokens := minuteChart("chart-tokens", "tools/list tokens per minute", "tokens (o200k_base) of full, thin and search tool lists served per minute", rep.Minutes,
		[]struct {
			class, name string
			get         func(telemetry.UsageMinute) float64
		}{{"full", "full", func(m telemetry.UsageMinute) float64 { return m.FullTokens }}, {"thin", "thin", func(m telemetry.UsageMinute) float64 { return m.ThinTokens }},
			{"search", "search", func(m telemetry.UsageMinute) float64 { return m.SearchTokens }}})
	maxTool := 0.0
	for _, t := range rep.ByAgentTool {
		maxTool = math.Max(maxTool, t.Calls)
	}
	type barRow struct {
		telemetry.UsageRow
		Width float64 // of 100
	}
	var byAgentTool []barRow
	for _, t := range rep.ByAgentTool {
		byAgentTool = append(byAgentTool, barRow{UsageRow: t, Width: 100 * t.Calls / math.Max(maxTool, 1)})
	}
	u.view.Render(w, r, http.StatusOK, "usage", "Usage", map[string]any{
		"Report": rep, "Calls": calls, "Tokens": tokens, "ByAgentTool": byAgentTool,
		"Minutes": minutes, "Windows": []int{5, 15, 60}})
}
