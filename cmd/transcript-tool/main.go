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

// gcPercent is the Go collector's GOGC unless GOGC or GOMEMLIMIT says
// otherwise: the heap may grow by half its live data between collections,
// not double, so that a run over transcripts with lines of megabytes
// stays near 64 MiB of memory (README, Benchmarks; the binary's own code
// and data, sonic's and the AWS SDK's, take some 23 MB of it). A soft
// memory limit would bound the heap more tightly, but a run whose live
// data outgrows it (per-file results of 100,000 sessions, a big registry)
// then collects without end: with a 40 MiB limit, a folder of 100,000
// sessions spent more than half its CPU in the collector, where GOGC=50
// migrated it at the per-file cost of a folder of 1,000 (1.1 ms a file).
const gcPercent = 50

// holdMore is for a command whose live data grows with the store, not
// with a line: ls keeps every artifact of the registry to sort them (a
// million take some 250 MB, kept compact, see listing). Unless GOGC or
// GOMEMLIMIT says otherwise, the collector runs when the heap has grown by
// a quarter of it, not half, for a peak near 1.25 times the live data.
func holdMore() {
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetGCPercent(25)
	}
}

func main() {
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetGCPercent(gcPercent)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
