// Command genbench writes a benchmark corpus of package benchgen into a
// new directory and prints what it wrote:
//
//	genbench -out DIR -size 1GB -files 200 -bigline 300MB -seed 1
//	genbench -project -out DIR -sessions 200 -calls 24 -distinct 256 -payload 16KB -subagents -seed 1
//
// The first writes the mixed corpus (benchgen.Generate); with -project,
// one Claude Code project folder whose sessions return the same few
// payloads many times (benchgen.GenerateProject). Sizes take units: 4096,
// 100MB (10^8 bytes), 512KiB. With -stamp it prints the stamp the corpus
// for those options would carry, and writes nothing: scripts/bench.sh
// compares it with DIR/stamp to decide whether to generate the corpus
// again.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/transcript-tool/transcript-tool/internal/benchgen"
	"github.com/transcript-tool/transcript-tool/internal/display"
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
	project := fs.Bool("project", false, "write one Claude Code project folder instead")
	sessions := fs.Int("sessions", 200, "-project: number of sessions")
	calls := fs.Int("calls", 24, "-project: mean number of tool calls of a session")
	distinct := fs.Int("distinct", 256, "-project: distinct files and command outputs the calls return")
	payload := fs.String("payload", "16KB", "-project: median size of a distinct payload")
	subagents := fs.Bool("subagents", false, "-project: every fourth session has a subagent transcript")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if !*stamp && (*out == "" || fs.NArg() > 0) {
		return fail(stderr, 2, fmt.Errorf("usage: genbench -out DIR [-size SIZE] [-files N] [-bigline SIZE] [-seed N]\n"+
			"       genbench -project -out DIR [-sessions N] [-calls N] [-distinct N] [-payload SIZE] [-subagents] [-seed N]"))
	}
	if *project {
		p := benchgen.Project{Seed: *seed, Sessions: *sessions, Calls: *calls, Distinct: *distinct, Subagents: *subagents}
		n, err := display.ParseSize(*payload)
		if err != nil {
			return fail(stderr, 2, fmt.Errorf("-payload: %w", err))
		}
		p.PayloadSize = int(min(n, 1<<30))
		if *stamp {
			fmt.Fprintln(stdout, benchgen.ProjectStamp(p))
			return 0
		}
		st, err := benchgen.GenerateProject(*out, p)
		if err != nil {
			return fail(stderr, 1, err)
		}
		fmt.Fprintln(stdout, st)
		return 0
	}
	o := benchgen.Options{Seed: *seed, Files: *files}
	var err error
	if o.Size, err = display.ParseSize(*size); err != nil {
		return fail(stderr, 2, fmt.Errorf("-size: %w", err))
	}
	if o.BigLine, err = display.ParseSize(*bigLine); err != nil {
		return fail(stderr, 2, fmt.Errorf("-bigline: %w", err))
	}
	if *stamp {
		fmt.Fprintln(stdout, benchgen.Stamp(o))
		return 0
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
