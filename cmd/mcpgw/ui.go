package main

import (
	"flag"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/mcpgw/mcpgw/internal/statedir"
)

// uiAddress prints the web UI's address with the gateway's local token in it, as Jupyter
// prints a tokenized URL: opening it signs the browser in (and the UI then drops the token
// from the address). Only the user who can read the state directory's token gets one.
func uiAddress(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("ui", flag.ContinueOnError)
	cfgFlag := fs.String("config", "", "config file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, _, err := loadConfig(configPath(*cfgFlag))
	if err != nil {
		return err
	}
	tok, err := statedir.ReadToken(cfg.StateDir)
	if err != nil {
		return fmt.Errorf("%w (the gateway makes it at its first start; run mcpgw ui as the user that runs the gateway)", err)
	}
	base := strings.TrimSuffix(gatewayURL(cfg), "/mcp")
	_, err = fmt.Fprintf(out, "%s/ui/login?token=%s\n", base, url.QueryEscape(tok))
	return err
}
