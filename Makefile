# mcpgw — build, run and test. See docs/testing.md.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := build

GO        ?= go
CACHE     ?= $(CURDIR)/.cache
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X main.version=$(VERSION)
FUZZTIME  ?= 30s
# How long `make test` runs each fuzz target: enough to replay the corpus and try a few
# hundred thousand inputs; `make fuzz` runs them for FUZZTIME.
FUZZ_SMOKE ?= 2s
E2E_TIMEOUT ?= 20m
UNIT_TIMEOUT ?= 10m
# Extra arguments for the e2e go test, e.g. make test-e2e E2E_ARGS='-run TestHarness -v'
E2E_ARGS  ?=
# 1: a test whose peer (redis-server, tinyproxy, Node, bin/mcpgw...) is missing fails
# instead of skipping (internal/peers). make's test runs set it; REQUIRE_PEERS=0 to skip.
REQUIRE_PEERS ?= 1
# staticcheck, pinned: `go run` of a fixed version (checked against the Go checksum
# database) builds it once into the build cache. docs/decisions.md says why.
STATICCHECK_VERSION ?= v0.8.2
STATICCHECK := $(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
# gocyclo, pinned the same way: no hand-written function above cyclomatic CYCLO_MAX.
GOCYCLO_VERSION ?= v0.6.0
GOCYCLO := $(GO) run github.com/fzipp/gocyclo/cmd/gocyclo@$(GOCYCLO_VERSION)
CYCLO_MAX ?= 25
# make install puts mcpgw and mcpgw-bridge in $(PREFIX)/bin, a directory the user can write.
PREFIX    ?= $(HOME)/.local
BINDIR     = $(abspath $(PREFIX))/bin

E2E_ENV := MCPGW_REQUIRE_PEERS=$(REQUIRE_PEERS) MCPGW_PEERS=$(CACHE) MCPGW_BIN=$(CURDIR)/bin/mcpgw MCPGW_E2E_DIR=$(CURDIR)/test/e2e

# Every package except the end-to-end one (which needs the peers and bin/mcpgw).
UNIT_PKGS = $(shell $(GO) list ./... | grep -v '/test/e2e')
GO_FILES  = $(shell find . -name '*.go' -not -path './test/e2e/node_modules/*' -not -path './.cache/*' -not -path './.git/*')

.PHONY: check-rules build install run peers test vet cross dist dist-check test-unit test-e2e fuzz bench lint check-require-peers clean distclean everything-server

# The OS/arch pairs mcpgw is released for (docs/platforms.md); `cross` checks each one but
# the host's (with go vet), `dist` builds and archives them all.
PLATFORMS     ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
VET_TARGETS   ?= darwin/arm64 windows/amd64
# cross vets and dist builds with the same flags, so dist reuses the dependencies vet compiled.
CROSS_FLAGS   := -trimpath
DIST          ?= dist
DIST_ENV       = VERSION=$(VERSION) GO=$(GO) DIST=$(DIST) DIST_TARGETS='$(PLATFORMS)'

## build: static bin/mcpgw, bin/mcpgw-bridge and bin/mcpgw-plugin-sql (the sql plugin as an
## out-of-process executable)
build:
	@[ -x bin/mcpgw ] || echo "building mcpgw (the first build downloads modules and compiles for a few minutes; the packages are listed as they compile)"
	CGO_ENABLED=0 $(GO) build $(if $(wildcard bin/mcpgw),,-v) -trimpath -ldflags '$(LDFLAGS)' -o bin/mcpgw ./cmd/mcpgw
	if [ -d cmd/mcpgw-bridge ]; then \
		CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/mcpgw-bridge ./cmd/mcpgw-bridge; \
	fi
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/mcpgw-plugin-sql ./cmd/mcpgw-plugin-sql

## install: build, then copy mcpgw and mcpgw-bridge to $(PREFIX)/bin (default ~/.local/bin)
## and say whether that directory is on PATH. `make install PREFIX=/usr/local` as root.
install: build
	install -d '$(BINDIR)'
	install -m 0755 bin/mcpgw bin/mcpgw-bridge bin/mcpgw-plugin-sql '$(BINDIR)/'
	@echo "installed $(BINDIR)/mcpgw, $(BINDIR)/mcpgw-bridge and $(BINDIR)/mcpgw-plugin-sql ($$('$(BINDIR)/mcpgw' version))"
	@case ":$$PATH:" in \
	*":$(BINDIR):"*) echo "$(BINDIR) is on your PATH";; \
	*) echo "$(BINDIR) is not on your PATH; add it (e.g. in ~/.bashrc or ~/.profile):"; \
	   echo "    export PATH=\"$(BINDIR):\$$PATH\"";; \
	esac
	@echo "next: mcpgw client-config --agent NAME --client claude-code --via bridge (docs/clients/)"

## everything-server: the go-sdk conformance fixture examples/mcpgw.yaml runs over stdio
everything-server:
	@[ -x $(CACHE)/bin/everything-server ] || echo "building the go-sdk everything-server (examples/mcpgw.yaml's upstream)"
	CGO_ENABLED=0 $(GO) build -o $(CACHE)/bin/everything-server github.com/modelcontextprotocol/go-sdk/conformance/everything-server

## run: build and serve examples/mcpgw.yaml
run: build everything-server
	bin/mcpgw serve --config examples/mcpgw.yaml

## peers: install the real test peers into .cache and test/e2e/node_modules
peers:
	CACHE=$(CACHE) scripts/peers.sh

## test: peers, build, lint (gofmt, vet, staticcheck), unit tests with -race, then the
## end-to-end tests; a missing peer fails them (REQUIRE_PEERS)
test:
	$(MAKE) --no-print-directory peers
	$(MAKE) --no-print-directory build
	$(MAKE) --no-print-directory lint
	$(MAKE) --no-print-directory check-rules
	$(MAKE) --no-print-directory proto-check
	$(MAKE) --no-print-directory cross
	$(MAKE) --no-print-directory dist-check DIST=$(CURDIR)/bin/dist-check
	$(MAKE) --no-print-directory check-require-peers
	$(MAKE) --no-print-directory test-unit
	$(MAKE) --no-print-directory fuzz FUZZTIME=$(FUZZ_SMOKE)
	$(MAKE) --no-print-directory test-e2e
	$(MAKE) --no-print-directory bench-smoke

vet:
	$(GO) vet ./...

## cross: go vet (test files included) with GOOS/GOARCH set for each of VET_TARGETS, so
## that a call only one OS has cannot come back. Vet type-checks every package and its tests
## as the compiler would, so a separate go build per OS adds nothing but time: dist-check,
## which make test runs next, builds every command for every PLATFORMS pair (both arches
## of each OS) with the same -trimpath. Vet runs once per OS other than the host's: no file
## of ours is arch-specific (dist-check's builds still catch a library type that differs
## by arch), and each vet pass type-checks the whole module and its tests again inside
## make test's 30 minutes. test/e2e reads /proc and runs the Linux peers: it is not
## vetted for other OSes.
cross:
	for t in $(VET_TARGETS); do \
		os=$${t%/*}; arch=$${t#*/}; pkgs=./...; \
		if [ "$$os" != linux ]; then pkgs=$$($(GO) list ./... | grep -v '/test/e2e'); fi; \
		echo "cross: vet $$t"; \
		GOOS=$$os GOARCH=$$arch CGO_ENABLED=0 $(GO) vet $(CROSS_FLAGS) $$pkgs; \
	done

## dist: release archives for every PLATFORMS pair and their SHA256SUMS in $(DIST)/
## (tar.gz for Linux and macOS, zip for Windows; scripts/dist.sh)
dist:
	$(DIST_ENV) scripts/dist.sh

## dist-check: make dist, then check every archive's contents and that the checksums verify
dist-check: dist
	$(DIST_ENV) scripts/dist_check.sh

test-unit:
	pkgs="$(UNIT_PKGS)"; \
	if [ -n "$$pkgs" ]; then MCPGW_REQUIRE_PEERS=$(REQUIRE_PEERS) $(GO) test -race -count=1 -timeout $(UNIT_TIMEOUT) $$pkgs; \
	else echo "no unit packages"; fi
	cd bench && $(GO) test -race -count=1 -timeout $(UNIT_TIMEOUT) ./...

test-e2e:
	$(E2E_ENV) $(GO) test -count=1 -timeout $(E2E_TIMEOUT) $(E2E_ARGS) ./test/e2e/...

## fuzz: every Fuzz target in the module for $(FUZZTIME) each
fuzz:
	FUZZTIME=$(FUZZTIME) GO=$(GO) scripts/fuzz.sh

## bench: mcpbench, every scenario with baselines interleaved (several minutes); results in
## bench/results/<date>-<scenario>.md/.json. Narrow it with BENCH_ARGS='-scenarios S1,S4'.
## Installs the npm baselines (bench/npm) into .cache/bench-npm first when missing; without
## them (no npm, no network) it runs the rest and says which baselines it skipped and why
## (install.sh records its exit status, reason and stderr tail in .cache/bench-npm/.install-status).
BENCH_ARGS ?=
MCPBENCH   := $(CACHE)/bin/mcpbench
BENCH_RUN   = cd bench && $(GO) build -o $(MCPBENCH) ./cmd/mcpbench && cd .. && \
	$(MCPBENCH) run -repo $(CURDIR) -mcpgw $(CURDIR)/bin/mcpgw -bridge $(CURDIR)/bin/mcpgw-bridge -go $(GO) -peers $(CACHE)
bench:
	$(MAKE) --no-print-directory build
	bench/npm/install.sh $(CACHE)/bench-npm || echo "bench: bench/npm/install.sh exited with status $$?; running without the npm baselines (each affected result says why)"
	$(BENCH_RUN) -npm $(CACHE)/bench-npm -out $(CURDIR)/bench/results $(BENCH_ARGS)

## bench-smoke: every mcpbench scenario for about a second (checks they run and write files)
.PHONY: bench-smoke
bench-smoke:
	$(MAKE) --no-print-directory build
	rm -rf $(CACHE)/bench-smoke
	$(BENCH_RUN) -smoke -out $(CACHE)/bench-smoke > $(CACHE)/bench-smoke.log 2>&1 || \
		{ tail -60 $(CACHE)/bench-smoke.log; exit 1; }
	for s in S1 S2 S3 S4 S5 S6 S7 S8 S9 S10 S11 S12 S13 S14 T1 summary; do \
		ls $(CACHE)/bench-smoke/*-$$s.md > /dev/null; \
		if [ $$s != summary ]; then ls $(CACHE)/bench-smoke/*-$$s.json > /dev/null; fi; \
	done
	@tail -1 $(CACHE)/bench-smoke.log

## lint: gofmt must list nothing; go vet and staticcheck (every check of its default set)
## must pass on the whole module; gocyclo must list no hand-written function (tests and
## generated code aside, the bench module included) above cyclomatic CYCLO_MAX
lint:
	@out="$$(gofmt -l $(GO_FILES))"; \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...
	@files="$$(grep -L '^// Code generated .* DO NOT EDIT\.$$' $(filter-out %_test.go,$(GO_FILES)))"; \
	if ! out="$$($(GOCYCLO) -over $(CYCLO_MAX) $$files)"; then \
		if [ -z "$$out" ]; then echo "gocyclo did not run"; exit 1; fi; \
		echo "cyclomatic complexity over $(CYCLO_MAX) (split these functions by meaning; docs/decisions.md):"; echo "$$out"; exit 1; fi

## check-rules: promtool (Debian's prometheus package, `make peers`) checks the shipped
## Prometheus rules; test/e2e/prometheus_test.go also loads them into a real Prometheus
check-rules:
	@command -v promtool >/dev/null || { echo "check-rules: promtool is missing; \`make peers\` installs it (Debian's prometheus package)"; exit 1; }
	promtool check rules deploy/prometheus/mcpgw-rules.yml

## check-require-peers: proves MCPGW_REQUIRE_PEERS works: the Redis unit test and the
## Redis replica e2e test, run with an empty PATH (so no redis-server), and the Gemini CLI
## e2e test with an empty peers dir (no agent CLIs), must fail naming the missing peer and
## `make peers`, and must skip when the variable is 0. A few seconds.
## (The e2e test stops at the missing redis-server before it would run the stub MCPGW_BIN.)
check-require-peers:
	tmp="$$(mktemp -d)"; trap 'rm -rf "$$tmp"' EXIT; mkdir "$$tmp/empty" "$$tmp/peers"; \
	$(GO) test -c -o "$$tmp/store.test" ./internal/store; \
	$(GO) test -c -o "$$tmp/e2e.test" ./test/e2e; \
	touch "$$tmp/mcpgw"; \
	check() { \
		name="$$1" want="$$2"; shift 2; \
		if env PATH="$$tmp/empty" MCPGW_REQUIRE_PEERS=1 "$$@" > "$$tmp/out" 2>&1; then \
			cat "$$tmp/out"; echo "check-require-peers: $$name passed without its peer under MCPGW_REQUIRE_PEERS=1"; exit 1; fi; \
		if ! grep -qF -- "$$want" "$$tmp/out" || ! grep -qF -- '`make peers`' "$$tmp/out"; then \
			cat "$$tmp/out"; echo "check-require-peers: $$name failed without saying \"$$want\" and \`make peers\`"; exit 1; fi; \
		if ! env PATH="$$tmp/empty" MCPGW_REQUIRE_PEERS=0 "$$@" -test.v > "$$tmp/out" 2>&1 || \
			! grep -q -- '--- SKIP' "$$tmp/out"; then \
			cat "$$tmp/out"; echo "check-require-peers: $$name did not skip with MCPGW_REQUIRE_PEERS=0"; exit 1; fi; \
		echo "check-require-peers: $$name fails without its peer, and skips when peers are optional"; \
	}; \
	check "store TestRedisBus" "peer missing: redis-server not on PATH" \
		"$$tmp/store.test" -test.run '^TestRedisBus$$' -test.count=1; \
	check "e2e TestReplicasOnRedis" "peer missing: redis-server not on PATH" \
		MCPGW_PEERS="$$tmp/peers" MCPGW_BIN="$$tmp/mcpgw" \
		"$$tmp/e2e.test" -test.run '^TestReplicasOnRedis$$' -test.count=1; \
	check "e2e TestGeminiCLIListsClientConfig" "peer missing: gemini not installed" \
		MCPGW_PEERS="$$tmp/peers" MCPGW_BIN="$$tmp/mcpgw" \
		"$$tmp/e2e.test" -test.run '^TestGeminiCLIListsClientConfig$$' -test.count=1

## proto: regenerate internal/pluginpb's Go code from plugin.proto with protoc (Debian's
## protobuf-compiler) and the pinned code generators: protoc-gen-go at go.mod's
## google.golang.org/protobuf version, protoc-gen-go-grpc at PROTOC_GEN_GO_GRPC_VERSION.
## The generated code is committed, so building and testing never need protoc.
PROTOC_GEN_GO_GRPC_VERSION ?= v1.6.2
PROTO_GEN = tmp="$$(mktemp -d)"; trap 'rm -rf "$$tmp"' EXIT; \
	$(GO) build -o "$$tmp/bin/protoc-gen-go" google.golang.org/protobuf/cmd/protoc-gen-go; \
	GOBIN="$$tmp/bin" $(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION); \
	gen() { mkdir -p "$$1"; PATH="$$tmp/bin:$$PATH" protoc -I internal/pluginpb --go_out="$$1" --go_opt=paths=source_relative \
		--go-grpc_out="$$1" --go-grpc_opt=paths=source_relative internal/pluginpb/plugin.proto; }
.PHONY: proto proto-check
proto:
	@command -v protoc >/dev/null || { echo "proto: protoc is missing (apt-get install protobuf-compiler)"; exit 1; }
	$(PROTO_GEN); gen internal/pluginpb

## proto-check: the committed internal/pluginpb code is what `make proto` generates (the
## protoc version line aside). Skipped, saying so, when protoc is not installed.
proto-check:
	@if ! command -v protoc >/dev/null; then echo "proto-check: skipped: protoc is not on PATH (apt-get install protobuf-compiler to check internal/pluginpb)"; exit 0; fi; \
	$(PROTO_GEN); gen "$$tmp/out"; \
	for f in plugin.pb.go plugin_grpc.pb.go; do \
		if ! diff <(grep -v -e '^// .protoc ' -e '^// - protoc ' "$$tmp/out/$$f") <(grep -v -e '^// .protoc ' -e '^// - protoc ' internal/pluginpb/$$f); then \
			echo "proto-check: internal/pluginpb/$$f is not what plugin.proto generates; run make proto"; exit 1; fi; \
	done; echo "proto-check: internal/pluginpb is current"

## clean: build outputs and the go test cache; distclean also drops the installed peers
clean:
	rm -rf bin/ dist/
	$(GO) clean -testcache

distclean: clean
	rm -rf $(CACHE) test/e2e/node_modules

