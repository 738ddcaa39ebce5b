// Command transcript-tool shrinks agent session transcripts by moving large
// inline payloads into a content-addressed artifact store, and reads them
// back exactly.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	tuneMemory()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
