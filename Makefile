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
FUZZ_SMOKE ?= 4s
E2E_TIMEOUT ?= 20m
UNIT_TIMEOUT ?= 10m
# Extra arguments for the e2e go test, e.g. make test-e2e E2E_ARGS='-run TestHarness -v'
E2E_ARGS  ?=
# make install puts mcpgw and mcpgw-bridge in $(PREFIX)/bin, a directory the user can write.
PREFIX    ?= $(HOME)/.local
BINDIR     = $(abspath $(PREFIX))/bin

E2E_ENV := MCPGW_PEERS=$(CACHE) MCPGW_BIN=$(CURDIR)/bin/mcpgw MCPGW_E2E_DIR=$(CURDIR)/test/e2e

# Every package except the end-to-end one (which needs the peers and bin/mcpgw).
UNIT_PKGS = $(shell $(GO) list ./... | grep -v '/test/e2e')
GO_FILES  = $(shell find . -name '*.go' -not -path './test/e2e/node_modules/*' -not -path './.cache/*' -not -path './.git/*')

.PHONY: build install run peers test vet test-unit test-e2e fuzz bench lint clean distclean everything-server

## build: static bin/mcpgw (and bin/mcpgw-bridge once cmd/mcpgw-bridge exists)
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/mcpgw ./cmd/mcpgw
	if [ -d cmd/mcpgw-bridge ]; then \
		CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/mcpgw-bridge ./cmd/mcpgw-bridge; \
	fi

## install: build, then copy mcpgw and mcpgw-bridge to $(PREFIX)/bin (default ~/.local/bin)
## and say whether that directory is on PATH. `make install PREFIX=/usr/local` as root.
install: build
	install -d '$(BINDIR)'
	install -m 0755 bin/mcpgw bin/mcpgw-bridge '$(BINDIR)/'
	@echo "installed $(BINDIR)/mcpgw and $(BINDIR)/mcpgw-bridge ($$('$(BINDIR)/mcpgw' version))"
	@case ":$$PATH:" in \
	*":$(BINDIR):"*) echo "$(BINDIR) is on your PATH";; \
	*) echo "$(BINDIR) is not on your PATH; add it (e.g. in ~/.bashrc or ~/.profile):"; \
	   echo "    export PATH=\"$(BINDIR):\$$PATH\"";; \
	esac
	@echo "next: mcpgw client-config --agent NAME --client claude-code --via bridge (docs/clients/)"

## everything-server: the go-sdk conformance fixture examples/mcpgw.yaml runs over stdio
everything-server:
	CGO_ENABLED=0 $(GO) build -o $(CACHE)/bin/everything-server github.com/modelcontextprotocol/go-sdk/conformance/everything-server

## run: build and serve examples/mcpgw.yaml
run: build everything-server
	bin/mcpgw serve --config examples/mcpgw.yaml

## peers: install the real test peers into .cache and test/e2e/node_modules
peers:
	CACHE=$(CACHE) scripts/peers.sh

## test: peers, build, vet, unit tests with -race, then the end-to-end tests
test:
	$(MAKE) --no-print-directory peers
	$(MAKE) --no-print-directory build
	$(MAKE) --no-print-directory vet
	$(MAKE) --no-print-directory test-unit
	$(MAKE) --no-print-directory fuzz FUZZTIME=$(FUZZ_SMOKE)
	$(MAKE) --no-print-directory test-e2e
	$(MAKE) --no-print-directory bench-smoke

vet:
	$(GO) vet ./...

test-unit:
	pkgs="$(UNIT_PKGS)"; \
	if [ -n "$$pkgs" ]; then $(GO) test -race -count=1 -timeout $(UNIT_TIMEOUT) $$pkgs; \
	else echo "no unit packages"; fi

test-e2e:
	$(E2E_ENV) $(GO) test -count=1 -timeout $(E2E_TIMEOUT) $(E2E_ARGS) ./test/e2e/...

## fuzz: every Fuzz target in the module for $(FUZZTIME) each
fuzz:
	FUZZTIME=$(FUZZTIME) GO=$(GO) scripts/fuzz.sh

## bench: mcpbench, every scenario with baselines interleaved (several minutes); results in
## bench/results/<date>-<scenario>.md/.json. Narrow it with BENCH_ARGS='-scenarios S1,S4'.
## Installs the npm baselines (bench/npm) into .cache/bench-npm first when missing; without
## them (no npm, no network) it runs the rest and says which baselines it skipped.
BENCH_ARGS ?=
MCPBENCH   := $(CACHE)/bin/mcpbench
BENCH_RUN   = cd bench && $(GO) build -o $(MCPBENCH) ./cmd/mcpbench && cd .. && \
	$(MCPBENCH) run -repo $(CURDIR) -mcpgw $(CURDIR)/bin/mcpgw -bridge $(CURDIR)/bin/mcpgw-bridge -go $(GO) -peers $(CACHE)
bench:
	$(MAKE) --no-print-directory build
	bench/npm/install.sh $(CACHE)/bench-npm || echo "bench: npm baselines unavailable (see above); running without them"
	$(BENCH_RUN) -npm $(CACHE)/bench-npm -out $(CURDIR)/bench/results $(BENCH_ARGS)

## bench-smoke: every mcpbench scenario for about a second (checks they run and write files)
.PHONY: bench-smoke
bench-smoke:
	$(MAKE) --no-print-directory build
	rm -rf $(CACHE)/bench-smoke
	$(BENCH_RUN) -smoke -out $(CACHE)/bench-smoke > $(CACHE)/bench-smoke.log 2>&1 || \
		{ tail -60 $(CACHE)/bench-smoke.log; exit 1; }
	for s in S1 S2 S3 S4 S5 S6 S7 S8 S9 S10 summary; do \
		ls $(CACHE)/bench-smoke/*-$$s.md > /dev/null; \
		if [ $$s != summary ]; then ls $(CACHE)/bench-smoke/*-$$s.json > /dev/null; fi; \
	done
	@tail -1 $(CACHE)/bench-smoke.log

## lint: gofmt must list nothing, go vet must pass
lint:
	@out="$$(gofmt -l $(GO_FILES))"; \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

## clean: build outputs and the go test cache; distclean also drops the installed peers
clean:
	rm -rf bin/
	$(GO) clean -testcache

distclean: clean
	rm -rf $(CACHE) test/e2e/node_modules
