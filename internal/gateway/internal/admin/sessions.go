package admin

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/mcpgw/mcpgw/internal/store"
)

// sessionAPI is the admin API's sessions (/api/sessions): list, read, end.
type sessionAPI struct{ port Port }

// SessionRow is a session as GET /api/sessions shows it, every key snake_case like the
// rest of the API. What only this process knows of a session (executor aside) is zero for
// a session live only on another replica.
type SessionRow struct {
	ID           string    `json:"id"`
	Transport    string    `json:"transport"`
	Agent        string    `json:"agent"`
	Conversation string    `json:"conversation"`
	Task         string    `json:"task"`
	Servers      []string  `json:"servers"`
	Created      time.Time `json:"created"`
	// LastSeen is the session's last request: the live session's own clock where it is
	// live here, else its stored record's (which the reaper refreshes about once a minute).
	LastSeen  time.Time `json:"last_seen"`
	Executor  string    `json:"executor"`
	Handshake string    `json:"handshake"` // full | thin: the form of its last tools/list ("" before one)
	Tools     int       `json:"tools"`     // tools in its view
	Calls     int64     `json:"calls"`     // tool calls through this process, upstream and plugin ones
	Live      bool      `json:"live"`      // live in this process
	// Stream is whether the session's standalone stream (GET /mcp, or the legacy SSE
	// stream) is open here: where list_changed and other unprompted messages go.
	Stream bool `json:"stream"`
}

// ServeSessions lists the sessions in the store, oldest first.
func (a sessionAPI) ServeSessions(w http.ResponseWriter, r *http.Request) {
	recs, err := a.port.SessionRecords()
	if err != nil {
		Error(w, http.StatusServiceUnavailable, "session store: "+err.Error())
		return
	}
	out := []SessionRow{}
	for _, rec := range recs {
		out = append(out, a.port.SessionRow(rec))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Created.Before(out[j].Created) })
	JSON(w, http.StatusOK, out)
}

// SessionTool is one tool of a session's view.
type SessionTool struct {
	Name   string `json:"name"`   // as the client sees it
	Server string `json:"server"` // the upstream server
	Tool   string `json:"tool"`   // the upstream's own name
}

// ServeSession shows one session and the tools its view holds now.
func (a sessionAPI) ServeSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	rec, err := a.port.SessionRecord(id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		Error(w, http.StatusNotFound, fmt.Sprintf("no session %q", id))
		return
	case err != nil:
		Error(w, http.StatusServiceUnavailable, "session store: "+err.Error())
		return
	}
	out := struct {
		SessionRow
		ProtocolVersion string        `json:"protocol_version"`
		ViewTools       []SessionTool `json:"view"`
	}{SessionRow: a.port.SessionRow(rec), ProtocolVersion: rec.ProtocolVersion, ViewTools: []SessionTool{}}
	if tools, live := a.port.SessionView(id); live {
		out.ViewTools = append(out.ViewTools, tools...)
		out.Tools = len(out.ViewTools)
	}
	JSON(w, http.StatusOK, out)
}

// ServeEndSession ends a session as a client's DELETE would: its instances stop, it leaves
// the store (so every replica forgets it), and its client's next request gets 404.
func (a sessionAPI) ServeEndSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	err := a.port.EndSession(id, "ended by an admin ("+Actor(r)+")")
	switch {
	case errors.Is(err, store.ErrNotFound):
		Error(w, http.StatusNotFound, fmt.Sprintf("no session %q", id))
		return
	case err != nil:
		Error(w, http.StatusServiceUnavailable, "session store: "+err.Error())
		return
	}
	AuditWrite(a.port, r, "session/"+id, "ok", nil, nil)
	w.WriteHeader(http.StatusNoContent)
}
