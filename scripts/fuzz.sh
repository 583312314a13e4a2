#!/usr/bin/env bash
# Runs every fuzz target of the module for $FUZZTIME (default 30s) each, one at a time.
# Targets are found in the packages' _test.go files (a `func FuzzX(f *testing.F)` at the
# start of a line), not with `go test -list`, which would compile every package's tests
# once more just to list them; new corpus entries that fail land in the package's
# testdata/fuzz/ as usual.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
GO="${GO:-go}"
FUZZTIME="${FUZZTIME:-30s}"

# count prints how many inputs a corpus directory holds (0 when it does not exist yet).
count() { if [ -d "$1" ]; then find "$1" -type f | wc -l; else echo 0; fi; }

found=0
failed=()
while read -r pkg pkgdir; do
	for fn in $(cat "$pkgdir"/*_test.go 2>/dev/null | sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*\*testing\.F).*/\1/p'); do
		found=$((found + 1))
		echo "fuzz: $pkg $fn for $FUZZTIME"
		dir="$pkgdir/testdata/fuzz/$fn"
		before=$(count "$dir")
		if ! "$GO" test -run '^$' -fuzz "^${fn}\$" -fuzztime "$FUZZTIME" "$pkg"; then
			# A failing input is always written to testdata/fuzz: with none, the fuzzer
			# itself gave up (a worker starved on a loaded machine), so try once more.
			after=$(count "$dir")
			if [ "$after" = "$before" ]; then
				echo "fuzz: $fn failed without a failing input; running it again"
				"$GO" test -run '^$' -fuzz "^${fn}\$" -fuzztime "$FUZZTIME" "$pkg" || failed+=("$pkg.$fn")
			else
				failed+=("$pkg.$fn")
			fi
		fi
	done
done < <("$GO" list -f '{{.ImportPath}} {{.Dir}}' ./... | grep -v '/test/e2e')
echo "fuzz: $found target(s) run, ${#failed[@]} failed"
if [ "${#failed[@]}" -gt 0 ]; then
	printf 'fuzz: FAILED %s\n' "${failed[@]}"
	exit 1
fi
