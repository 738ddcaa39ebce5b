# transcript-tool: see README.md.
GO          ?= go
BIN         := bin/transcript-tool
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
FUZZTIME    ?= 30s

.PHONY: build test soak lint bench gobench fuzz demo memcheck memcheck-s3 clean agents

build:
	$(GO) build -buildvcs=auto -o $(BIN) ./cmd/transcript-tool

# The transcript package, and the externalizer and describers over it,
# again in the purego build: the scanner's Go form, which other
# platforms run.
test:
	$(GO) test -race -count=1 -timeout 30m ./...
	$(GO) test -race -count=1 -tags purego ./transcript/ ./externalizer/ ./summary/

# Peak memory of migrate and rehydrate of a line of MEMLINE_S3 bytes whose
# payload goes to S3, and of ls and cat of a registry of REGISTRY_S3
# records in a bucket: a versitygw on loopback (see .ci/run), started for
# the run.
MEMLINE_S3 ?= 1000000000
REGISTRY_S3 ?= 1000000
memcheck-s3: build
	./scripts/memcheck-s3.sh $(BIN) $(MEMLINE_S3) $(REGISTRY_S3)

# The agents the end-to-end tests in e2e/ drive (Claude Code, Codex, pi
# under both package names, OpenClaw, Gemini CLI, Qwen Code, Copilot CLI)
# and the Node releases they need, installed from npm into AGENTS_DIR,
# outside the repository (default ~/.cache/transcript-tool/agents): the
# pinned versions, or with AGENTS=latest the newest that install today,
# which the e2e tests then run against as well. Without the pinned ones
# those tests skip.
AGENTS ?= pinned
agents:
	./scripts/agents.sh $(AGENTS)

# The long fault-injection and crash runs: every errno at every file
# operation, crash sweeps of more trees, and 500 SIGKILLs at random times
# of larger runs (TT_SOAK_SEED=N repeats one); 500 rewrites in place of
# a transcript another process appends to every millisecond; 5000 rounds
# of each gc scenario of fsck (gc racing migrate, a moved tree) on a local
# store, 500 through each S3 server; and 25 SIGKILLs at random times of an
# in-bucket migrate (transcripts and store in S3, on gofakes3 and
# versitygw), each run again after, which must leave no temporary in
# $TMPDIR, the bucket or the store, and lose no byte. Prints the figures,
# the whole log on failure.
soak:
	@log=$$(mktemp) && trap 'rm -f "$$log"' EXIT && \
	TT_SOAK=1 $(GO) test -race -count=1 -timeout 60m -run 'Fault|Crash|Soak|^TestGC' -v ./migrate ./fsck >"$$log" 2>&1 && \
	TT_SOAK=1 $(GO) test -race -count=1 -timeout 60m -run '^TestSoak' -v ./cmd/transcript-tool >>"$$log" 2>&1; st=$$?; \
	if [ $$st -eq 0 ]; then grep -E '^(ok|--- )|faults injected|crash points|runs killed|whole run|no artifact lost|lines appended|SOAK_SEED' "$$log"; \
	else grep -v -E '^=== (RUN|PAUSE|CONT|NAME)|^    --- PASS' "$$log"; fi; exit $$st

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	GOOS=darwin $(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

# The whole-corpus benchmark: generates (once, cached in BENCH_DIR) a
# corpus of BENCH_SIZE bytes, a real-shaped Claude Code project folder and
# two folders of many sessions; measures migrate, rehydrate and check next
# to cp, jq and SHA-256, migrate on the real-shaped folder and on
# ../shared/corpus (when present) next to SHA-256 in two processes, and
# migrate, check --store, verify, rehydrate and gc per file on the two
# folders; and writes the tables into README.md. Knobs: BENCH_DIR,
# BENCH_SIZE, BENCH_FILES, BENCH_BIGLINE, BENCH_CC_SESSIONS, BENCH_SHARED,
# BENCH_SHARED_COPIES, BENCH_FOLDER_SMALL, BENCH_FOLDER_LARGE, REPS (see
# the script).
bench: build
	BENCH_README=1 GO=$(GO) ./scripts/bench.sh $(BIN)

# The Go benchmarks of every package.
gobench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...

# Each fuzz target in turn; FUZZTIME=10m for a long run.
fuzz:
	@for pkg in ./transcript ./externalizer ./summary ./recall ./registry; do \
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
# line and a torn last line, plain and zstd-compressed (big.jsonl.zst): of
# check, stats, migrate --dry-run and rehydrate reading it as it is (check
# exits 1 for its violations; rehydrate copies it back), then of migrate
# and of rehydrate restoring it; and of show and recall of the original.
# TMPDIR must have room for the line: a
# compressed transcript's long lines are kept there while they are read.
# Then the bounds of scripts/memcheck-bounds.sh, where the input would
# choose the memory: 8 rollouts declaring 128 MiB zstd windows at
# --jobs 8 (256 MiB), a registry line of 300 MB (REGLINE) under
# verify, ls, cat and recall, and a registry of 8 million lines that are
# not records (BADLINES) under ls and cat (64 MiB).
MEMLINE ?= 46000000
memcheck: build
	@dir=$$(mktemp -d) && trap 'rm -rf "$$dir"' EXIT && \
	$(GO) run ./internal/sessiongen/cmd/gensessions -bigline $(MEMLINE) -out $$dir/orig.jsonl && \
	$(GO) run ./internal/sessiongen/cmd/gensessions -bigline $(MEMLINE) -out $$dir/orig.jsonl.zst >/dev/null && \
	for f in big.jsonl big.jsonl.zst; do \
	cp $$dir/orig$${f#big} $$dir/$$f && \
	{ /usr/bin/time -f "$$f check: %M KiB peak RSS, %e s" $(BIN) --progress never check $$dir/$$f >/dev/null; [ $$? -eq 1 ]; } && \
	/usr/bin/time -f "$$f stats: %M KiB peak RSS, %e s" $(BIN) --progress never stats $$dir/$$f >/dev/null && \
	/usr/bin/time -f "$$f migrate --dry-run: %M KiB peak RSS, %e s" $(BIN) --progress never migrate --dry-run $$dir/$$f >/dev/null && \
	/usr/bin/time -f "$$f rehydrate as it is: %M KiB peak RSS, %e s" $(BIN) --progress never rehydrate $$dir/$$f | cmp - $$dir/orig.jsonl && \
	/usr/bin/time -f "$$f migrate: %M KiB peak RSS, %e s" $(BIN) --progress never migrate $$dir/$$f >/dev/null && \
	/usr/bin/time -f "$$f show: %M KiB peak RSS, %e s" $(BIN) --progress never show $$dir/orig$${f#big} >/dev/null && \
	/usr/bin/time -f "$$f recall: %M KiB peak RSS, %e s" $(BIN) --progress never recall $$dir/orig$${f#big} >/dev/null && \
	/usr/bin/time -f "$$f rehydrate: %M KiB peak RSS, %e s" $(BIN) --progress never rehydrate $$dir/$$f | cmp - $$dir/orig.jsonl && \
	echo "$$f round trip: identical" || exit 1; \
	done; \
	GO=$(GO) ./scripts/memcheck-bounds.sh $(BIN)
