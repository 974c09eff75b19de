# Every Go module in the repository: the library at the root, and the modules
# that may depend on Kubernetes (the demo, the end-to-end suite).
MODULES := $(patsubst %/go.mod,%,$(shell find . -name go.mod -not -path './.tools/*' | sort))

GO         ?= go
# The other supported Go release. TOOLCHAIN runs every go command of a target on the Go release it names,
# which the go command downloads once: make test TOOLCHAIN=$(GO_NEXT). Empty: the go on the PATH (Go 1.26).
GO_NEXT    := go1.27.3
TOOLCHAIN  ?=
ifneq ($(TOOLCHAIN),)
export GOTOOLCHAIN := $(TOOLCHAIN)
endif
STATICCHECK_VERSION := v0.8.2
FUZZTIME   ?= 30s

.PHONY: all test test-race test-queue test-item test-norace test-go1.27 lint fuzz fuzz-plants bench e2e demo goaway gosuite tidy api apicheck modcheck modpin

all: lint test

# The tests that skip under the race detector, and their packages (the root module's): the allocation pins, whose
# counts mean nothing while the race detector makes sync.Pool drop items at random. make test runs them once more
# without it, and fails unless each of them ran and passed. A test that skips under -race (raceEnabled, in a
# package's race_test.go) belongs in this list, unless its module is in PLAIN_MODULES, which make test runs without it.
NORACE_TESTS := TestAllocsOneKiB TestAllocsPerBufferedRequest TestAllocsNewWithOptions TestAllocsReport TestAllocsBodyTraceUnused
NORACE_PKGS  := ./pkg/teebody ./pkg/transport ./bench
norace_run   := ^($(subst $(eval) ,|,$(strip $(NORACE_TESTS))))$$

# The modules whose tests make test runs without the race detector: the demo's (about 1,050 of Kubernetes'
# packages) and Caddy's. They are built with BUILDFLAGS, as make demo builds the demo, so that make demo then make
# test compile Kubernetes' packages once. make test-race, which CI runs, tests them with the race detector too.
PLAIN_MODULES := ./cmd/demo ./contrib/caddy

# Every build of make demo and make test leaves out DWARF, the debug information that only a debugger reads: less to
# compile and much less to link (the demo's module links nine test binaries of Kubernetes' packages), and nothing a
# test prints needs it (failures, panics and the race detector's reports take files and lines from the binary's own
# tables). To debug a test, build it with go test -c, which keeps DWARF.
BUILDFLAGS := -gcflags=all=-dwarf=false -ldflags=-w
RACEFLAGS  := -race $(BUILDFLAGS)

# make test and make test-race hand their items (a module and how to test it, or norace) to two go commands at a
# time (xargs -P 2), each taking the next item when it is done: while one waits on its slowest tests, the other
# compiles. The items go out longest first, so that no long one starts last. The standard library's packages are
# compiled first, once per set of flags, so that two go commands do not compile them both. Each item's output is
# printed whole at the end, in queue order.
test_first := ./cmd/demo . ./contrib/caddy ./internal/tools
test_order := $(filter $(MODULES),$(test_first)) $(filter-out $(test_first),$(MODULES))

## test: every module's tests (the fuzz seed corpora included): the library's and the small modules' with the race
## detector, the demo's and Caddy's without it (PLAIN_MODULES); then test-norace.
test:
	@$(MAKE) --no-print-directory test-queue \
		QUEUE="$(foreach m,$(test_order),$(if $(filter $(m),$(PLAIN_MODULES)),plain:$(m),race:$(m))) plain:norace"

## test-race: every module's tests with the race detector, then test-norace.
test-race:
	@$(MAKE) --no-print-directory test-queue QUEUE="$(foreach m,$(test_order),race:$(m)) plain:norace"

# test-queue: run QUEUE's items, each MODE:ITEM, two at a time (see test_first).
test-queue:
	@set -e; \
	std() { for m in "$$@"; do (cd $$m && $(GO) list -deps -test -f '{{if .Standard}}{{.ImportPath}}{{end}}' ./...); done | sort -u; }; \
	race=$$(printf '%s\n' $(QUEUE) | sed -n 's/^race://p'); \
	plain=$$(printf '%s\n' $(QUEUE) | sed -n 's/^plain://p' | sed 's/^norace$$/./'); \
	if [ -n "$$race" ]; then s=$$(std $$race); \
		echo "== go build -race: the $$(echo "$$s" | wc -l) packages of the standard library that $$(echo $$race) use"; \
		$(GO) build $(RACEFLAGS) $$s runtime/race; fi; \
	if [ -n "$$plain" ]; then s=$$(std $$plain); \
		echo "== go build: the $$(echo "$$s" | wc -l) packages of the standard library that $$(echo $$plain) use"; \
		$(GO) build $(BUILDFLAGS) $$s; fi
	@logs=$$(mktemp -d); trap 'rm -rf "$$logs"' EXIT; fail=; \
	printf '%s\n' $(QUEUE) | xargs -P 2 -I{} $(MAKE) --no-print-directory test-item ITEM={} LOGS="$$logs" || fail=1; \
	for i in $(QUEUE); do cat "$$logs/$$(echo "$$i" | tr /: __).log"; done; \
	if [ -n "$$fail" ]; then echo "make $(firstword $(MAKECMDGOALS)): an item failed (== FAIL above)"; exit 1; fi

# test-item: one item of a test queue, ITEM (race:MODULE, plain:MODULE or plain:norace), its output into LOGS.
test-item:
	@log="$(LOGS)/$(subst :,_,$(subst /,_,$(ITEM))).log"; start=$$(date +%s); mode=$(word 1,$(subst :, ,$(ITEM))); dir=$(word 2,$(subst :, ,$(ITEM))); \
	if [ "$$dir" = norace ]; then $(MAKE) --no-print-directory test-norace >"$$log" 2>&1; \
	elif [ "$$mode" = race ]; then { echo "== go test -race $$dir"; cd $$dir && $(GO) test $(RACEFLAGS) -count=1 ./...; } >"$$log" 2>&1; \
	else { echo "== go test $$dir (no race detector)"; cd $$dir && $(GO) test $(BUILDFLAGS) -count=1 ./...; } >"$$log" 2>&1; fi \
	&& echo "== ok   $(ITEM) ($$(( $$(date +%s) - start )) s)" || { echo "== FAIL $(ITEM)"; exit 1; }

## test-norace: the tests that skip under the race detector (NORACE_TESTS), without it.
test-norace:
	@echo "== go test (no race detector) -run '$(norace_run)' $(NORACE_PKGS)"
	@out=$$($(GO) test $(BUILDFLAGS) -count=1 -v -run '$(norace_run)' $(NORACE_PKGS) 2>&1) || { echo "$$out"; exit 1; }; \
	echo "$$out" | grep -E '^(--- |ok |FAIL)'; \
	ran=$$(echo "$$out" | grep -c '^--- PASS'); \
	if [ "$$ran" -ne $(words $(NORACE_TESTS)) ]; then \
		echo "$$ran of the $(words $(NORACE_TESTS)) tests in NORACE_TESTS passed: each must exist and run"; exit 1; \
	fi

## test-go1.27: the library's and the demo's tests with the race detector, and make demo, on Go 1.27.
test-go1.27:
	$(GO) version
	$(GO) test -race -count=1 ./...
	cd cmd/demo && $(GO) test -race -count=1 ./...
	$(MAKE) demo
test-go1.27: export GOTOOLCHAIN := $(GO_NEXT)

## lint: go vet, gofmt and staticcheck on every module.
lint:
	@set -e; out=$$(gofmt -l $(MODULES)); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@set -e; for m in $(MODULES); do \
		echo "== go vet $$m"; (cd $$m && $(GO) vet ./...); \
		echo "== staticcheck $$m"; (cd $$m && $(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...); \
	done

## fuzz: fuzz the log's interleavings against the model, then the Transport against a hostile upstream
## (FuzzUpstream), each for FUZZTIME.
fuzz:
	$(GO) test ./pkg/teebody -run '^$$' -fuzz '^FuzzTee$$' -fuzztime $(FUZZTIME)
	$(GO) test ./pkg/transport -run '^$$' -fuzz '^FuzzUpstream$$' -fuzztime $(FUZZTIME)

## fuzz-plants: show that FuzzUpstream's oracle can fail: fuzz each defect that -tags teebody_plant plants, from the
## empty input, for at most 5 minutes each, and print how long the search took to find it.
fuzz-plants:
	GO=$(GO) sh pkg/transport/testdata/plant.sh

## demo: the main job: the GOAWAY failure and its fix, five ways, against the embedded API server.
demo:
	@echo "make demo: building the demo (a first run downloads its modules and compiles them, a few minutes on 2 cores)..."
	cd cmd/demo && $(GO) run $(BUILDFLAGS) .

## bench: the out-of-process benchmark (the headline), the in-process benchmarks and the concurrency sweep,
## summarised with benchstat and bench/report into docs/BENCHMARKS.md and docs/sweep.svg (which record how long the run took).
bench:
	bash bench/run.sh

## e2e: build kube-apiserver and etcd into e2e/bin (only when the pins change; docs/E2E.md records a cold build),
## and Caddy with teebody's transport module (only when it or its sources change); run kube-aggregator's regression
## test on its stock source, where it must fail, and on the patched one, where it must pass
## (e2e/aggregator/regression.sh); build Traefik stock and patched, after its regression test failed on the first
## and passed on the second and its proxy's tests passed (e2e/build-traefik.sh, only when the patch, the library or
## Go change); then run the original GOAWAY experiment against them (TestE2E, Teleport's agent's chain among its
## subtests: docs/teleport.md), and the nginx, Caddy and Traefik experiments against a real nginx (skipped, loudly,
## when nginx is missing; in CI it fails instead), Go upstreams restarted in turn (TestRollingRestart), and
## Kubernetes' aggregator, stock and patched, before an aggregated API server (TestAggregator) (docs/E2E.md); logs
## and results in out/e2e.
e2e:
	@echo "make e2e: checking kube-apiserver and etcd (a first run downloads modules and builds both: 10 minutes or more on 2 cores)..."
	cd e2e && GO=$(GO) ./build.sh
	cd e2e && GO=$(GO) ./aggregator/regression.sh
	cd e2e && GO=$(GO) ./build-caddy.sh
	cd e2e && GO=$(GO) ./build-traefik.sh
	cd e2e && TEEBODY_E2E=1 $(GO) test -count=1 -v -timeout 40m -run '^(TestE2E|TestNginx|TestCaddy|TestRollingRestart|TestAggregator|TestTraefik)$$' . -args -out ../out/e2e

## goaway: the failure and the fix side by side through the transport, with the counts.
goaway:
	$(GO) test -race -count=1 -v -run 'TestReverseProxyGOAWAY|TestTransportGOAWAY|TestBudgetSpent' ./pkg/transport/

## gosuite: the Go toolchain's own net/http/httputil tests, copied from GOROOT at test time, with the transport as
## http.DefaultTransport (internal/gosuite/run.sh); first on the plain transport, then several times on ours, on
## the go on the PATH and on $(GO_NEXT). -timeout turns a hang into a failure.
gosuite:
	GO=$(GO) internal/gosuite/run.sh -plain -count=1 -timeout 120s
	GO=$(GO) internal/gosuite/run.sh -count=5 -timeout 300s
	GO=$(GO) internal/gosuite/run.sh -run '^TestReverseProxy_PanicClosesIncomingBody$$' -count=100 -timeout 300s
	GOTOOLCHAIN=$(GO_NEXT) GO=$(GO) internal/gosuite/run.sh -plain -count=1 -timeout 120s
	GOTOOLCHAIN=$(GO_NEXT) GO=$(GO) internal/gosuite/run.sh -count=5 -timeout 300s

## api: rewrite api/*.txt, the record of the exported API of each public module (the root, contrib/*), after an
## intended change of it; the change also needs a line in CHANGELOG.md.
api:
	cd internal/tools && GOWORK=off $(GO) run ./cmd/apirecord -repo ../.. -w

## apicheck: fail if the exported API of a public module differs from its record in api/ (CI runs it).
apicheck:
	cd internal/tools && GOWORK=off $(GO) run ./cmd/apirecord -repo ../..

## modcheck: serve the public modules at HEAD, and the versions of each other they require (from the git history;
## a shallow clone that lacks them fails and says what to fetch), from a file-based module proxy; then, in scratch
## modules outside the repository with GOWORK=off and no replace, go get, build and run each as a user would.
modcheck:
	cd internal/tools && GOWORK=off $(GO) run ./cmd/modcheck -repo ../..

## modpin: in every go.mod of the repository, require the public modules at HEAD's version (run on a commit of
## main, then commit), so that each requires a version that exists and none falls below what a contrib module needs.
modpin:
	cd internal/tools && GOWORK=off $(GO) run ./cmd/modcheck -repo ../.. -pin

tidy:
	@set -e; for m in $(MODULES); do (cd $$m && $(GO) mod tidy); done
