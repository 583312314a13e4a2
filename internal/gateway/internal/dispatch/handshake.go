package dispatch

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"context"
	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/listform"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/toolrank"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/store"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// List forms (docs/sessions.md): full, thin and search, chosen by listform.Choose. A
// session of the session revisions keeps the form it was first served for a view, so its
// pages and re-lists stay consistent; auto serves a conversation's first handshake of a
// small view in full and later ones thin. A stateless (2026-07-28) request has no
// handshake: its form is chosen on every request from the request's own input (client
// info and X-Mcp-Handshake, which its gateway-side session is keyed by), the caller's
// agent and the config, and never from what was served before (docs/protocol.md).

// form decides which form of tools/list session s gets for view v.
func (l *toolLists) form(s *session.Session, v *registry.View) string {
	hash := v.Hash()
	stateless := s.Transport == "stateless"
	if !stateless {
		if f, ok := s.Shown.Form(hash); ok {
			return f
		}
	}
	in := formInputs(l.host.Policy(), s, v)
	if !stateless && in.Mode == listform.Auto {
		in.Repeat = func() bool { return l.conversationSaw(s, hash) }
	}
	form, fresh := listform.Choose(in), false
	if stateless {
		fresh = s.Shown.SetForm(hash, form)
	} else {
		form, fresh = s.Shown.KeepForm(hash, form)
	}
	if fresh {
		// Once per session and view: the form an agent was served explains what it saw
		// (a thin list's descriptions, a search tool instead of tools).
		l.log.Info("list form", "session", s.ID, "agent", s.Rec.Agent, "client", ClientName(s.ClientInfo()),
			"form", form, "tools", len(v.Tools), "handshake", in.Mode)
		l.obs.chose(form)
		rec := s.SetForm(hash, form)
		if err := l.store.Put(&rec); err != nil {
			l.log.Warn("session record not updated", "session", s.ID, "err", err)
		}
	}
	return form
}

// formInputs are what the form of session s over view v is chosen from under cfg: the
// form asked for (the session's header, else its agent's setting, else the gateway's;
// auto when none names a form), the client's tool cap from its profile, and for auto the
// view's size and the thresholds.
func formInputs(cfg *config.Config, s *session.Session, v *registry.View) listform.Inputs {
	in := listform.Inputs{Mode: s.Rec.Handshake, Tools: len(v.Tools),
		FullMax: cfg.HTTP.Auto.FullMaxTokens, ThinMax: cfg.HTTP.Auto.ThinMaxTokens}
	_, p := cfg.ClientProfile(ClientName(s.ClientInfo()))
	if in.Mode == "" || in.Mode == listform.Auto {
		if ac := cfg.Agents[s.Rec.Agent]; ac != nil && ac.Handshake != "" && ac.Handshake != listform.Auto {
			in.Mode = ac.Handshake
		} else if p != nil && p.DefersTools {
			// A client that defers tools itself is served what its own search indexes
			// best: the whole definitions (docs/performance.md, "Clients that defer").
			in.Mode = listform.Full
		} else {
			in.Mode = cfg.HTTP.Handshake
		}
	}
	if p != nil {
		in.MaxTools = p.MaxTools
	}
	if in.Mode == "" || in.Mode == listform.Auto {
		in.Mode = listform.Auto
		in.FullTokens = v.FullListTokens()
	}
	return in
}

// conversationSaw reports whether the session's conversation was served view hash in full
// before; if not, it records that it now is.
func (l *toolLists) conversationSaw(s *session.Session, hash string) bool {
	if s.Rec.Conversation == "" {
		return false
	}
	c, err := l.store.GetConversation(s.Rec.Agent, s.Rec.Conversation)
	if err == nil && c.FullViewHash == hash {
		return true
	}
	if err == nil || errors.Is(err, store.ErrNotFound) {
		if perr := l.store.PutConversation(&store.Conversation{Agent: s.Rec.Agent, ID: s.Rec.Conversation,
			FullViewHash: hash, Updated: time.Now().UTC()}); perr != nil {
			l.log.Warn("conversation not saved", "err", perr)
		}
	}
	return false
}

// ClientName is the name in an initialize's clientInfo ("" when there is none).
func ClientName(info json.RawMessage) string {
	var ci struct {
		Name string `json:"name"`
	}
	if len(info) == 0 || json.Unmarshal(info, &ci) != nil {
		return ""
	}
	return ci.Name
}

// thinFor reports whether the session's client holds thin definitions of view v's tools:
// it was served the thin form of this view, or of the last view it listed (the view may
// have changed since, e.g. when the session's own instance re-listed). A stateless
// request's client holds the form its own input gets (form, toolLists.form), whatever
// its gateway-side session served before.
func thinFor(s *session.Session, v *registry.View, form func(*session.Session, *registry.View) string) bool {
	if s.Transport == "stateless" {
		return form(s, v) == listform.Thin
	}
	return s.Shown.ServedForm(v.Hash()) == listform.Thin
}

// searchPage is the search form's list for session s over view v: the pinned tools (the
// gateway's and the agent's globs), at most one fewer than the client's cap, and the search
// tool.
func (l *toolLists) searchPage(s *session.Session, v *registry.View) *registry.Page {
	cfg := l.host.Policy()
	globs := cfg.PinnedTools(s.Rec.Agent)
	max := 0
	if _, p := cfg.ClientProfile(ClientName(s.ClientInfo())); p != nil && p.MaxTools > 0 {
		max = p.MaxTools - 1
	}
	pin := func(t *registry.Tool) bool {
		for _, gl := range globs {
			for _, n := range append([]string{t.Exposed}, t.OtherNames()...) {
				if ok, _ := path.Match(gl, n); ok {
					return true
				}
			}
		}
		return false
	}
	if max > 0 {
		return l.cappedPage(s, v, pin, max)
	}
	return v.SearchPage(strings.Join(globs, "\x00"), pin, max, l.searchDefFor(v))
}

// searchDefFor is the search tool's definition over view v, its description ending with
// v's catalogue map (docs/sessions.md, "The catalogue map"): built once per view, so every
// list of the view carries the same bytes, and two views differ only as their tools do.
func (l *toolLists) searchDefFor(v *registry.View) json.RawMessage {
	return v.Memo("search-tool\x00"+l.searchName, func() json.RawMessage { return listform.SearchToolWith(l.searchName, v.Map()) })
}

// describeTools answers describe_tools: the full definitions of the named tools in the
// session's view.
func (l *toolLists) describeTools(s *session.Session, m *wire.Msg, args json.RawMessage, out Outbox) {
	_ = out.Reply(wire.Result(m.ID, listform.DescribeResult(s.View(), args)))
}

// searchTools answers search_tools: the full definitions of the tools of the session's view
// that best match the query. When no word of it matches, the agent's most-used tools are
// the candidates, for a session (a stateless request's answer follows from its own input
// and authorization alone, as its lists do).
func (l *toolLists) searchTools(s *session.Session, m *wire.Msg, args json.RawMessage, out Outbox) {
	v := s.View()
	var usual func() []int
	if s.Transport != "stateless" {
		usual = func() []int { return toolrank.Usual(v.Tools, l.ranks.Ranking(s.Rec.Agent), registry.SearchUsual) }
	}
	res, found := listform.SearchResult(v, args, l.host.Policy().HTTP.Search.Results, usual)
	l.log.Debug("search_tools", "session", s.ID, "agent", s.Rec.Agent, "found", found)
	_ = out.Reply(wire.Result(m.ID, res))
}

// schemaOnError answers a thin session's call whose arguments fail the tool's full schema
// with an isError result that carries that schema, so the model can retry correctly.
func (dp *Dispatcher) schemaOnError(ctx context.Context, s *session.Session, m *wire.Msg, t *registry.Tool, verr error, out Outbox, start time.Time) {
	text := fmt.Sprintf("Invalid arguments for %s: %v\nThe tool's full input schema:\n%s", t.Exposed, verr, t.InputSchema())
	b, _ := json.Marshal(map[string]any{
		"content":           []map[string]string{{"type": "text", "text": text}},
		"structuredContent": map[string]any{"error": verr.Error(), "inputSchema": t.InputSchema()},
		"isError":           true,
	})
	_ = out.Reply(wire.Result(m.ID, b))
	dp.Obs.invalidArgs(ctx, callEvent{s: s, t: t, outcome: "invalid_arguments", rule: "schema-on-error", duration: time.Since(start)})
}
