#!/usr/bin/env bash
# Release archives for every supported OS/arch (docs/platforms.md): DIST/mcpgw-VERSION-OS-ARCH
# .tar.gz (Linux, macOS) or .zip (Windows), each holding mcpgw, mcpgw-bridge, mcpgw-plugin-sql, README.md,
# LICENSE when there is one, and examples/; plus DIST/SHA256SUMS. Reproducible: static
# (CGO_ENABLED=0), -trimpath, and archives whose every entry carries SOURCE_DATE_EPOCH
# (default: the last commit's time).
#
# Environment: VERSION (required), GO, DIST (default dist), DIST_TARGETS.
set -euo pipefail

GO=${GO:-go}
VERSION=${VERSION:?VERSION is required}
DIST=${DIST:-dist}
DIST_TARGETS=${DIST_TARGETS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64}
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
# The archiver runs here, so it is built for this machine whatever GOOS says.
env -u GOOS -u GOARCH "$GO" build -o "$stage/archive" scripts/archive.go

rm -rf "$DIST"
mkdir -p "$DIST"
archives=()
for t in $DIST_TARGETS; do
	os=${t%/*} arch=${t#*/}
	ext='' format=tar.gz
	if [ "$os" = windows ]; then ext=.exe format=zip; fi
	name=mcpgw-$VERSION-$os-$arch
	dir=$stage/$name
	mkdir -p "$dir"
	for cmd in mcpgw mcpgw-bridge mcpgw-plugin-sql; do
		GOOS=$os GOARCH=$arch CGO_ENABLED=0 "$GO" build -trimpath \
			-ldflags "-s -w -X main.version=$VERSION" -o "$dir/$cmd$ext" "./cmd/$cmd"
	done
	cp README.md "$dir/"
	if [ -f LICENSE ]; then cp LICENSE "$dir/"; fi
	cp -R examples "$dir/"
	"$stage/archive" pack -mtime "$SOURCE_DATE_EPOCH" -o "$DIST/$name.$format" -C "$stage" "$name"
	archives+=("$DIST/$name.$format")
	echo "dist: $DIST/$name.$format"
done
"$stage/archive" sums -o "$DIST/SHA256SUMS" "${archives[@]}"
echo "dist: $DIST/SHA256SUMS"
