#!/usr/bin/env bash
# Installs the npm gateways that mcpbench runs as baselines (bench/npm/package.json, pinned
# by package-lock.json) into DIR/node_modules with `npm ci`; DIR defaults to .cache/bench-npm.
# Skipped when DIR's stamp matches the two files. make bench runs this and goes on without
# the npm baselines (printing why) when it fails; make bench-smoke never needs it.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
DEST="${1:-$ROOT/.cache/bench-npm}"
log() { printf 'bench-npm: %s\n' "$*"; }

want="$(cat "$HERE/package.json" "$HERE/package-lock.json" | sha256sum | cut -d' ' -f1)"
stamp="$DEST/.installed.sha256"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f "$DEST/node_modules/supergateway/package.json" ]; then
	log "up to date in $DEST"
	exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
	log "npm is missing: cannot install the npm baselines"
	exit 1
fi
mkdir -p "$DEST"
rm -f "$stamp"
cp "$HERE/package.json" "$HERE/package-lock.json" "$DEST/"
t0=$SECONDS
# --ignore-scripts: nothing here needs an install script, and none may fetch anything
# outside npm.
(cd "$DEST" && timeout 600 npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
echo "$want" >"$stamp"
log "installed in $DEST in $((SECONDS - t0))s"
