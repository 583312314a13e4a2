package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/embedded"
	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/registry/pluginkind"
	"github.com/mcpgw/mcpgw/internal/store"
)

// watchConfig reloads the config on SIGHUP, when the file changes (polled every 2 s), and
// when another replica announces a reload.
// An invalid new config is logged and the running one kept.
func watchConfig(path string, cfg *config.Config, gw *embedded.Gateway, log *slog.Logger, hup <-chan os.Signal, peer <-chan struct{}, stop <-chan struct{}) {
	if path == "" {
		return
	}
	stamp := func() string {
		st, err := os.Stat(path)
		if err != nil {
			return ""
		}
		return fmt.Sprint(st.ModTime().UnixNano(), st.Size())
	}
	last := stamp()
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		fromPeer := false
		select {
		case <-stop:
			return
		case <-peer:
			fromPeer = true
			log.Info("another replica reloaded its config: reloading", "path", path)
		case sig := <-hup:
			log.Info("reloading config", "path", path, "trigger", sig.String())
		case <-tick.C:
			now := stamp()
			if now == last || now == "" {
				continue
			}
			last = now
			log.Info("config file changed: reloading", "path", path)
		}
		last = stamp()
		next, ps, err := config.Load(path)
		if err != nil {
			log.Error("config reload refused; keeping the running config", "err", err)
			continue
		}
		for _, p := range ps {
			log.Warn("config", "problem", p.String())
		}
		if changed := restartChanges(cfg, next); changed != "" {
			log.Warn("listener, store and state_dir changes apply after a restart", "changed", changed)
		}
		// The file's config merged with the servers, agents and executors created through
		// the admin API (kept in the store): a file reload never drops those.
		if err := gw.Reload(next); err != nil {
			log.Error("config reload failed; keeping the running config", "err", err)
			continue
		}
		cfg = next
		if !fromPeer {
			gw.PublishReload()
		}
		log.Info("config reloaded", "servers", len(next.Servers), "agents", len(next.Agents), "executors", len(next.Executors), "tasks", len(next.Tasks))
	}
}

// restartChanges names what a reload changed that only a restart applies.
func restartChanges(a, b *config.Config) string {
	switch {
	case a.StateDir != b.StateDir:
		return "state_dir"
	case a.Listen != b.Listen:
		return "listen"
	case a.Store != b.Store:
		return "store"
	}
	return ""
}

// explain prints every tool for an agent (task, executor), admitted or hidden, with the
// rule that decided. It connects to the upstreams to learn their tools.
func explain(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("explain", flag.ContinueOnError)
	cfgFlag := fs.String("config", "", "config file")
	agent := fs.String("agent", "", "agent id")
	task := fs.String("task", "", "task id")
	executor := fs.String("executor", "", "executor id")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *agent == "" {
		return fmt.Errorf("explain needs --agent")
	}
	path := configPath(*cfgFlag)
	cfg, _, err := loadConfig(path)
	if err != nil {
		return err
	}
	if path == "" {
		// Without --config (or MCPGW_CONFIG) this explains the built-in default, which has
		// no servers: say so, rather than "0 tools" as if that were the running gateway's.
		fmt.Fprintf(notes, "mcpgw explain: no --config (or MCPGW_CONFIG): explaining the built-in default config, which has no servers%s\n", runningHint(cfg))
	} else {
		fmt.Fprintf(notes, "mcpgw explain: config %s\n", display(path))
	}
	v, err := explainView(cfg, *agent, *task, *executor)
	if err != nil {
		return err
	}
	if *asJSON {
		b, _ := json.MarshalIndent(v, "", "  ")
		_, err := fmt.Fprintln(out, string(b))
		return err
	}
	fmt.Fprintf(out, "agent %s", v.Agent)
	if v.Task != "" {
		fmt.Fprintf(out, ", task %s", v.Task)
	}
	if v.Executor != "" {
		fmt.Fprintf(out, ", executor %s", v.Executor)
	}
	fmt.Fprintf(out, ": servers %v, %d tools admitted, %d hidden\n", v.Servers, v.Admitted, v.Hidden)
	if len(v.Modes) > 0 {
		var ms []string
		for _, name := range v.Servers {
			if m := v.Modes[name]; m != "" {
				ms = append(ms, name+" "+m)
			}
		}
		fmt.Fprintf(out, "instances: %s\n", strings.Join(ms, ", "))
	}
	for _, w := range v.Warnings {
		fmt.Fprintln(out, "warning:", w)
	}
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tSERVER\tDECISION\tRULE")
	for _, d := range v.Tools {
		dec := "hidden"
		if d.Admitted {
			dec = "admitted"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", d.Tool, d.Server, dec, d.Rule)
	}
	return tw.Flush()
}

// explainView decides every tool for an agent (task, executor) under cfg, as the gateway
// would at a session's start: it starts cfg's upstreams in this process to learn their
// tools, and stops them before it returns. Tasks are the config file's.
func explainView(cfg *config.Config, agent, task, executor string) (*gateway.AgentView, error) {
	cfg.Auth.Audit.Disabled = true
	if cfg.Auth.Mode == "api_key" {
		cfg.Auth.Mode = "none" // explain needs no key file
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	reg := registry.New(cfg, log)
	reg.NoPools = true // explain lists tools: no warm instances
	reg.PluginKinds = pluginkind.All()
	gw, err := gateway.New(cfg, reg, store.NewMemory(), log)
	if err != nil {
		return nil, err
	}
	reg.Start(gateway.StartWindow(cfg))
	defer reg.Close()
	v, fail := gw.Explain(agent, task, executor)
	if fail != nil {
		return nil, fmt.Errorf("%s", fail.Message)
	}
	return v, nil
}

// runningHint names a gateway that answers at cfg's address, whose own config explain
// did not read.
func runningHint(cfg *config.Config) string {
	base := strings.TrimSuffix(gatewayURL(cfg), "/mcp")
	c := &http.Client{Timeout: 500 * time.Millisecond}
	resp, err := c.Get(base + "/healthz")
	if err != nil {
		return ""
	}
	resp.Body.Close()
	return "; a gateway is running at " + base + ": pass its --config, or ask it: GET " + base + "/api/agents/AGENT/view"
}

// token creates API keys and mints JWTs.
func token(args []string, out io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("token needs a subcommand: create-key or issue")
	}
	if args[0] == "create-runner-key" {
		return createRunnerKey(args[1:], out)
	}
	fs := flag.NewFlagSet("token "+args[0], flag.ContinueOnError)
	cfgFlag := fs.String("config", "", "config file")
	agent := fs.String("agent", "", "agent id")
	ttl := fs.Duration("ttl", time.Hour, "token lifetime (issue)")
	admin := fs.Bool("admin", false, "create-key: an admin key (opens the admin API and the web UI, not /mcp); issue: add the mcpgw:admin scope")
	readOnly := fs.Bool("read-only", false, "narrow the credential to read-only tools")
	connScope := fs.String("connection-scope", "", "narrow the credential to these plugin connections (comma-separated ids; \"-\" for none)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	sc := auth.KeyScope{ReadOnly: *readOnly}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "connection-scope" {
			sc.ConnectionScope = splitScope(*connScope)
		}
	})
	if *admin && (sc.ReadOnly || sc.ConnectionScope != nil) {
		return fmt.Errorf("--read-only and --connection-scope narrow an agent's credential, not an admin's")
	}
	for _, id := range sc.ConnectionScope {
		if !config.ValidConnectionID(id) {
			return fmt.Errorf("--connection-scope: %q is not a connection id (1 to 64 of the characters A-Z a-z 0-9 _ . -)", id)
		}
	}
	if *agent == "" && !(*admin && args[0] == "create-key") {
		return fmt.Errorf("token %s needs --agent", args[0])
	}
	cfg, _, err := loadConfig(configPath(*cfgFlag))
	if err != nil {
		return err
	}
	if len(cfg.Agents) > 0 && *agent != "" {
		if _, ok := cfg.Agents[*agent]; !ok {
			return fmt.Errorf("unknown agent %q (not in the config's agents)", *agent)
		}
	}
	switch args[0] {
	case "create-key":
		return createKey(cfg, *agent, *admin, sc, out)
	case "issue":
		return issueToken(cfg, *agent, *ttl, *admin, sc, out)
	}
	return fmt.Errorf("unknown token subcommand %q (create-key, issue)", args[0])
}

// createKey is token create-key: an admin key, or an agent's key narrowed to sc, added to
// the key file and printed once.
func createKey(cfg *config.Config, agent string, admin bool, sc auth.KeyScope, out io.Writer) error {
	kf, err := auth.OpenKeyFile(gateway.KeyFilePath(cfg))
	if err != nil {
		return err
	}
	if admin {
		key, rec, err := kf.AddAdmin()
		if err != nil {
			return err
		}
		fmt.Fprintln(os.Stderr, "admin key", rec.ID, "for the admin API and web UI (shown once; stored hashed in", gateway.KeyFilePath(cfg)+"):")
		_, err = fmt.Fprintln(out, key)
		return err
	}
	key, rec, err := kf.AddScoped(agent, sc)
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "API key", rec.ID, "for agent", agent, "(shown once; stored hashed in", gateway.KeyFilePath(cfg)+"):")
	_, err = fmt.Fprintln(out, key)
	return err
}

// issueToken is token issue: a JWT for agent, with the admin scope or narrowed to sc.
func issueToken(cfg *config.Config, agent string, ttl time.Duration, admin bool, sc auth.KeyScope, out io.Writer) error {
	var scopes []string
	if admin {
		scopes = []string{auth.AdminScope}
	}
	var narrow map[string]any
	if sc.ReadOnly || sc.ConnectionScope != nil {
		narrow = map[string]any{}
		if sc.ReadOnly {
			narrow["read_only"] = true
		}
		if sc.ConnectionScope != nil {
			narrow["connection_scope"] = sc.ConnectionScope
		}
	}
	tok, err := auth.IssueJWTWithScopes(cfg.Auth.JWT, agent, ttl, narrow, scopes)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(out, tok)
	return err
}

// splitScope reads --connection-scope: comma-separated ids; "-" or nothing is the empty
// scope (no plugin connection at all).
func splitScope(v string) []string {
	out := []string{}
	for _, id := range strings.Split(v, ",") {
		if id = strings.TrimSpace(id); id != "" && id != "-" {
			out = append(out, id)
		}
	}
	return out
}
