// Command confclient is the client that the MCP conformance suite's client scenarios run
// (`conformance client --command confclient --scenario NAME`): it starts mcpgw with the
// scenario server as its one streamable HTTP upstream, connects to the gateway with the
// go-sdk client and makes the calls the scenario expects. The suite's checks then judge
// mcpgw as the client of that upstream (test/e2e/conformance_client_test.go).
//
// The suite appends the scenario server's URL as the last argument and names the
// scenario in MCP_CONFORMANCE_SCENARIO, the revision in MCP_CONFORMANCE_PROTOCOL_VERSION
// and any fixed inputs in MCP_CONFORMANCE_CONTEXT (a JSON object). The gateway binary is
// $MCPGW_BIN; its config, state and log go to $MCPGW_CONFCLIENT_DIR (a temporary
// directory, removed at exit, when unset). The gateway listens on 127.0.0.1 only and is
// stopped by its pid (SIGTERM, SIGKILL after 5 s) before the driver exits, also when the
// driver fails or is told to stop. The driver exits 1 when a call through the gateway
// fails or answers something other than the scenario server sent, 2 on bad usage.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

const (
	// runLimit bounds the whole run; the suite's own timeout (the test passes --timeout)
	// is longer, so the driver stops its gateway itself rather than being killed.
	runLimit = 45 * time.Second
	// readyLimit bounds the wait for the gateway's health and for the upstream to be up.
	readyLimit = 20 * time.Second
	// stopGrace is how long the gateway gets after SIGTERM before SIGKILL.
	stopGrace = 5 * time.Second
	// upstreamName is the scenario server's name in the gateway's config.
	upstreamName = "scenario"
)

// upstreamSettings are how the gateway's config names the scenario server.
type upstreamSettings struct {
	// mode is servers.scenario.mode ("": the default, shared for HTTP).
	mode string
	// version is servers.scenario.protocol_version ("": the gateway's default, which
	// falls back to the stateless revision when the server refuses initialize).
	version string
	// clientVersion is the revision the driver's own session asks the gateway for ("":
	// the go-sdk client's latest, 2026-07-28).
	clientVersion string
	// auth is the servers.scenario.auth section ("": none).
	auth string
	// bearer is the token the driver presents to the gateway as its caller's own ("":
	// none): what a token exchange upstream's grant is exchanged from.
	bearer string
}

func main() {
	var up upstreamSettings
	flag.StringVar(&up.mode, "mode", "", "the upstream's instance mode (shared, per_session; default: the gateway's)")
	flag.StringVar(&up.clientVersion, "client-version", "", "the revision the driver's session with the gateway asks for (default: the go-sdk client's latest)")
	negotiate := flag.Bool("negotiate", false, "leave protocol_version unset: the gateway picks the revision, not MCP_CONFORMANCE_PROTOCOL_VERSION")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: confclient [-mode M] [-client-version V] [-negotiate] SCENARIO_SERVER_URL (run by `conformance client --command`)")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if !*negotiate {
		up.version = os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION")
	}
	os.Exit(run(flag.Arg(0), up))
}

func run(serverURL string, up upstreamSettings) int {
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	act, ok := scenarios[scenario]
	authScenario := strings.HasPrefix(scenario, "auth/")
	if authScenario {
		var err error
		if up.auth, up.bearer, err = authSettings(scenario); err != nil {
			logf("%v", err)
			return 2
		}
		ok = true
	}
	if !ok {
		logf("unknown scenario %q (MCP_CONFORMANCE_SCENARIO); known: %s", scenario, strings.Join(scenarioNames(), ", "))
		return 2
	}
	bin := os.Getenv("MCPGW_BIN")
	if bin == "" {
		logf("MCPGW_BIN is not set: it names the mcpgw binary under test")
		return 2
	}
	var scenarioCtx scenarioContext
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &scenarioCtx); err != nil {
			logf("MCP_CONFORMANCE_CONTEXT: %v", err)
			return 2
		}
	}
	dir := os.Getenv("MCPGW_CONFCLIENT_DIR")
	if dir == "" {
		d, err := os.MkdirTemp("", "confclient-")
		if err != nil {
			logf("%v", err)
			return 1
		}
		defer os.RemoveAll(d)
		dir = d
	}

	ctx, cancel := context.WithTimeout(context.Background(), runLimit)
	defer cancel()
	ctx, stopSignals := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stopSignals()

	g, err := startGateway(ctx, bin, dir, serverURL, up)
	if err != nil {
		logf("%v", err)
		return 1
	}
	defer g.stop()
	logf("scenario %s (upstream revision %q, mode %q; client revision %q): mcpgw pid %d on %s, upstream %s, log %s",
		scenario, up.version, up.mode, up.clientVersion, g.pid(), g.base, serverURL, g.logPath)
	wait := g.waitUpstream
	if authScenario && up.bearer == "" {
		wait = g.waitGranted
	}
	if up.bearer != "" {
		// The upstream's catalogue waits for a caller's token to exchange: the driver's
		// first request brings it.
		if _, err := g.rawToolNames(ctx); err != nil {
			logf("%v", err)
			return 1
		}
	}
	if err := wait(ctx); err != nil {
		logf("%v", err)
		return 1
	}
	s, err := connect(ctx, g, up.clientVersion)
	if err != nil {
		logf("%v", err)
		return 1
	}
	defer s.cs.Close()
	logf("connected to mcpgw on %s; %d tools", s.cs.InitializeResult().ProtocolVersion, len(s.tools))
	if authScenario {
		err = authCalls(ctx, g, s)
	} else {
		err = act(ctx, s, scenarioCtx)
	}
	if err != nil {
		logf("scenario %s: %v", scenario, err)
		return 1
	}
	logf("scenario %s: every call through mcpgw answered as expected", scenario)
	return 0
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "confclient: "+format+"\n", args...)
}
