package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/mcpgw/mcpgw/auth"
	"github.com/mcpgw/mcpgw/internal/wire"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/sessions"
)

// Full and thin handshakes (docs/sessions.md). The first tools/list of an (agent,
// conversation) for a view is full; later sessions of that conversation with the same
// view get the thin form. A session keeps the form it was first served for a view, so its
// pages and re-lists stay consistent.

func (dp *dispatcher) describeTool() (string, json.RawMessage) {
	g := dp.g
	name := "mcpgw" + g.cfg.Naming.Separator + "describe_tools"
	def, _ := json.Marshal(map[string]any{
		"name":        name,
		"description": "Returns the full definitions (description, input and output schemas) of the named tools; this list shows them in short form.",
		"inputSchema": map[string]any{
			"type":       "object",
			"properties": map[string]any{"names": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}},
			"required":   []string{"names"},
		},
		"annotations": map[string]any{"readOnlyHint": true},
	})
	return name, def
}

// form decides (once per session and view) whether the session gets the full or thin list.
func (dp *dispatcher) form(s *Session, v *registry.View) string {
	g := dp.g
	hash := v.Hash()
	s.viewMu.Lock()
	if f, ok := s.forms[hash]; ok {
		s.viewMu.Unlock()
		return f
	}
	s.viewMu.Unlock()
	mode := s.rec.Handshake
	if mode == "" || mode == "auto" {
		cfg := g.policy().cfg
		if ac := cfg.Agents[s.rec.Agent]; ac != nil && ac.Handshake != "" && ac.Handshake != "auto" {
			mode = ac.Handshake
		} else {
			mode = cfg.HTTP.Handshake
		}
	}
	form := "full"
	switch mode {
	case "thin":
		form = "thin"
	case "full":
	default:
		if s.rec.Conversation != "" {
			c, err := g.store.GetConversation(s.rec.Agent, s.rec.Conversation)
			if err == nil && c.FullViewHash == hash {
				form = "thin"
			} else if err == nil || errors.Is(err, sessions.ErrNotFound) {
				if perr := g.store.PutConversation(&sessions.Conversation{Agent: s.rec.Agent, ID: s.rec.Conversation,
					FullViewHash: hash, Updated: time.Now().UTC()}); perr != nil {
					g.log.Warn("conversation not saved", "err", perr)
				}
			}
		}
	}
	s.viewMu.Lock()
	if s.forms == nil {
		s.forms = map[string]string{}
	}
	fresh := false
	if f, ok := s.forms[hash]; ok {
		form = f
	} else {
		s.forms[hash] = form
		fresh = true
		g.metrics.Handshake(form)
	}
	s.viewMu.Unlock()
	if fresh {
		s.mu.Lock()
		if s.rec.Forms == nil {
			s.rec.Forms = map[string]string{}
		}
		s.rec.Forms[hash] = form
		rec := s.rec
		rec.Forms = maps.Clone(s.rec.Forms)
		s.mu.Unlock()
		if err := g.store.Put(&rec); err != nil {
			g.log.Warn("session record not updated", "session", s.ID, "err", err)
		}
	}
	return form
}

// thinFor reports whether the session's client holds thin definitions of view v's tools:
// it was served the thin form of this view, or of the last view it listed (the view may
// have changed since, e.g. when the session's own instance re-listed).
func (s *Session) thinFor(v *registry.View) bool {
	s.viewMu.Lock()
	defer s.viewMu.Unlock()
	if f, ok := s.forms[v.Hash()]; ok {
		return f == "thin"
	}
	return s.lastForm == "thin"
}

// describeTools returns the full definitions of the named tools in the session's view.
func (dp *dispatcher) describeTools(s *Session, m *wire.Msg, args json.RawMessage, out outbox) {
	var a struct {
		Names []string `json:"names"`
	}
	if err := json.Unmarshal(args, &a); err != nil || len(a.Names) == 0 {
		_ = out.reply(wire.Result(m.ID, toolError("describe_tools needs {\"names\": [\"tool\", …]}")))
		return
	}
	v := s.View()
	defs := []json.RawMessage{}
	var missing []string
	for _, n := range a.Names {
		if t := v.Tool(n); t != nil {
			defs = append(defs, t.Def)
		} else {
			missing = append(missing, n)
		}
	}
	body, _ := json.Marshal(map[string]any{"tools": defs})
	res := map[string]any{
		"content":           []map[string]string{{"type": "text", "text": string(body)}},
		"structuredContent": map[string]any{"tools": defs},
	}
	if len(missing) > 0 {
		res["content"] = append(res["content"].([]map[string]string), map[string]string{"type": "text", "text": fmt.Sprintf("unknown tools: %v", missing)})
	}
	b, _ := json.Marshal(res)
	_ = out.reply(wire.Result(m.ID, b))
}

// schemaOnError answers a thin session's call whose arguments fail the tool's full schema
// with an isError result that carries that schema, so the model can retry correctly.
func (dp *dispatcher) schemaOnError(s *Session, m *wire.Msg, t *registry.Tool, verr error, out outbox, start time.Time) {
	g := dp.g
	text := fmt.Sprintf("Invalid arguments for %s: %v\nThe tool's full input schema:\n%s", t.Exposed, verr, t.InputSchema())
	b, _ := json.Marshal(map[string]any{
		"content":           []map[string]string{{"type": "text", "text": text}},
		"structuredContent": map[string]any{"error": verr.Error(), "inputSchema": t.InputSchema()},
		"isError":           true,
	})
	_ = out.reply(wire.Result(m.ID, b))
	g.metrics.CountCall(s.rec.Agent, t.Server, t.Name, "invalid_arguments")
	g.audit.Record(auth.AuditEvent{Kind: "call", Agent: s.rec.Agent, Conversation: s.rec.Conversation, Task: s.rec.Task,
		Session: s.ID, Tool: t.Exposed, Upstream: t.Server, Outcome: "invalid_arguments", Rule: "schema-on-error", DurationMS: ms(time.Since(start))})
}
