package gateway

import (
	"encoding/json"
	"slices"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/admin"
	"github.com/mcpgw/mcpgw/internal/wire"
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
			rows = append(rows, admin.SkillRow{Server: sk.Server, URI: sk.Exposed, UpstreamURI: sk.URI, Name: sk.Name,
				Description: skillDescription(sk.Upstream), Files: len(sk.Files), Dynamic: sk.Dynamic, Hash: sk.Hash, Held: !in.ServesSkill(sk)})
		}
	}
	return rows
}

// skillDescription is the frontmatter description of a skill entry as a client's JSON
// parser reads it: members matched exactly (encoding/json would also take "DESCRIPTION",
// and an upstream could then show an admin another description than the model reads),
// the last of a repeated one; "" when there is none or it is not a string.
func skillDescription(entry json.RawMessage) string {
	var fm []byte
	_ = wire.Members(entry, func(k string, v []byte) error {
		if k == "frontmatter" {
			fm = v
		}
		return nil
	})
	desc := ""
	_ = wire.Members(fm, func(k string, v []byte) error {
		if k == "description" {
			desc, _ = wire.String(v)
		}
		return nil
	})
	return desc
}
