// Command transcript-tool shrinks agent session transcripts by moving large
// inline payloads into a content-addressed artifact store, and reads them
// back exactly.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
)

// memoryLimit is the Go heap's soft limit unless GOMEMLIMIT sets another:
// the garbage collector works harder near it instead of letting the heap
// double, so that a run over transcripts with lines of megabytes stays
// near 64 MiB of memory (README, Benchmarks). A run whose live data needs
// more takes more: the limit is soft.
const memoryLimit = 48 << 20

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
