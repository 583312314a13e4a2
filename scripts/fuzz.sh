#!/usr/bin/env bash
# Runs every fuzz target of the module for $FUZZTIME (default 30s) each, one at a time.
# Targets are found with `go test -list 'Fuzz.*'`; new corpus entries that fail land in
# the package's testdata/fuzz/ as usual.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
GO="${GO:-go}"
FUZZTIME="${FUZZTIME:-30s}"

found=0
failed=()
for pkg in $("$GO" list ./... | grep -v '/test/e2e'); do
	for fn in $("$GO" test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
		found=$((found + 1))
		echo "fuzz: $pkg $fn for $FUZZTIME"
		if ! "$GO" test -run '^$' -fuzz "^${fn}\$" -fuzztime "$FUZZTIME" "$pkg"; then
			failed+=("$pkg.$fn")
		fi
	done
done
echo "fuzz: $found target(s) run, ${#failed[@]} failed"
if [ "${#failed[@]}" -gt 0 ]; then
	printf 'fuzz: FAILED %s\n' "${failed[@]}"
	exit 1
fi
