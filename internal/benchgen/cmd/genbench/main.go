// Command genbench writes the benchmark corpus of package benchgen into a
// new directory and prints what it wrote:
//
//	genbench -out DIR -size 1GB -files 200 -bigline 300MB -seed 1
//
// Sizes take units: 4096, 100MB (10^8 bytes), 512KiB. With -stamp it
// prints the stamp the corpus for those options would carry, and writes
// nothing: scripts/bench.sh compares it with DIR/stamp to decide whether to
// generate the corpus again.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/transcript-tool/transcript-tool/inspect"
	"github.com/transcript-tool/transcript-tool/internal/benchgen"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("genbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "directory to create and write the corpus into")
	size := fs.String("size", "1GB", "total size of the session files")
	files := fs.Int("files", 200, "number of session files")
	bigLine := fs.String("bigline", "300MB", "length of the line of bigline/big.jsonl; 0: no such file")
	seed := fs.Uint64("seed", 1, "seed of the corpus")
	stamp := fs.Bool("stamp", false, "print the corpus's stamp and write nothing")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	o := benchgen.Options{Seed: *seed, Files: *files}
	var err error
	if o.Size, err = inspect.ParseSize(*size); err != nil {
		return fail(stderr, 2, fmt.Errorf("-size: %w", err))
	}
	if o.BigLine, err = inspect.ParseSize(*bigLine); err != nil {
		return fail(stderr, 2, fmt.Errorf("-bigline: %w", err))
	}
	if *stamp {
		fmt.Fprintln(stdout, benchgen.Stamp(o))
		return 0
	}
	if *out == "" || fs.NArg() > 0 {
		return fail(stderr, 2, fmt.Errorf("usage: genbench -out DIR [-size SIZE] [-files N] [-bigline SIZE] [-seed N]"))
	}
	st, err := benchgen.Generate(*out, o)
	if err != nil {
		return fail(stderr, 1, err)
	}
	fmt.Fprintln(stdout, st)
	return 0
}

func fail(stderr io.Writer, code int, err error) int {
	fmt.Fprintln(stderr, "genbench: error:", err)
	return code
}
