package gateway

import (
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/admin"
	"github.com/mcpgw/mcpgw/internal/store"
)

// sessionRow is a session as the admin API, the UI and the mcpgw plugin show it.
type sessionRow = admin.SessionRow

func (g *Gateway) sessionRowOf(rec *store.Record) sessionRow {
	row := sessionRow{ID: rec.ID, Transport: rec.Transport, Agent: rec.Agent, Conversation: rec.Conversation, Task: rec.Task,
		Servers: rec.Servers, Created: rec.Created, LastSeen: rec.LastSeen, Executor: rec.Executor}
	if row.Servers == nil {
		row.Servers = []string{}
	}
	s := g.live.liveSession(rec.ID)
	if s != nil {
		row.Live = true
		row.Calls = s.Calls.Load()
		row.Stream = s.Out.Open()
		row.LastSeen = time.Unix(0, s.LastSeen.Load()).UTC()
		row.Handshake, row.Tools = s.Shown.Summary()
	}
	return row
}
