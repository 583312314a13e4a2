package dispatch

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/listform"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/reply"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/reqparams"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/telemetry"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/toolrank"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/store"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// toolLists serve a session's lists (tools/list, prompts/list, resources/list and
// resources/templates/list) and the gateway's own tools of the thin and search forms
// (describeName/describeDef, searchName and searchDefFor; handshake.go): which form of tools/list
// a session gets, its pages, and what they are counted as.
type toolLists struct {
	cfg   *config.Config
	host  Host
	store store.Store
	log   *slog.Logger
	obs   *Observer

	describeName string
	describeDef  json.RawMessage
	searchName   string
	// ranks are the agents' tool rankings, for capped clients' lists (capped.go).
	ranks *toolrank.Ranks
}

func (l *toolLists) list(ctx context.Context, s *session.Session, m *wire.Msg, kind string, out Outbox) {
	p, err := reqparams.Read(m.Params)
	if err != nil {
		_ = out.Reply(wire.Error(m.ID, wire.CodeInvalidParams, "Invalid params: "+err.Error(), nil))
		return
	}
	// The first list is what the session can call: its own instances' catalogues, not
	// the registry's, and not an empty one while a server starts after a restart.
	s.Upstreams.AwaitCatalogs(ctx)
	v := s.View()
	form := listform.Full
	if kind == "tools" {
		form = l.form(s, v)
	}
	var pg *registry.Page
	ok := true
	switch form {
	case listform.Thin:
		pg, ok = v.ListPageCounted(kind, true, p.Cursor, l.cfg.HTTP.PageSize, l.describeDef)
	case listform.Search:
		// One page: a cursor can only be one a client made up.
		if p.Cursor == "" {
			pg = l.searchPage(s, v)
		} else {
			ok = false
		}
	default:
		pg, ok = v.ListPageCounted(kind, false, p.Cursor, l.cfg.HTTP.PageSize)
	}
	if !ok {
		_ = out.Reply(wire.Error(m.ID, wire.CodeInvalidParams, "Invalid params: invalid cursor", nil))
		return
	}
	if kind == "tools" {
		l.listedTools(s, v, form, p.Cursor, pg)
	} else {
		_, others := session.Fingerprints(v)
		s.Shown.ListedOthers(others)
	}
	if pr, ok := out.(*reply.Post); ok {
		_ = pr.ReplyResult(m.ID, pg.Bytes)
		return
	}
	_ = out.Reply(wire.Result(m.ID, pg.Bytes))
}

// listedTools notes a tools/list page served to s in form: what the session was sent (for
// list_changed), its form, and its size against the full form's in the metrics. A thin
// page's saving is against the full form of the same page, from the view's page cache
// (rendered at most once per view); a thin page whose cursor points into the gateway's own
// tools has no full form. A search page stands for the whole full list.
func (l *toolLists) listedTools(s *session.Session, v *registry.View, form, cursor string, pg *registry.Page) {
	tools, others := session.Fingerprints(v)
	s.Shown.ListedTools(tools, others, form)
	var full telemetry.ListCount
	switch form {
	case listform.Thin:
		if fp, ok := v.ListPageCounted("tools", false, cursor, l.cfg.HTTP.PageSize); ok {
			full = telemetry.ListCount{Bytes: len(fp.Bytes), Tokens: fp.Tokens}
		}
	case listform.Search:
		if fp, ok := v.ListPageCounted("tools", false, "", 0); ok {
			full = telemetry.ListCount{Bytes: len(fp.Bytes), Tokens: fp.Tokens}
		}
	}
	l.obs.listServed(s, form, telemetry.ListCount{Bytes: len(pg.Bytes), Tokens: pg.Tokens}, full)
}
