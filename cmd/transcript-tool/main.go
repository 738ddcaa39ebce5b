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
// near 64 MiB of memory (README, Benchmarks): the binary's own code and
// data (sonic's, the AWS SDK's) take some 23 MB more. On the bench's 1 GB
// corpus, whose live heap stays near 19 MB, 40 MiB costs no more CPU than
// 48 and peaks 7 MB lower. A run whose live data needs more takes more:
// the limit is soft.
const memoryLimit = 40 << 20

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
