package instances

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/registry/internal/catalog"
	"github.com/mcpgw/mcpgw/internal/upstream"
)

// FetchCatalog lists everything an upstream offers.
func FetchCatalog(ctx context.Context, server string, c *upstream.Conn, n config.Naming) (cat *Catalog, err error) {
	defer func() {
		// What an upstream lists is input like any other: a list that trips a bug fails
		// this listing (the server is retried with backoff), never the daemon.
		if p := recover(); p != nil {
			cat, err = nil, fmt.Errorf("reading the lists of %q failed: internal error: %v", server, p)
		}
	}()
	cat = &Catalog{Caps: c.ServerCaps, Instructions: c.Instructions, Seq: catalog.NextSeq()}
	if c.ServerCaps.Tools != nil {
		items, err := c.ListAll(ctx, "tools/list", "tools")
		if err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		seen := map[string]string{}
		for _, raw := range items {
			t, err := catalog.ExposeTool(server, raw, n)
			if err != nil {
				cat.Problems = append(cat.Problems, err.Error())
				continue
			}
			if prev, dup := seen[t.Exposed]; dup {
				cat.Problems = append(cat.Problems, fmt.Sprintf("tools %q and %q both expose as %q; the second is hidden", prev, t.Name, t.Exposed))
				continue
			}
			seen[t.Exposed] = t.Name
			if t.CheckSchema(); t.Unvalidated != "" {
				cat.Problems = append(cat.Problems, fmt.Sprintf("tool %q: calls are forwarded unvalidated: %s", t.Name, t.Unvalidated))
			}
			cat.Tools = append(cat.Tools, t)
		}
		sort.Slice(cat.Tools, func(i, j int) bool { return cat.Tools[i].Exposed < cat.Tools[j].Exposed })
	}
	if c.ServerCaps.Prompts != nil {
		items, err := c.ListAll(ctx, "prompts/list", "prompts")
		if err != nil {
			return nil, fmt.Errorf("prompts/list: %w", err)
		}
		for _, raw := range items {
			var head struct {
				Name string `json:"name"`
			}
			if json.Unmarshal(raw, &head) != nil || head.Name == "" {
				cat.Problems = append(cat.Problems, "a prompt without a name was skipped")
				continue
			}
			ex := catalog.ExposedName(server, head.Name, n)
			cat.Prompts = append(cat.Prompts, &catalog.Prompt{Server: server, Name: head.Name, Exposed: ex, Def: catalog.Rename(raw, ex)})
		}
		sort.Slice(cat.Prompts, func(i, j int) bool { return cat.Prompts[i].Exposed < cat.Prompts[j].Exposed })
	}
	if c.ServerCaps.Resources != nil {
		items, err := c.ListAll(ctx, "resources/list", "resources")
		if err != nil {
			return nil, fmt.Errorf("resources/list: %w", err)
		}
		for _, raw := range items {
			var head struct {
				URI string `json:"uri"`
			}
			if json.Unmarshal(raw, &head) == nil && head.URI != "" {
				cat.Resources = append(cat.Resources, catalog.ExposeResource(server, head.URI, raw, n))
			}
		}
		// Templates are optional; an upstream without them answers method not found.
		if items, err := c.ListAll(ctx, "resources/templates/list", "resourceTemplates"); err == nil {
			for _, raw := range items {
				var head struct {
					URI string `json:"uriTemplate"`
				}
				if json.Unmarshal(raw, &head) == nil && head.URI != "" {
					cat.Templates = append(cat.Templates, &catalog.Resource{Server: server, URI: head.URI, Def: catalog.Compact(raw)})
				}
			}
		}
		if _, ok := c.ServerCaps.Extensions[catalog.SkillsExtension]; ok {
			if err := fetchSkills(ctx, server, c, cat); err != nil {
				return nil, err
			}
		}
	}
	return cat, nil
}

// readCatalog lists everything the server's upstream offers on c and shows it to the
// integrity guard.
func (s *Server) readCatalog(ctx context.Context, c *upstream.Conn) (*Catalog, error) {
	cat, err := FetchCatalog(ctx, s.Name, c, s.host.Config().Naming)
	if err != nil {
		return nil, err
	}
	s.host.Observe(s.Name, cat)
	return cat, nil
}
