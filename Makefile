# stopgate: `make demo` shows the main job, `make test` runs every test.
GO      ?= go
BIN     ?= bin
PREFIX  ?= /usr/local
CMDS    := $(notdir $(wildcard cmd/*))
# TAGS keep the commands statically linked: mvdan.cc/sh/v3/expand imports
# os/user, which with cgo links libc dynamically (+1.4 ms at every start).
TAGS    ?= osusergo,netgo

.PHONY: all build demo test unit lint fuzz e2e-install sandbox-tools chromium otelcol e2e bench install dist clean

all: build

# build writes bin/detect, bin/gate (and the other commands under cmd/).
build:
	$(GO) build -tags $(TAGS) -o $(BIN)/ ./cmd/...

# demo feeds detect and gate the hook events the real client sends, on a copy
# of this example project: a blocked stop, the fix, a passing stop.
demo: build
	@$(GO) run ./internal/demo -bin $(BIN)

# test runs the linters, every test, the end-to-end suites on the real
# clients included (their pinned npm packages are installed first), then each
# fuzz target briefly. The end-to-end suites run after the others and one
# after another, not beside them: they drive real clients, and the crash and
# concurrency suites would load the 2 cores they share. They are never taken
# from the test cache (-count=1): they depend on binaries it does not track.
test: e2e-install sandbox-tools chromium otelcol lint
	$(GO) test $$($(GO) list ./... | grep -v /internal/e2e)
	$(GO) test -p 1 -count=1 -timeout 45m ./internal/e2e/...
	@$(MAKE) --no-print-directory fuzz

# lint runs gofmt -l over the tracked Go files, go vet, staticcheck and
# deadcode, pinned here (the go command fetches them through the module
# proxy: with -test, and without it so that code only tests reach is found
# too), and refuses any committed file over 1 MiB (a built binary, an
# archive); any finding fails it.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
DEADCODE    ?= golang.org/x/tools/cmd/deadcode@v0.52.0
# TESTONLY are the packages that exist for the tests (the end-to-end harness,
# the schemas the scripts validate against, the sandbox runner of test
# binaries): deadcode without -test skips them.
TESTONLY    := e2e|schema|validator/sandboxtest
GOFMT       ?= gofmt
lint:
	@out=$$(git ls-files -z '*.go' | xargs -0 -r $(GOFMT) -l); \
	if [ -n "$$out" ]; then echo "$$out"; echo "gofmt: files above are not gofmt'd (gofmt -w them)"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	@out=$$($(GO) run $(DEADCODE) -test ./...); \
	if [ -n "$$out" ]; then echo "$$out"; echo "deadcode: unreachable functions above"; exit 1; fi
	@out=$$($(GO) run $(DEADCODE) ./... | grep -Ev '^internal/($(TESTONLY))/'); \
	if [ -n "$$out" ]; then echo "$$out"; echo "deadcode: functions only tests reach above"; exit 1; fi
	@big=$$(git ls-files -z | xargs -0 -r stat -c '%s %n' 2>/dev/null | awk '$$1 > 1048576 {print "  " $$2 " (" $$1 " bytes)"}'); \
	if [ -n "$$big" ]; then echo "$$big"; echo "lint: committed files over 1 MiB above (nothing built goes into git)"; exit 1; fi

# unit runs the tests without installing anything; the end-to-end suite skips.
unit:
	$(GO) test ./...

# fuzz runs each fuzz target for FUZZTIME, from the seed corpus in its
# package's testdata/fuzz; an input that fails is saved there, and from then
# on is a regression test of plain `go test`. The budgets are counts of
# inputs, not durations: with a duration, Go 1.26's fuzz coordinator can
# fail a target at the deadline having found nothing (golang/go#75804,
# "context deadline exceeded"; fixed in Go 1.27).
FUZZTIME ?= 10000x
FUZZ     := internal/hook:FuzzParseInput internal/config:FuzzParseConfig \
            internal/testhook:FuzzParseTests internal/guard:FuzzCheckBash \
            internal/transcript:FuzzScan internal/client:FuzzParse
fuzz:
	@set -e; for t in $(FUZZ); do \
		echo "fuzz $${t#*:} ($${t%%:*}) for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$${t#*:}$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 1000x ./$${t%%:*}; \
	done

# bench builds the commands and prints one table of whole-process wall times
# beside a hello-world floor built in the same run (docs/benchmarks.md).
# BENCHFLAGS passes options, e.g. BENCHFLAGS=-runs=100. The in-process Go
# benchmarks: go test -run '^$$' -bench . ./internal/...
bench: build
	$(GO) run ./internal/bench/cmd/benchtable -go $(GO) -bin $(BIN) $(BENCHFLAGS)

e2e-install:
	@bash scripts/install-claude
	@bash scripts/install-clients

# sandbox-tools installs bubblewrap and socat (apt-get, as root) for the
# client's OS sandbox and the confined validators; elsewhere it says what is
# missing and the tests that need them skip.
sandbox-tools:
	@bash scripts/install-sandbox-tools

# chromium installs Debian's chromium (apt-get, as root) for the test that
# renders gate report's page in a real browser; elsewhere that test skips.
chromium:
	@bash scripts/install-chromium

# otelcol builds a real OpenTelemetry Collector (the collector's own builder,
# from the Go module proxy) into tmp/e2e/otelcol for the telemetry end-to-end
# test; cached: when it is there, nothing is rebuilt.
otelcol:
	@bash scripts/install-otelcol

e2e: e2e-install sandbox-tools otelcol
	$(GO) test -p 1 -count=1 -timeout 45m -v -run . ./internal/e2e/...

# install puts the commands in $GOBIN (go install), or PREFIX/bin with PREFIX=.
install:
ifeq ($(origin PREFIX),command line)
	$(GO) build -tags $(TAGS) -o $(PREFIX)/bin/ ./cmd/...
else
	$(GO) install -tags $(TAGS) ./cmd/...
endif

# dist makes the release of the commit checked out (HEAD, from a clean
# clone: uncommitted changes are not in it) in dist/: per platform a
# reproducible static build in stopgate_VERSION_OS_ARCH.tar.gz, the npm
# packages in dist/npm, and SHA256SUMS. Two runs on one commit give the same
# bytes (internal/e2e TestReproducible). DISTFLAGS passes options, e.g.
# DISTFLAGS=-platforms=linux/amd64.
dist:
	$(GO) run ./internal/dist/cmd/dist -go $(GO) -out dist $(DISTFLAGS)

clean:
	rm -rf $(BIN) tmp/validation dist
