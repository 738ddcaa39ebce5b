// Command transcript-tool shrinks agent session transcripts by moving large
// inline payloads into a content-addressed artifact store, and reads them
// back exactly.
package main

import (
	"context"
	"math"
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

// holdMore is for a command whose live data grows with the store, not
// with a line: ls keeps every artifact of the registry to sort them (a
// million take some 250 MB, kept compact, see listing). Near the soft
// limit the collector would run back to back for nothing it can free;
// instead the limit goes, unless GOMEMLIMIT set it, and the collector
// runs when the heap has grown by a quarter, for a peak near 1.25 times
// the live data.
func holdMore() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(math.MaxInt64)
		if os.Getenv("GOGC") == "" {
			debug.SetGCPercent(25)
		}
	}
}

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
