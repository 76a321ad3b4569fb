# knowmind — the front door. `make run` and `make test` are all a newcomer needs.
DGRAPH_VERSION := v25.2.0
DGRAPH := bin/dgraph
GO ?= go

.PHONY: bench-conflicts run test test-docker docker-compose bench bench-locomo bench-german bench-speed bench-tenants dgraph build build-bench clean-data lint ui-vendor fuzz attack kill9 crashloop

## run: build what is missing and start the service with its own local Dgraph
run: $(DGRAPH) build
	bin/knowmind serve $(ARGS)

## test: all tests (starts throwaway Dgraph processes on loopback)
test: $(DGRAPH)
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 20m ./...

## attack: the full cross-tenant suite (issue 13) and the scope table in every spelling (issue 34): crafted attempts on tenant A, counts printed
attack: $(DGRAPH)
	KNOWMIND_ATTACK=1 KNOWMIND_DGRAPH_BIN=$(CURDIR)/$(DGRAPH) $(GO) test -count=1 -timeout 15m -v -run 'TestCrossTenant' ./handlers/

## kill9: SIGKILL the alpha, then the service, KILL9_ROUNDS times each during a stream of writes; counts printed
KILL9_ROUNDS ?= 5
kill9: $(DGRAPH)
	KNOWMIND_KILL9_ROUNDS=$(KILL9_ROUNDS) KNOWMIND_DGRAPH_BIN=$(CURDIR)/$(DGRAPH) $(GO) test -count=1 -timeout 30m -v -run 'TestKill9' ./cmd/knowmind/

## crashloop: a poisoned commit crash-loops a throwaway alpha for real; the supervisor stops it and the documented recovery brings it back
crashloop: $(DGRAPH)
	KNOWMIND_CRASHLOOP=1 KNOWMIND_DGRAPH_BIN=$(CURDIR)/$(DGRAPH) $(GO) test -count=1 -timeout 15m -v -run 'TestPoisonedWriteRecovery' ./graph/localdgraph/

## fuzz: every Go fuzz target for FUZZTIME each (their seed corpora run in `make test`); FuzzWritePath writes into a real Dgraph
FUZZTIME ?= 1m
# FuzzWritePath counts inputs, not time: a write of up to 200 KB takes seconds, and a time limit
# that ends during one fails the run ("context deadline exceeded").
FUZZWRITES ?= 60
fuzz: $(DGRAPH)
	$(GO) test -run '^$$' -fuzz '^FuzzSplit$$' -fuzztime $(FUZZTIME) ./chunk/
	$(GO) test -run '^$$' -fuzz '^FuzzGuardBound$$' -fuzztime $(FUZZTIME) ./graph/
	KNOWMIND_DGRAPH_BIN=$(CURDIR)/$(DGRAPH) $(GO) test -run '^$$' -fuzz '^FuzzWritePath$$' -fuzztime $(FUZZWRITES)x -parallel 1 ./graph/
	$(GO) test -run '^$$' -fuzz '^FuzzAnalyze$$' -fuzztime $(FUZZTIME) ./bm25/
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./shapes/
	$(GO) test -run '^$$' -fuzz '^FuzzToolParams$$' -fuzztime $(FUZZTIME) ./handlers/
	$(GO) test -run '^$$' -fuzz '^FuzzJSONRPC$$' -fuzztime $(FUZZTIME) ./handlers/

## test-docker: the compose stacks on a real Docker engine (needs a running dockerd; .ci/dockerd start)
test-docker: $(DGRAPH) bin/docker-compose
	KNOWMIND_TEST_DOCKER=1 TESTCONTAINERS_RYUK_DISABLED=true KNOWMIND_DGRAPH_BIN=$(CURDIR)/$(DGRAPH) \
		$(GO) test -count=1 -timeout 40m -v -run 'TestDockerCompose|TestComposeStackUp' ./deploy/

## bench: Go benchmarks (see README "Benchmarks" for workloads); BENCHTIME=5s for steadier rates
BENCHTIME ?= 2s
bench: $(DGRAPH)
	$(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) ./...

## bench-locomo: retrieval quality on the LoCoMo dev split (recall@k, MRR, ablations)
LOCOMO ?= ../shared/data/locomo/locomo-dev.json
bench-locomo: $(DGRAPH) build-bench
	bin/knowmind-bench locomo --data $(LOCOMO)

## bench-german: retrieval quality on the German check (bench/german; recall@k, MRR, ablations, off-topic)
bench-german: $(DGRAPH) build-bench
	bin/knowmind-bench german

## bench-conflicts: conflict pairs through the service on a real Dgraph (old fact by store_memory,
## new one by capture and by store_memory), the comparator and the entity sets alone; tables per kind and language
bench-conflicts: $(DGRAPH)
	@bash -o pipefail -c "KNOWMIND_EVAL_PRINT=1 $(GO) test -count=1 -v -run 'TestEval|TestEntitySet' ./conflict/ ./extract/ | grep -v '^    \|^=== RUN'"
	@bash -o pipefail -c "KNOWMIND_BENCH_CONFLICTS=1 KNOWMIND_DGRAPH_BIN=$(CURDIR)/$(DGRAPH) $(GO) test -count=1 -v -run 'TestBenchConflicts' ./handlers/ | grep -v '^    \|^=== RUN'"

## bench-speed: recall latency/throughput at N synthetic memories, vs the same DQL sent directly
N ?= 10000
bench-speed: $(DGRAPH) build-bench
	bin/knowmind-bench speed --n $(N)

## bench-tenants: TENANTS small tenants of PER memories + BIG of BIGN in one service under --index-memory-mb INDEXMB (hot p95, cold first recall from snapshots, RSS)
TENANTS ?= 60
PER ?= 200
BIG ?= 2
BIGN ?= 5000
INDEXMB ?= 64
bench-tenants: $(DGRAPH) build-bench
	bin/knowmind-bench tenants --tenants $(TENANTS) --per $(PER) --big $(BIG) --big-n $(BIGN) --index-memory-mb $(INDEXMB)

## build: the service binary
build:
	$(GO) build -o bin/knowmind ./cmd/knowmind

## build-bench: the benchmark command (bench-locomo, bench-speed; knowmind-bench import beside bin/knowmind)
build-bench:
	$(GO) build -o bin/knowmind-bench ./cmd/knowmind-bench

## dgraph: build Dgraph $(DGRAPH_VERSION) from the Go module proxy (cached)
dgraph: $(DGRAPH)
$(DGRAPH): deploy/dgraph/go.mod deploy/dgraph/tools.go
	cd deploy/dgraph && $(GO) build -o ../../$(DGRAPH) github.com/dgraph-io/dgraph/v25/dgraph
	@touch $(DGRAPH)

## docker-compose: build Docker Compose $(COMPOSE_VERSION) from the Go module proxy (cached; for test-docker)
COMPOSE_VERSION := v2.40.3
docker-compose: bin/docker-compose
bin/docker-compose: deploy/compose/go.mod deploy/compose/tools.go
	cd deploy/compose && $(GO) build -trimpath -ldflags="-s -w -X github.com/docker/compose/v2/internal.Version=$(COMPOSE_VERSION)" \
		-o ../../bin/docker-compose github.com/docker/compose/v2/cmd
	@touch bin/docker-compose

## ui-vendor: refresh the explorer's vendored cytoscape.js (minified, licence, version) from npm
CYTOSCAPE_VERSION ?= 3.35.0
ui-vendor:
	ui/vendor.sh $(CYTOSCAPE_VERSION)

## lint: go vet and staticcheck (built from the Go module proxy at a pinned version, cached; config in staticcheck.conf)
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint:
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

clean-data:
	rm -rf data
