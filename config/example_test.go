package config_test

import (
	"errors"
	"fmt"

	"github.com/mcpgw/mcpgw/config"
)

// Parse reads an mcpgw.yaml from bytes: defaults are filled in, aliases normalised
// ("http" is streamable HTTP), and the config validated.
func ExampleParse() {
	cfg, warnings, err := config.Parse([]byte(`
listen: 127.0.0.1:9000
servers:
  docs: {type: http, url: "https://docs.example.com/mcp"}
`))
	if err != nil {
		panic(err)
	}
	d := cfg.Servers["docs"]
	fmt.Println(cfg.Listen, d.Transport(), d.ResolvedMode(), len(warnings))
	// Output: 127.0.0.1:9000 streamable_http shared 0
}

// A config with errors is refused with every problem listed, each naming where it is.
func ExampleProblems() {
	_, _, err := config.Parse([]byte(`
servers:
  docs: {type: http}
  tools: {type: stdio}
`))
	var ps config.Problems
	if errors.As(err, &ps) {
		for _, p := range ps {
			fmt.Println(p.String())
		}
	}
	// Output:
	// error: servers.docs: type streamable_http needs a url
	// error: servers.tools: type stdio needs a command
}

// Validate checks a config built in code; ApplyDefaults first fills in what a file
// would get.
func ExampleConfig_Validate() {
	cfg := &config.Config{Listen: "127.0.0.1:9000", Servers: map[string]*config.ServerDef{
		"clock": {Type: config.TransportInProcess},
	}}
	cfg.ApplyDefaults()
	fmt.Println(cfg.Validate().HasErrors(), cfg.Servers["clock"].Transport())
	// Output: false inprocess
}
