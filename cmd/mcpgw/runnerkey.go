package main

import (
	"flag"
	"fmt"
	"io"
	"net"

	"github.com/mcpgw/mcpgw/internal/auth"
)

// createRunnerKey is `mcpgw token create-runner-key --executor E`: a new runner key, the
// digest the executor's runner.keys takes, and the line that starts the runner in the
// executor's environment (docs/runners.md). The key is printed once; the gateway keeps
// only its digest.
func createRunnerKey(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("token create-runner-key", flag.ContinueOnError)
	cfgFlag := fs.String("config", "", "config file")
	executor := fs.String("executor", "", "the executor the key is bound to")
	gw := fs.String("gateway", "", "the gateway's URL as the executor reaches it (default: the listen address)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *executor == "" {
		return fmt.Errorf("token create-runner-key needs --executor")
	}
	cfg, _, err := loadConfig(configPath(*cfgFlag))
	if err != nil {
		return err
	}
	ex := cfg.Executors[*executor]
	if ex == nil {
		return fmt.Errorf("unknown executor %q (not in the config's executors)", *executor)
	}
	if *gw == "" {
		*gw = "http://" + cfg.Listen
		if host, port, err := net.SplitHostPort(cfg.Listen); err == nil && ex.Type == "local_docker" {
			if ip := net.ParseIP(host); host == "" || host == "localhost" || (ip != nil && (ip.IsLoopback() || ip.IsUnspecified())) {
				// A container reaches its host by this name (Docker Desktop, or
				// --add-host=host.docker.internal:host-gateway on Linux).
				*gw = "http://host.docker.internal:" + port
			}
		}
	}
	key, sum := auth.NewAPIKey()
	fmt.Fprintf(out, "# runner key for executor %q (shown once; the gateway keeps only its SHA-256)\n", *executor)
	fmt.Fprintf(out, "# 1. add the digest to the config and reload:\n")
	fmt.Fprintf(out, "executors:\n  %s:\n    runner:\n      keys: [%q]\n", *executor, sum)
	fmt.Fprintf(out, "# 2. start the runner where the executor's agent runs:\n")
	fmt.Fprintf(out, "MCPGW_RUNNER_TOKEN=%s mcpgw-bridge runner --gateway %s --executor %s\n", key, *gw, *executor)
	return nil
}
