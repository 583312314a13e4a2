package ui

import (
	"net/http"
	"slices"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/admin"
)

// sessionRows are the sessions port stores, newest first.
func sessionRows(port Port) ([]admin.SessionRow, error) {
	recs, err := port.SessionRecords()
	if err != nil {
		return nil, err
	}
	out := []admin.SessionRow{}
	for _, rec := range recs {
		out = append(out, port.SessionRow(rec))
	}
	slices.SortFunc(out, func(a, b admin.SessionRow) int { return b.Created.Compare(a.Created) })
	return out, nil
}

// ServeSessions is the Sessions page.
func (u *UI) ServeSessions(w http.ResponseWriter, r *http.Request) {
	rows, err := sessionRows(u.port)
	if err != nil {
		u.view.StoreTrouble(w, r, err)
		return
	}
	u.view.Render(w, r, http.StatusOK, "sessions", "Sessions", map[string]any{"Sessions": rows})
}

// ServeSession is one session's page, with the tools in its view when it is live here.
func (u *UI) ServeSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	rec, err := u.port.SessionRecord(id)
	if err != nil {
		u.view.Message(w, r, http.StatusNotFound, "No such session", "Session "+id+" is not live (it ended, or never was).")
		return
	}
	row := u.port.SessionRow(rec)
	tools, live := u.port.SessionView(id)
	if live {
		row.Tools = len(tools)
	}
	u.view.Render(w, r, http.StatusOK, "session", "Session "+id, map[string]any{
		"Session": row, "Record": rec, "Tools": tools})
}
