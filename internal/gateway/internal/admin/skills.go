package admin

import (
	"net/http"
)

// SkillRow is one skill a server lists (the skills extension), as GET /api/skills shows
// it: the URI clients see and the server's own, its frontmatter name and description,
// how many files its entry lists (dynamic: it lists none), the fingerprint integrity
// pins, and whether integrity holds it now (held: clients do not see it).
type SkillRow struct {
	Server      string `json:"server"`
	URI         string `json:"uri"`
	UpstreamURI string `json:"upstream_uri"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Files       int    `json:"files"`
	Dynamic     bool   `json:"dynamic,omitempty"`
	Hash        string `json:"hash"`
	Held        bool   `json:"held"`
}

// skills answers GET /api/skills[?server=NAME]: the skills of every running server (or
// one), in server name order, each server's as it lists them.
func skills(port Port) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rows := port.Skills(r.URL.Query().Get("server"))
		if rows == nil {
			rows = []SkillRow{}
		}
		JSON(w, http.StatusOK, map[string]any{"skills": rows})
	}
}
