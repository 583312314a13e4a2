package instances

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpgw/mcpgw/internal/registry/internal/catalog"
	"github.com/mcpgw/mcpgw/internal/upstream"
)

// fetchSkills lists the skills of a server that declares the skills extension (and
// resources) into cat, their URIs renamed for the gateway (catalog.ExposeSkill), and
// renames the server's resources that belong to a skill the same way, so that a skill
// file is one URI whether a client finds it in skills/list or resources/list. At most
// catalog.MaxSkills are kept; entries that are not skills (no name, a path that climbs
// out, files outside the skill) are left out with a problem each.
func fetchSkills(ctx context.Context, server string, c *upstream.Conn, cat *Catalog) error {
	items, more, err := listSkills(ctx, c)
	if err != nil {
		return fmt.Errorf("skills/list: %w", err)
	}
	if more {
		cat.Problems = append(cat.Problems, fmt.Sprintf("skills/list lists more than %d skills; the first %d are served", catalog.MaxSkills, catalog.MaxSkills))
	}
	seen := map[string]bool{}
	for _, raw := range items {
		sk, err := catalog.ExposeSkill(server, raw)
		if err != nil {
			cat.Problems = append(cat.Problems, err.Error())
			continue
		}
		if seen[sk.URI] {
			cat.Problems = append(cat.Problems, fmt.Sprintf("skill %q is listed twice; the second is hidden", sk.URI))
			continue
		}
		seen[sk.URI] = true
		cat.Skills = append(cat.Skills, sk)
	}
	for _, r := range cat.Resources {
		for _, sk := range cat.Skills {
			if sk.Within(r.URI) {
				exposed := catalog.SkillURI(server, r.URI)
				r.Def = catalog.RenameURI(r.Def, exposed)
				r.URI, r.Skill = exposed, sk.Exposed
				break
			}
		}
	}
	return nil
}

// listSkills reads skills/list page by page, up to catalog.MaxSkills entries (more: the
// upstream has more) and at most maxSkillPages pages.
func listSkills(ctx context.Context, c *upstream.Conn) (items []json.RawMessage, more bool, err error) {
	cursor := ""
	for range maxSkillPages {
		params := json.RawMessage(`{}`)
		if cursor != "" {
			params, _ = json.Marshal(map[string]string{"cursor": cursor})
		}
		res, err := c.Request(ctx, "skills/list", params)
		if err != nil {
			return nil, false, err
		}
		var page struct {
			Skills     []json.RawMessage `json:"skills"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := json.Unmarshal(res, &page); err != nil {
			return nil, false, fmt.Errorf("bad skills/list result: %w", err)
		}
		for _, sk := range page.Skills {
			if len(items) == catalog.MaxSkills {
				return items, true, nil
			}
			items = append(items, sk)
		}
		if page.NextCursor == "" || page.NextCursor == cursor {
			return items, false, nil
		}
		cursor = page.NextCursor
	}
	return items, true, nil
}

// maxSkillPages bounds the pages of one skills/list: an upstream whose cursors never end
// is listed as far as this.
const maxSkillPages = 1000
