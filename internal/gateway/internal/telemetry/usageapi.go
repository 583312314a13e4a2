package telemetry

import (
	"math"
	"sort"
	"strconv"
	"time"
)

// GET /api/usage: the Usage page's numbers as JSON, for scripts and `mcpgw top`. It reads
// the same ring of per-minute snapshots of the gateway's own registry (usage.go), so it
// needs no Prometheus server and its memory is bounded by the ring: usageKeep snapshots of
// series whose labels are bounded (docs/metrics.md).

// UsageMaxMinutes is the longest window the ring answers.
const UsageMaxMinutes = usageKeep - 1

// UsageTokens is one agent's tools/list tokens over a window.
type UsageTokens struct {
	Agent                     string
	Full, Thin, Search, Saved float64
}

// agentTokenRows are the per-agent list tokens between two snapshots, most tokens first.
func agentTokenRows(base, last *usageSnap) []UsageTokens {
	by := map[string]*UsageTokens{}
	row := func(agent string) *UsageTokens {
		r := by[agent]
		if r == nil {
			r = &UsageTokens{Agent: agent}
			by[agent] = r
		}
		return r
	}
	for k, v := range last.agentTokens {
		d := v - base.agentTokens[k]
		if d <= 0 {
			continue
		}
		switch k[1] {
		case "full":
			row(k[0]).Full += d
		case "thin":
			row(k[0]).Thin += d
		case "search":
			row(k[0]).Search += d
		}
	}
	for a, v := range last.saved {
		if d := v - base.saved[a]; d > 0 {
			row(a).Saved += d
		}
	}
	out := make([]UsageTokens, 0, len(by))
	for _, r := range by {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		ti, tj := out[i].Full+out[i].Thin+out[i].Search, out[j].Full+out[j].Thin+out[j].Search
		if ti != tj {
			return ti > tj
		}
		return out[i].Agent < out[j].Agent
	})
	return out
}

// UsageMinutes reads /api/usage's ?minutes= value (1 to UsageMaxMinutes, default all of
// them); a value out of bounds gives the message that refuses it.
func UsageMinutes(v string) (int, string) {
	if v == "" {
		return UsageMaxMinutes, ""
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > UsageMaxMinutes {
		return 0, "minutes must be a whole number from 1 to " + strconv.Itoa(UsageMaxMinutes) + ", not " + strconv.Quote(v)
	}
	return n, ""
}

// The JSON shapes of /api/usage (docs/admin-api.md).
type (
	apiUsageTokens struct {
		Full   float64 `json:"full"`
		Thin   float64 `json:"thin"`
		Search float64 `json:"search"`
		Saved  float64 `json:"saved"`
	}
	apiUsageAgent struct {
		Agent  string         `json:"agent"`
		Calls  float64        `json:"calls"`
		Errors float64        `json:"errors"`
		Tokens apiUsageTokens `json:"tokens"`
	}
	apiUsageTool struct {
		Server string   `json:"server"`
		Tool   string   `json:"tool"`
		Calls  float64  `json:"calls"`
		Errors float64  `json:"errors"`
		P50    *float64 `json:"p50_seconds"` // null without calls in the window
		P99    *float64 `json:"p99_seconds"`
	}
	apiUsageAgentTool struct {
		Agent  string  `json:"agent"`
		Server string  `json:"server"`
		Tool   string  `json:"tool"`
		Calls  float64 `json:"calls"`
		Errors float64 `json:"errors"`
	}
	apiUsageMinute struct {
		At           time.Time `json:"at"`
		Calls        float64   `json:"calls"`
		Errors       float64   `json:"errors"`
		FullTokens   float64   `json:"full_tokens"`
		ThinTokens   float64   `json:"thin_tokens"`
		SearchTokens float64   `json:"search_tokens"`
	}
	// UsageDoc is GET /api/usage's answer.
	UsageDoc struct {
		From       time.Time           `json:"from"`
		To         time.Time           `json:"to"`
		Minutes    int                 `json:"minutes"`
		Calls      float64             `json:"calls"`
		Errors     float64             `json:"errors"`
		Tokens     apiUsageTokens      `json:"tokens"`
		Agents     []apiUsageAgent     `json:"agents"`
		Tools      []apiUsageTool      `json:"tools"`
		AgentTools []apiUsageAgentTool `json:"agent_tools"`
		PerMinute  []apiUsageMinute    `json:"per_minute"`
	}
)

func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// UsageJSON is rep in /api/usage's shape (docs/admin-api.md): agents with calls or
// tokens, most calls first.
func UsageJSON(rep *UsageReport, minutes int) UsageDoc {
	out := UsageDoc{From: rep.From, To: rep.To, Minutes: minutes, Calls: rep.Calls, Errors: rep.Errors,
		Tokens: apiUsageTokens{rep.FullTokens, rep.ThinTokens, rep.SearchTokens, rep.SavedTokens},
		Agents: []apiUsageAgent{}, Tools: []apiUsageTool{}, AgentTools: []apiUsageAgentTool{}, PerMinute: []apiUsageMinute{}}
	idx := map[string]int{}
	for _, r := range rep.ByAgent {
		idx[r.Agent] = len(out.Agents)
		out.Agents = append(out.Agents, apiUsageAgent{Agent: r.Agent, Calls: r.Calls, Errors: r.Errors})
	}
	for _, t := range rep.ByAgentTokens {
		i, ok := idx[t.Agent]
		if !ok {
			i = len(out.Agents)
			idx[t.Agent] = i
			out.Agents = append(out.Agents, apiUsageAgent{Agent: t.Agent})
		}
		out.Agents[i].Tokens = apiUsageTokens{t.Full, t.Thin, t.Search, t.Saved}
	}
	for _, r := range rep.ByTool {
		out.Tools = append(out.Tools, apiUsageTool{Server: r.Server, Tool: r.Tool, Calls: r.Calls, Errors: r.Errors, P50: finite(r.P50), P99: finite(r.P99)})
	}
	for _, r := range rep.ByAgentTool {
		out.AgentTools = append(out.AgentTools, apiUsageAgentTool{Agent: r.Agent, Server: r.Server, Tool: r.Tool, Calls: r.Calls, Errors: r.Errors})
	}
	for _, m := range rep.Minutes {
		out.PerMinute = append(out.PerMinute, apiUsageMinute(m))
	}
	return out
}
