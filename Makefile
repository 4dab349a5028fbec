# cmdhost — build, test plugins, tests.
#   make run        starts the host with its embedded broker and the test plugins
#   make test       builds the test plugins and runs every test (the CI command)
#   make unit       the tests that need nothing installed (go test -short): seconds
#   make check      gofmt, goimports, go mod tidy, go vet and staticcheck (pinned)
#   make plugins    builds testdata/*/ into testdata/plugins/*.wasm
#   make fuzz       runs every fuzz target for a while (~30 s each; ~10 s in make test)
#   make docs-check runs every command README.md and docs/ show, checks their flags
#   make bench      runs the engine benchmarks
#   make bench-compute runs compute kernels: the engine against bare wazero
#   make bench-e2e  measures cmdhost against a bare paho echo executor, end to end
#   make bench-scale measures how cmdhost's cost grows: plugins, clients, payloads, commands
#   make soak       the long fault-cycling run of the engine
#   make replicas   measures a replica killed in its share group

GO       ?= go
WASM_DIR := testdata/plugins
GO_PLUGINS := echo counter counter-idem sleep spin panic oom bigout fail probe nest badreply
# Deliberately broken modules (testdata/bad/*.wat) for load-refusal tests,
# kept out of the plugins folder so that serving it serves only good ones.
BAD_DIR  := testdata/plugins-bad
BAD_WAT  := $(wildcard testdata/bad/*.wat)
# Hostile modules (testdata/hostile/*.wat) for resource-limit tests: they
# load (or must be refused) and then try to exhaust the host.
HOSTILE_DIR := testdata/plugins-hostile
HOSTILE_WAT := $(wildcard testdata/hostile/*.wat)
# Second versions of plugins for hot-reload tests, plugins tests copy under
# other names (topics), the output-limit test plugin (chatty), the
# exactly-once tests' ledger and state counter (tally), a plugin that fails its description
# (describefail), the triggers' tests' plugin (trigger), the hostile guest of publishing and
# HTTP (flood), outside the plugins folder.
ALT_DIR  := testdata/plugins-alt
SERVED   := $(GO_PLUGINS:%=$(WASM_DIR)/%.wasm) $(WASM_DIR)/wat-echo.wasm
PLUGINS  := $(SERVED) \
            $(BAD_WAT:testdata/bad/%.wat=$(BAD_DIR)/bad-%.wasm) $(ALT_DIR)/echo-v2.wasm \
            $(ALT_DIR)/topics.wasm $(ALT_DIR)/chatty.wasm $(ALT_DIR)/ledger.wasm $(ALT_DIR)/tally.wasm $(ALT_DIR)/describefail.wasm \
            $(ALT_DIR)/trigger.wasm $(ALT_DIR)/flood.wasm \
            $(HOSTILE_WAT:testdata/hostile/%.wat=$(HOSTILE_DIR)/hostile-%.wasm)
# abi and sdk are modules of their own (abi/go.mod, sdk/go.mod), which the
# root go.mod replaces with these folders; go vet ./... and go test ./... at
# the root do not enter them, so vet and test run in each (go -C).
GUEST_SRC := $(wildcard sdk/*.go abi/*.go) go.mod abi/go.mod sdk/go.mod
# The guest kit (testdata/kit/README.md): one test plugin per guest
# language, each serving the same commands, checked by one table
# (internal/nested/guestkit_test.go). Rust with Debian's rustc by its path (a rustup
# rustc without wasm targets may come first in PATH), without cargo: the
# SDK is built as an rlib first. C with clang and wasi-libc, as a reactor.
# AssemblyScript with the asc pinned in sdk/assemblyscript/package-lock.json.
KIT_DIR  := testdata/plugins-kit
RUSTC    ?= /usr/bin/rustc
CLANG    ?= clang
RUSTFLAGS_WASM := --edition 2021 --target wasm32-wasi -C opt-level=2
ASC      := sdk/assemblyscript/node_modules/.bin/asc
ASCFLAGS := -O --runtime incremental --exportStart _initialize --use abort=
KIT      := $(KIT_DIR)/kit-go.wasm $(KIT_DIR)/kit-rust.wasm $(KIT_DIR)/kit-c.wasm $(KIT_DIR)/kit-as.wasm
PLUGINS  += $(KIT)

.PHONY: all build run plugins deps test unit vet check conformance fuzz bench bench-compute bench-e2e bench-scale soak clean docs-check replicas sdk-tests paho-tests wazero-tests mochi-tests wazero-upstream

all: build plugins

build:
	$(GO) build -buildvcs=auto -o bin/cmdhost ./cmd/cmdhost

# The quickstart: embedded broker on 127.0.0.1:11883, the test plugins.
# It installs nothing: it builds the Go plugins (Go is all it needs), and
# the WAT one only when wat2wasm is there, saying what is missing and how
# to get it otherwise; it publishes timeout events (--events), so that
# cmdhost watch and docs/timeouts.md's mosquitto_sub show them; ARGS goes to
# serve (make run ARGS='--metrics 127.0.0.1:9090').
RUN_PLUGINS := $(GO_PLUGINS:%=$(WASM_DIR)/%.wasm)
run: build $(RUN_PLUGINS)
	@if wat2wasm --version >/dev/null 2>&1; then \
	  $(MAKE) --no-print-directory $(WASM_DIR)/wat-echo.wasm; \
	else \
	  echo "make run: wat2wasm is missing, so the wat-echo plugin is not served (Debian: apt-get install wabt, then make run again)"; \
	fi
	@echo "make run: ready for calls once the host logs its serving line (a first start builds and compiles $(words $(RUN_PLUGINS)) Go plugins: about a minute on two cores; later starts take seconds)"
	bin/cmdhost serve --plugins $(WASM_DIR) --events $(ARGS)

plugins: $(PLUGINS)

# Go guests: standard toolchain, WASI reactor (see sdk/).
$(WASM_DIR)/%.wasm: testdata/%/main.go $(GUEST_SRC)
	@mkdir -p $(WASM_DIR)
	GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -o $@ ./testdata/$*

$(ALT_DIR)/%.wasm: testdata/%/main.go $(GUEST_SRC)
	@mkdir -p $(ALT_DIR)
	GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -o $@ ./testdata/$*

# The guest not written in Go: WebAssembly text, built with Debian's wabt.
$(WASM_DIR)/wat-echo.wasm: testdata/wat-echo/echo.wat
	@mkdir -p $(WASM_DIR)
	@command -v wat2wasm >/dev/null || .ci/deps wabt
	wat2wasm $< -o $@

$(KIT_DIR)/kit-go.wasm: testdata/kit-go/main.go $(GUEST_SRC)
	@mkdir -p $(KIT_DIR)
	GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -o $@ ./testdata/kit-go

$(KIT_DIR)/rust/libcmdhost.rlib: $(wildcard sdk/rust/src/*.rs)
	@mkdir -p $(KIT_DIR)/rust
	@test -x $(RUSTC) && $(RUSTC) --print target-libdir --target wasm32-wasi >/dev/null 2>&1 && test -d "$$($(RUSTC) --print target-libdir --target wasm32-wasi)" || .ci/deps rust
	$(RUSTC) $(RUSTFLAGS_WASM) --crate-type rlib --crate-name cmdhost -o $@ sdk/rust/src/lib.rs

$(KIT_DIR)/kit-rust.wasm: testdata/kit-rust/lib.rs $(KIT_DIR)/rust/libcmdhost.rlib
	$(RUSTC) $(RUSTFLAGS_WASM) --crate-type cdylib -C strip=symbols --extern cmdhost=$(KIT_DIR)/rust/libcmdhost.rlib -o $@ $<

$(KIT_DIR)/kit-c.wasm: testdata/kit-c/kit.c sdk/c/cmdhost.c sdk/c/cmdhost.h
	@mkdir -p $(KIT_DIR)
	@command -v $(CLANG) >/dev/null && command -v wasm-ld >/dev/null && test -f /usr/lib/wasm32-wasi/libc.a || .ci/deps c
	$(CLANG) --target=wasm32-wasi -mexec-model=reactor -O2 -Wall -Wextra -Werror -Wl,--strip-all -I sdk/c -o $@ testdata/kit-c/kit.c sdk/c/cmdhost.c

$(ASC): sdk/assemblyscript/package.json sdk/assemblyscript/package-lock.json
	@command -v npm >/dev/null || .ci/deps node
	cd sdk/assemblyscript && npm ci --no-audit --no-fund
	@touch $@

$(KIT_DIR)/kit-as.wasm: testdata/kit-as/index.ts sdk/assemblyscript/assembly/index.ts $(ASC)
	@mkdir -p $(KIT_DIR)
	$(ASC) $< -o $@ $(ASCFLAGS)

$(BAD_DIR)/bad-%.wasm: testdata/bad/%.wat
	@mkdir -p $(BAD_DIR)
	@command -v wat2wasm >/dev/null || .ci/deps wabt
	wat2wasm $< -o $@

$(HOSTILE_DIR)/hostile-%.wasm: testdata/hostile/%.wat
	@mkdir -p $(HOSTILE_DIR)
	@command -v wat2wasm >/dev/null || .ci/deps wabt
	wat2wasm $< -o $@

# Installs what the tests need and the machine lacks (Debian packages).
deps:
	.ci/deps

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet ./...
	$(GO) -C abi vet ./...
	$(GO) -C sdk vet ./...
	GOOS=wasip1 GOARCH=wasm $(GO) -C abi vet ./...
	GOOS=wasip1 GOARCH=wasm $(GO) -C sdk vet ./...

# The linters, pinned: `go run pkg@version` fetches each through the Go
# module proxy once (the build cache keeps it), so a developer and CI run
# the same version and nothing needs installing. Raise a version here on
# purpose, never by accident.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
GOIMPORTS   := golang.org/x/tools/cmd/goimports@v0.52.0
# What goimports checks: the module's Go files that git tracks (so never
# node_modules), testdata's guests included, but not third_party/: the
# copies of paho.golang, wazero and mochi-mqtt keep upstream's imports so
# that their diff to upstream stays the change (third_party/*/CMDHOST.md).
# staticcheck checks ./..., which leaves out testdata/ (Go's rule) and the
# copies (modules of their own, with their own tests in paho-tests,
# wazero-tests and mochi-tests); it sees the host's build of sdk, not the
# wasip1 one, which vet checks.
CHECK_GO = $$(git ls-files '*.go' ':!:third_party/')

# make check: clean when gofmt and goimports (imports grouped standard
# library, third-party, then this module) list nothing, go.mod and go.sum
# of both modules are tidy, and vet and staticcheck find nothing.
check: vet
	@out=$$($(GO) run $(GOIMPORTS) -local github.com/cmdhost/cmdhost -l $(CHECK_GO)) && test -z "$$out" || \
	  { printf '%s\n' "$$out"; echo "goimports -local github.com/cmdhost/cmdhost: files above need their imports grouped"; exit 1; }
	$(GO) mod tidy -diff
	$(GO) -C abi mod tidy -diff
	$(GO) -C sdk mod tidy -diff
	cd third_party/paho.golang && $(GO) mod tidy -diff
	cd third_party/wazero && $(GO) mod tidy -diff
	cd third_party/mochi-mqtt-server && $(GO) mod tidy -diff
	$(GO) run $(STATICCHECK) ./...
	$(GO) -C abi run $(STATICCHECK) ./...
	$(GO) -C sdk run $(STATICCHECK) ./...

# The tests that need nothing installed, in seconds: no test plugins, no
# mosquitto, redis-server or guest toolchain. Under -short every test that
# needs one of them skips (internal/testkit.Needs says which), whether the
# machine has it or not; fuzz seeds and the rest run.
unit:
	$(GO) test -short -count=1 ./...
	$(GO) -C abi test -short -count=1 ./...
	$(GO) -C sdk test -short -count=1 ./...

# The -race run of every package goes through testprogress: a line per
# package as it ends, the output of a test that fails, and once a minute
# the packages running and the test each is in (a package ran for minutes
# without a line).
# The first run, without -race, also warms the tests' shared compilation
# cache (compiling a guest under -race takes ~14 s, loading it cached ~1 s),
# the reload test's module variants included.
test: deps check plugins conformance sdk-tests paho-tests wazero-tests mochi-tests
	$(GO) test -count=1 -run '^(TestAllPluginsLoad|TestReloadUnderLoad|TestGuestKit|TestIdlePluginMemory)$$' ./internal/wasm ./host ./internal/nested
	$(GO) run ./internal/testprogress/cmd/testprogress -- $(GO) test -json -race -count=1 -timeout 12m ./...
	$(GO) -C abi test -race -count=1 ./...
	$(GO) -C sdk test -race -count=1 ./...
	$(MAKE) --no-print-directory fuzz FUZZMULT=1

# The tests of cmdhost's copy of paho.golang's packet codec
# (third_party/paho.golang/CMDHOST.md), its fuzz target included.
paho-tests:
	cd third_party/paho.golang && $(GO) test -count=1 ./packets ./paho ./paho/session/state && \
	  $(GO) test ./packets -run '^$$' -fuzz '^FuzzReadPacket$$' -fuzztime 20000x

# The tests of cmdhost's copy of wazero (third_party/wazero/CMDHOST.md):
# the compiler packages the patch changes, upstream's tests of its frontend
# and SSA passes, and the patch's own (the inline termination check).
wazero-tests:
	cd third_party/wazero && $(GO) test -race -count=1 ./internal/engine/wazevo/...

# The tests of cmdhost's copy of mochi-mqtt, the embedded broker
# (third_party/mochi-mqtt-server/CMDHOST.md): its fixes' own, under -race.
mochi-tests:
	cd third_party/mochi-mqtt-server && $(GO) test -race -count=1 .

# wazero's whole test suite on its release with third_party/wazero.patch,
# and a check that the copy is that tree (a few minutes).
wazero-upstream:
	GO=$(GO) third_party/wazero-upstream.sh

# The Rust SDK's own tests, natively (its codec; the guest kit covers the
# rest, in wasm, for every SDK).
sdk-tests: $(KIT_DIR)/rust/libcmdhost.rlib
	$(RUSTC) --edition 2021 --test --crate-name cmdhost -o $(KIT_DIR)/rust/sdk-tests sdk/rust/src/lib.rs
	$(KIT_DIR)/rust/sdk-tests

# Every command README.md and docs/*.md show, run against a real host (make
# targets dry-run), and every flag docs/cli.md shows (cmd/cmdhost/internal/app's
# docs tests, and servecmd's TestDocsConfigExample; make test runs them too).
docs-check: deps plugins
	$(GO) test -count=1 -run '^TestDocs' ./cmd/...

# The METL CommandExecutor cases of ../shared/conformance, run against the
# executor (internal/rpc/conformance_test.go): prints the summary line
# "conformance: N passed, N failed, N skipped", skip reasons and failures.
conformance:
	@out=$$($(GO) test ./internal/rpc -run '^TestConformance$$' -count=1 -v 2>&1); rc=$$?; \
	printf '%s\n' "$$out" | grep -E '^(conformance:|\s*--- FAIL|\s+conformance_)'; exit $$rc

# Every fuzz target, as package:name:executions, the executions taking
# about 10 s here. make test runs each once; make fuzz FUZZMULT times (3).
# Counts, not durations: go1.26's fuzz coordinator can fail a run with
# "context deadline exceeded" when a -fuzztime duration ends while a worker
# is busy (golang/go#75804); a count has no deadline to race.
FUZZ_TARGETS := abi:FuzzDecodeRequest:500000 abi:FuzzDecodeResponse:500000 \
                abi:FuzzDecodeDescription:500000 abi:FuzzDecodeInvocation:500000 \
                abi:FuzzDecodeInvocationResult:500000 internal/rpc:FuzzParseTimestamp:100000 \
                internal/session:FuzzCleanText:100000 internal/wasm:FuzzBoundModule:100000 internal/wasm/meter:FuzzInstrument:100000 \
                internal/wasm:FuzzMountPath:5000 internal/statestore:FuzzRESP:100000
FUZZMULT ?= 3

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; rest=$${t#*:}; name=$${rest%%:*}; n=$$(( $${rest##*:} * $(FUZZMULT) )); \
	  echo "fuzz $$pkg $$name: $$n executions"; \
	  $(GO) -C $$pkg test . -run '^$$' -fuzz "^$$name\$$" -fuzztime $${n}x; \
	done

bench: plugins
	$(GO) test ./internal/wasm -run '^$$' -bench 'EchoCall|Instantiate' -benchtime 2s -count 1
	$(GO) test ./internal/wasm -run '^$$' -bench BenchmarkLoad -benchtime 5x -count 1
	$(GO) test ./internal/wasm -run '^$$' -bench DeadlineOvershoot -benchtime 60x -count 1
	$(GO) test ./host -run '^$$' -bench ReuseVsExecution -benchtime 300x -count 1
	$(GO) test ./host -run '^$$' -bench 'Cancel|AskVsPlain' -benchtime 300x -count 1
	$(GO) test ./internal/nested -run '^$$' -bench NestedLocal -benchmem -benchtime 2s -count 1
	$(GO) test ./cache -run '^$$' -bench . -benchmem -count 1
	$(GO) test ./internal/rpc -run '^$$' -bench DedupStore -benchtime 20000x -count 1

# Compute kernels in C and Rust (testdata/bench-c, testdata/bench-rust), each
# run by the engine as a plugin command and as the same module on bare
# wazero without interruption checks; prints each kernel's ratio from one
# run (BENCHMARKS.md, Compute). Outside make test.
BENCH_DIR := testdata/plugins-bench

$(BENCH_DIR)/bench-c.wasm: testdata/bench-c/bench.c sdk/c/cmdhost.c sdk/c/cmdhost.h
	@mkdir -p $(BENCH_DIR)
	@command -v $(CLANG) >/dev/null && command -v wasm-ld >/dev/null && test -f /usr/lib/wasm32-wasi/libc.a || .ci/deps c
	$(CLANG) --target=wasm32-wasi -mexec-model=reactor -O2 -Wall -Wextra -Werror -Wl,--strip-all -I sdk/c -o $@ testdata/bench-c/bench.c sdk/c/cmdhost.c

$(BENCH_DIR)/bench-rust.wasm: testdata/bench-rust/lib.rs $(KIT_DIR)/rust/libcmdhost.rlib
	@mkdir -p $(BENCH_DIR)
	$(RUSTC) $(RUSTFLAGS_WASM) --crate-type cdylib -C strip=symbols --extern cmdhost=$(KIT_DIR)/rust/libcmdhost.rlib -o $@ $<

bench-compute: plugins $(BENCH_DIR)/bench-c.wasm $(BENCH_DIR)/bench-rust.wasm
	CMDHOST_BENCH_COMPUTE=1 $(GO) test ./internal/wasm -run '^TestBenchCompute$$' -count=1 -v -timeout 10m

# cmdhost against a bare paho echo executor, on mosquitto and on the
# embedded broker; rewrites its table in BENCHMARKS.md (a few minutes).
bench-e2e: deps plugins
	CMDHOST_BENCH_E2E=1 $(GO) test ./cmd/cmdhost/internal/servecmd -run '^TestBenchE2E$$' -v -count=1 -timeout 20m

# How cmdhost's cost grows with the work: start and memory against the
# number of plugins, the embedded broker's clients, payload sizes, commands
# called at random; rewrites its section of BENCHMARKS.md (< 15 minutes).
bench-scale: plugins
	CMDHOST_BENCH_SCALE=1 $(GO) test ./cmd/cmdhost/internal/servecmd -run '^TestBenchScale$$' -v -count=1 -timeout 30m

soak: plugins
	CMDHOST_SOAK=1 $(GO) test ./internal/wasm -run TestFaultSoak -v -count=1 -timeout 20m
	CMDHOST_SOAK=1 $(GO) test -race ./internal/broker -run TestBurstToInProcessSubscriber -count=100 -timeout 20m

# What a replica killed with kill -9 does to its share group, for several
# session expiries, and the shared store's cost per request: host and Redis
# CPU, Redis commands (figures in docs/operations.md, Replicas and Scaling
# the store out).
replicas: plugins
	CMDHOST_MEASURE=1 $(GO) test ./cmd/cmdhost/internal/exactlyonce -run 'TestReplicaKilledMeasure|TestStoreCapacityMeasure' -v -count=1 -timeout 20m

clean:
	rm -rf bin $(WASM_DIR) $(BAD_DIR) $(ALT_DIR) $(HOSTILE_DIR) $(BENCH_DIR)
