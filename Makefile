# transcript-tool: see README.md.
GO          ?= go
BIN         := bin/transcript-tool
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
FUZZTIME    ?= 30s

.PHONY: build test lint bench fuzz demo clean

build:
	$(GO) build -o $(BIN) ./cmd/transcript-tool

test:
	$(GO) test -race -count=1 ./...

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...

# Each fuzz target in turn; FUZZTIME=10m for a long run.
fuzz:
	@for pkg in ./transcript ./externalizer; do \
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
