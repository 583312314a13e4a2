package plugins

import (
	"context"
	"maps"
	"slices"

	"github.com/mcpgw/mcpgw/config"
)

// CheckPlugins looks at every configured plugin, in name order, for what starting it would
// run into, without starting it: `mcpgw validate` must not create a seeded database, open a
// connection, or run a plugin's program. Each kind checks its own plugins (PluginKind.Check);
// a plugin whose kind is not in kinds is an error, so a program that was not built with it
// says so before it starts. config.Validate has checked the definitions' shape already.
func CheckPlugins(ctx context.Context, cfg *config.Config, kinds Kinds) config.Problems {
	var ps config.Problems
	for _, name := range slices.Sorted(maps.Keys(cfg.Plugins)) {
		d := cfg.Plugins[name]
		if d == nil {
			continue
		}
		where, kind := "plugins."+name, kindOf(d)
		switch {
		case d.Type == config.PluginTypeGo && !d.OutOfProcess():
			ps = append(ps, checkGoPlugin(ctx, where, d)...)
		case builtIn(kind):
		case kinds[kind] != nil:
			ps = append(ps, kinds[kind].Check(ctx, where, d)...)
		case kinds.lacks(d):
			ps = append(ps, config.Problem{Where: where, Text: notBuiltIn(kind, kinds).Error()})
		}
	}
	return ps
}

func checkGoPlugin(_ context.Context, where string, _ *config.PluginDef) config.Problems {
	return config.Problems{{Warning: true, Where: where, Text: "type go: its provider is given in code by a program that embeds mcpgw; `mcpgw serve` shows it down"}}
}
