package gateway

import (
	"encoding/json"
	"slices"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/admin"
)

// Skills are the skills the running servers list, for GET /api/skills: each with its
// frontmatter name and description, and whether integrity holds it now.
func (p adminServers) Skills(server string) []admin.SkillRow {
	names := make([]string, 0, len(p.g.reg.Config().Servers))
	for name := range p.g.reg.Config().Servers {
		if server == "" || name == server {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	in := p.g.reg.Integrity()
	var rows []admin.SkillRow
	for _, name := range names {
		srv := p.g.reg.Server(name)
		if srv == nil {
			continue
		}
		cat := srv.Catalog()
		if cat == nil {
			continue
		}
		for _, sk := range cat.Skills {
			var fm struct {
				Frontmatter struct {
					Description string `json:"description"`
				} `json:"frontmatter"`
			}
			_ = json.Unmarshal(sk.Upstream, &fm)
			rows = append(rows, admin.SkillRow{Server: sk.Server, URI: sk.Exposed, UpstreamURI: sk.URI, Name: sk.Name,
				Description: fm.Frontmatter.Description, Files: len(sk.Files), Dynamic: sk.Dynamic, Hash: sk.Hash, Held: !in.ServesSkill(sk)})
		}
	}
	return rows
}
