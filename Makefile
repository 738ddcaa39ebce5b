# transcript-tool: see README.md.
GO          ?= go
BIN         := bin/transcript-tool
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
FUZZTIME    ?= 30s

.PHONY: build test soak lint bench gobench fuzz demo memcheck clean agents

build:
	$(GO) build -o $(BIN) ./cmd/transcript-tool

test:
	$(GO) test -race -count=1 ./...

# The pinned agents the end-to-end tests in e2e/ drive (Claude Code, Codex,
# pi), installed from npm into AGENTS_DIR, outside the repository (default
# ~/.cache/transcript-tool/agents). Without them those tests skip.
agents:
	./scripts/agents.sh

# The long fault-injection and crash runs: every errno at every file
# operation, crash sweeps of more trees, and 500 SIGKILLs at random times
# of larger runs (TT_SOAK_SEED=N repeats one). Prints the figures, the
# whole log on failure.
soak:
	@log=$$(mktemp) && trap 'rm -f "$$log"' EXIT && \
	TT_SOAK=1 $(GO) test -race -count=1 -timeout 60m -run 'Fault|Crash|Soak' -v ./migrate >"$$log" 2>&1; st=$$?; \
	if [ $$st -eq 0 ]; then grep -E '^(ok|--- )|faults injected|crash points|runs killed|whole run|SOAK_SEED' "$$log"; \
	else grep -v -E '^=== (RUN|PAUSE|CONT|NAME)|^    --- PASS' "$$log"; fi; exit $$st

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	GOOS=darwin $(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

# The whole-corpus benchmark: generates (once, cached in BENCH_DIR) a
# corpus of BENCH_SIZE bytes, measures migrate, rehydrate and check next to
# cp, jq and SHA-256, and writes the table into README.md. Knobs:
# BENCH_DIR, BENCH_SIZE, BENCH_FILES, BENCH_BIGLINE, REPS (see the script).
bench: build
	BENCH_README=1 GO=$(GO) ./scripts/bench.sh $(BIN)

# The Go benchmarks of every package.
gobench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...

# Each fuzz target in turn; FUZZTIME=10m for a long run.
fuzz:
	@for pkg in ./transcript ./externalizer ./recall; do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$t"; \
	    $(GO) test -run='^$$' -fuzz="^$$t$$" -fuzztime=$(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

# Migrate a temporary copy of the bundled example sessions, print the
# savings, and prove the round trip.
demo: build
	@./scripts/demo.sh $(BIN) testdata/sessions

clean:
	rm -rf bin

# Peak memory on a transcript with one line of MEMLINE bytes, a non-JSON
# line and a torn last line: of check, stats and rehydrate reading it as
# it is (check exits 1 for its violations; rehydrate copies it back), then
# of migrate and of rehydrate restoring it.
MEMLINE ?= 46000000
memcheck: build
	@dir=$$(mktemp -d) && trap 'rm -rf "$$dir"' EXIT && \
	$(GO) run ./internal/sessiongen/cmd/gensessions -bigline $(MEMLINE) -out $$dir/big.jsonl && \
	cp $$dir/big.jsonl $$dir/orig.jsonl && \
	{ /usr/bin/time -f "check: %M KiB peak RSS, %e s" $(BIN) --progress never check $$dir/orig.jsonl >/dev/null; [ $$? -eq 1 ]; } && \
	/usr/bin/time -f "stats: %M KiB peak RSS, %e s" $(BIN) --progress never stats $$dir/orig.jsonl >/dev/null && \
	/usr/bin/time -f "rehydrate as it is: %M KiB peak RSS, %e s" $(BIN) --progress never rehydrate $$dir/orig.jsonl | cmp - $$dir/orig.jsonl && \
	/usr/bin/time -f "migrate: %M KiB peak RSS, %e s" $(BIN) --progress never migrate $$dir/big.jsonl >/dev/null && \
	/usr/bin/time -f "rehydrate: %M KiB peak RSS, %e s" $(BIN) --progress never rehydrate $$dir/big.jsonl | cmp - $$dir/orig.jsonl && \
	echo "round trip: identical"
