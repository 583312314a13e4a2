// Command mcpgw-plugin-sql is the sql plugin (package internal/sqlplugin) as an executable
// that mcpgw runs out of process:
//
//	plugins:
//	  shop:
//	    command: mcpgw-plugin-sql
//	    config:
//	      read_only: false
//	      connections:
//	        prod-db: {driver: sqlite, dsn: /var/lib/shop/shop.db}
//
// Its config is sqlplugin.Config (the keys of a `type: sql` plugin). It is meant to be
// started by mcpgw only; started by hand it says so and exits.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/mcpgw/mcpgw/internal/sqlplugin"
	"github.com/mcpgw/mcpgw/plugin"
	"github.com/mcpgw/mcpgw/plugin/serve"
)

var version = "dev"

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "version" || os.Args[1] == "--version") {
		fmt.Println("mcpgw-plugin-sql", version)
		return
	}
	serve.MainFunc(open)
}

func open(ctx context.Context, raw json.RawMessage) (plugin.Plugin, error) {
	if len(raw) == 0 {
		return nil, errors.New("mcpgw-plugin-sql needs a config: plugins.<name>.config with connections")
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	var cfg sqlplugin.Config
	if err := dec.Decode(&cfg); err != nil {
		return nil, fmt.Errorf("config: %v", err)
	}
	if ps := cfg.Problems(); len(ps) > 0 {
		return nil, fmt.Errorf("config: %s", strings.Join(ps, "; "))
	}
	return sqlplugin.Open(ctx, cfg)
}
