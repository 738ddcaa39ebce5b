package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/transcript-tool/transcript-tool/internal/reggen"
	"github.com/transcript-tool/transcript-tool/internal/testsession"
)

var update = flag.Bool("update", false, "rewrite the expected outputs in testdata/script from the actual ones")

// cliArgsEnv, set to a JSON array of arguments, makes the test binary
// run the command line with them instead of the tests: the process that
// TestSoakS3Kill kills.
const cliArgsEnv = "TT_CLI_ARGS"

func TestMain(m *testing.M) {
	if args := os.Getenv(cliArgsEnv); args != "" {
		var a []string
		if err := json.Unmarshal([]byte(args), &a); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(run(context.Background(), append([]string{"transcript-tool"}, a...), os.Stdin, os.Stdout, os.Stderr))
	}
	testscript.Main(m, map[string]func(){
		"transcript-tool": func() { os.Exit(run(context.Background(), os.Args, os.Stdin, os.Stdout, os.Stderr)) },
		"ocgateway":       func() { os.Exit(ocgateway()) },
	})
}

func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		UpdateScripts:       *update,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"gensession":  cmdGensession,
			"genpayload":  cmdGenpayload,
			"exits":       cmdExits,
			"genregistry": cmdGenregistry,
			"genopenclaw": cmdGenopenclaw,
			"ocrows":      cmdOcrows,
			"ocappend":    cmdOcappend,
			"waitfile":    cmdWaitfile,
		},
	})
}

// cmdGensession writes a pi session: gensession FILE N [SIZE [ID]] writes
// N tool results of SIZE (default 5000) bytes of text each, in a session
// whose id is ID (default FILE).
func cmdGensession(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 4 {
		ts.Fatalf("usage: gensession FILE N [SIZE [ID]]")
	}
	n := atoi(ts, args[1])
	size := 5000
	if len(args) >= 3 {
		size = atoi(ts, args[2])
	}
	id := args[0]
	if len(args) == 4 {
		id = args[3]
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), testsession.Pi(id, n, size), 0o644))
}

// cmdGenregistry adds to a store a segment of N synthetic records (see
// package reggen): genregistry STORE N.
func cmdGenregistry(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: genregistry STORE N")
	}
	dir := filepath.Join(ts.MkAbs(args[0]), "registry")
	ts.Check(os.MkdirAll(dir, 0o700))
	f, err := os.OpenFile(filepath.Join(dir, "20200101T000000.000000000Z_gen_1_1.jsonl"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	ts.Check(err)
	ts.Check(reggen.Write(f, atoi(ts, args[1])))
	ts.Check(f.Close())
}

// cmdGenpayload writes the text of one tool result of a generated
// session: genpayload FILE I [SIZE].
func cmdGenpayload(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: genpayload FILE I [SIZE]")
	}
	size := 5000
	if len(args) == 3 {
		size = atoi(ts, args[2])
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(testsession.Text(atoi(ts, args[1]), size)), 0o644))
}

// cmdExits runs a program and checks its exit status, which exec cannot:
// exits STATUS PROGRAM [ARGS...]. Its output is then checked with stdout
// and stderr as after exec.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits STATUS PROGRAM [ARGS...]")
	}
	want := atoi(ts, args[0])
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("%s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}

func atoi(ts *testscript.TestScript, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		ts.Fatalf("%q is not a count", s)
	}
	return n
}
