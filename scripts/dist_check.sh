#!/usr/bin/env bash
# Checks what scripts/dist.sh wrote: one archive per target, each holding both binaries,
# README.md and examples/, the binaries executable, and SHA256SUMS naming exactly those
# archives with checksums that verify (sha256sum -c).
#
# Environment: VERSION (required), GO, DIST (default dist), DIST_TARGETS (as for dist.sh).
set -euo pipefail

GO=${GO:-go}
VERSION=${VERSION:?VERSION is required}
DIST=${DIST:-dist}
DIST_TARGETS=${DIST_TARGETS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64}

fail() { echo "dist-check: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
env -u GOOS -u GOARCH "$GO" build -o "$tmp/archive" scripts/archive.go

[ -f "$DIST/SHA256SUMS" ] || fail "no $DIST/SHA256SUMS"
want=()
for t in $DIST_TARGETS; do
	os=${t%/*} arch=${t#*/}
	ext='' format=tar.gz
	if [ "$os" = windows ]; then ext=.exe format=zip; fi
	name=mcpgw-$VERSION-$os-$arch
	a=$name.$format
	want+=("$a")
	[ -f "$DIST/$a" ] || fail "missing $DIST/$a"
	"$tmp/archive" list "$DIST/$a" > "$tmp/list"
	for f in "mcpgw$ext 755" "mcpgw-bridge$ext 755" "mcpgw-plugin-sql$ext 755" "README.md 644" "examples/mcpgw.yaml 644"; do
		grep -qxF "$name/$f" "$tmp/list" || fail "$a lacks $name/$f; it holds: $(tr '\n' ' ' < "$tmp/list")"
	done
done
got=$(awk '{print $2}' "$DIST/SHA256SUMS" | sort)
exp=$(printf '%s\n' "${want[@]}" | sort)
[ "$got" = "$exp" ] || fail "SHA256SUMS names: $got; want: $exp"
(cd "$DIST" && sha256sum --quiet -c SHA256SUMS) || fail "checksums do not verify"

# The archiver itself: the same tree with other file times packs to the same bytes.
mkdir -p "$tmp/t/x/sub"
echo a > "$tmp/t/x/a"
echo b > "$tmp/t/x/sub/b"
chmod 755 "$tmp/t/x/a"
for f in tar.gz zip; do
	touch -d @1000000000 "$tmp/t/x/a" "$tmp/t/x/sub/b" "$tmp/t/x/sub"
	"$tmp/archive" pack -mtime 1 -o "$tmp/1.$f" -C "$tmp/t" x
	touch -d @2000000000 "$tmp/t/x/a" "$tmp/t/x/sub/b" "$tmp/t/x/sub"
	"$tmp/archive" pack -mtime 1 -o "$tmp/2.$f" -C "$tmp/t" x
	cmp -s "$tmp/1.$f" "$tmp/2.$f" || fail "scripts/archive.go: $f archives differ when only file times do"
	"$tmp/archive" list "$tmp/1.$f" > "$tmp/list"
	printf 'x/ 755\nx/a 755\nx/sub/ 755\nx/sub/b 644\n' | cmp -s - "$tmp/list" ||
		fail "scripts/archive.go: $f lists $(tr '\n' ' ' < "$tmp/list")"
done
echo "dist-check: ${#want[@]} archives and SHA256SUMS verify; archives are reproducible"
