package gateway

import (
	"encoding/json"

	"github.com/mcpgw/mcpgw/internal/registry"
)

// The MCP tasks capability (SEP-1686) the gateway declares to a session is what the
// servers of its view declare, joined: tasks.list if one of them lists its tasks,
// tasks.cancel if one cancels, tasks.requests.tools.call if one runs tools as tasks. A
// view none of whose servers has tasks declares none. Sampling and elicitation as tasks
// are the client's capability (tasks.requests.sampling…), passed to the upstreams that
// ask for them, never the gateway's.

// upstreamTasks is the tasks capability of the given servers' upstreams, joined; nil when
// none declares one.
func upstreamTasks(reg *registry.Registry, servers []string) json.RawMessage {
	var list, cancel, toolsCall bool
	for _, name := range servers {
		srv := reg.Server(name)
		if srv == nil {
			continue
		}
		cat := srv.Catalog()
		if cat == nil || len(cat.Caps.Tasks) == 0 {
			continue
		}
		var t struct {
			List     json.RawMessage `json:"list"`
			Cancel   json.RawMessage `json:"cancel"`
			Requests struct {
				Tools struct {
					Call json.RawMessage `json:"call"`
				} `json:"tools"`
			} `json:"requests"`
		}
		if json.Unmarshal(cat.Caps.Tasks, &t) != nil {
			continue
		}
		list = list || present(t.List)
		cancel = cancel || present(t.Cancel)
		toolsCall = toolsCall || present(t.Requests.Tools.Call)
	}
	if !list && !cancel && !toolsCall {
		return nil
	}
	caps := map[string]any{}
	if list {
		caps["list"] = struct{}{}
	}
	if cancel {
		caps["cancel"] = struct{}{}
	}
	if toolsCall {
		caps["requests"] = map[string]any{"tools": map[string]any{"call": struct{}{}}}
	}
	b, _ := json.Marshal(caps)
	return b
}

func present(v json.RawMessage) bool { return len(v) > 0 && string(v) != "null" }

// capsWithTasks adds the servers' tasks capability to caps (a capabilities object).
func capsWithTasks(reg *registry.Registry, caps json.RawMessage, servers []string) json.RawMessage {
	t := upstreamTasks(reg, servers)
	if t == nil {
		return caps
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(caps, &m) != nil {
		return caps
	}
	m["tasks"] = t
	out, _ := json.Marshal(m)
	return out
}
