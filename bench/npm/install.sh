#!/usr/bin/env bash
# Installs the npm gateways that mcpbench runs as baselines (bench/npm/package.json, pinned
# by package-lock.json) into DIR/node_modules with `npm ci`; DIR defaults to .cache/bench-npm.
# Skipped when DIR's stamp matches the two files. make bench runs this and goes on without
# the npm baselines when it fails; make bench-smoke never needs it.
#
# Every run records its outcome in DIR/.install-status, which mcpbench reads to say why a
# baseline is missing (bench/cmd/mcpbench/npm.go, parseInstallStatus):
#   exit: <this script's exit status>
#   time: <UTC, RFC 3339>
#   reason: <one line>
#   output:
#   <the last lines of what npm and this script wrote to stderr>
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
DEST="${1:-$ROOT/.cache/bench-npm}"
STATUS="$DEST/.install-status"
TAIL_LINES=20

errlog="$(mktemp "${TMPDIR:-/tmp}/bench-npm.XXXXXX")"
reason=""
log() { printf 'bench-npm: %s\n' "$*"; }
# fail records why and exits; the EXIT trap writes the status.
fail() {
	reason="$1"
	printf 'bench-npm: %s\n' "$1" | tee -a "$errlog" >&2
	exit "${2:-1}"
}
# Any other failing command (set -e) is named in the status.
trap 'reason="line $LINENO: \`$BASH_COMMAND\` exited with status $?"' ERR
finish() {
	local rc=$?
	if [ -z "$reason" ]; then
		if [ "$rc" -eq 0 ]; then reason="installed"; else reason="exited with status $rc"; fi
	fi
	if mkdir -p "$DEST" 2>/dev/null; then
		{
			printf 'exit: %d\ntime: %s\nreason: %s\noutput:\n' "$rc" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$reason"
			tail -n "$TAIL_LINES" "$errlog"
		} >"$STATUS.tmp" 2>/dev/null && mv -f "$STATUS.tmp" "$STATUS" ||
			printf 'bench-npm: cannot write %s\n' "$STATUS" >&2
	else
		printf 'bench-npm: cannot create %s to record the outcome\n' "$DEST" >&2
	fi
	rm -f "$errlog"
	exit "$rc"
}
trap finish EXIT

want="$(cat "$HERE/package.json" "$HERE/package-lock.json" | sha256sum | cut -d' ' -f1)"
stamp="$DEST/.installed.sha256"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f "$DEST/node_modules/supergateway/package.json" ]; then
	reason="up to date"
	log "up to date in $DEST"
	exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
	fail "npm is not on PATH: cannot install the npm baselines"
fi
mkdir -p "$DEST"
rm -f "$stamp"
cp "$HERE/package.json" "$HERE/package-lock.json" "$DEST/"
t0=$SECONDS
# --ignore-scripts: nothing here needs an install script, and none may fetch anything
# outside npm. npm's stderr is kept for the status and shown when it fails.
rc=0
(cd "$DEST" && timeout 600 npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) 2>>"$errlog" || rc=$?
if [ "$rc" -ne 0 ]; then
	tail -n "$TAIL_LINES" "$errlog" >&2
	if [ "$rc" -eq 124 ]; then
		fail "npm ci timed out after 600 s" "$rc"
	fi
	fail "npm ci exited with status $rc" "$rc"
fi
echo "$want" >"$stamp"
reason="installed in $((SECONDS - t0))s"
log "installed in $DEST in $((SECONDS - t0))s"
