package ui

import (
	"net/http"
	"slices"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/admin"
)

// sessionRows are the stored sessions, newest first.
func (u *UI) sessionRows() ([]admin.SessionRow, error) {
	recs, err := u.port.SessionRecords()
	if err != nil {
		return nil, err
	}
	out := []admin.SessionRow{}
	for _, rec := range recs {
		out = append(out, u.port.SessionRow(rec))
	}
	slices.SortFunc(out, func(a, b admin.SessionRow) int { return b.Created.Compare(a.Created) })
	return out, nil
}

// ServeSessions is the Sessions page.
func (u *UI) ServeSessions(w http.ResponseWriter, r *http.Request) {
	rows, err := u.sessionRows()
	if err != nil {
		u.StoreTrouble(w, r, err)
		return
	}
	u.Render(w, r, http.StatusOK, "sessions", "Sessions", map[string]any{"Sessions": rows})
}

// ServeSession is one session's page, with the tools in its view when it is live here.
func (u *UI) ServeSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	rec, err := u.port.SessionRecord(id)
	if err != nil {
		u.Message(w, r, http.StatusNotFound, "No such session", "Session "+id+" is not live (it ended, or never was).")
		return
	}
	row := u.port.SessionRow(rec)
	tools, live := u.port.SessionView(id)
	if live {
		row.Tools = len(tools)
	}
	u.Render(w, r, http.StatusOK, "session", "Session "+id, map[string]any{
		"Session": row, "Record": rec, "Tools": tools})
}

// StoreTrouble answers a page that could not read the session store: 503, saying why.
func (u *UI) StoreTrouble(w http.ResponseWriter, r *http.Request, err error) {
	u.uiMessage(w, r, http.StatusServiceUnavailable, "Store unavailable", "The session store cannot be read: "+err.Error())
}
