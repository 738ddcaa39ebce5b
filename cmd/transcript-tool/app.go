package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"
)

// Exit statuses.
const (
	exitOK       = 0
	exitProblems = 1 // the command ran and found problems
	exitUsage    = 2 // usage error, or nothing could be done
)

// exitError is an error with the exit status it causes and an optional
// hint for the user.
type exitError struct {
	code int
	err  error
	hint string
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

func fatal(err error, hint string) error { return &exitError{code: exitUsage, err: err, hint: hint} }

// problems is returned by commands that ran but found problems; the
// problems themselves have already been reported.
var problems = &exitError{code: exitProblems, err: errors.New("problems found")}

// streams are the command's standard streams, passed in so tests can
// capture them.
type streams struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// remote holds what the command line's transcripts in S3 need.
	remote *remote
}

func (s streams) errorf(format string, args ...any) {
	fmt.Fprintf(s.stderr, "transcript-tool: error: "+format+"\n", args...)
}

func (s streams) warnf(format string, args ...any) {
	fmt.Fprintf(s.stderr, "transcript-tool: warning: "+format+"\n", args...)
}

// globalFlags returns the flags of every command, given before the
// command or anywhere after it (see normalizeArgs). New flags for each
// command line: parsing writes into them.
func globalFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "progress", Value: "auto", Usage: "progress bar on stderr: `WHEN`: auto (only on a terminal), always or never",
			Action: func(_ *cli.Context, mode string) error {
				switch mode {
				case "auto", "always", "never":
					return nil
				}
				return usageErr("--progress must be auto, always or never, not %q", mode)
			}},
	}, profileFlags...)
}

// commands are the constructors of the commands, in the order of the
// help text.
var commands = []func(streams) *cli.Command{
	migrateCommand,
	rehydrateCommand,
	catCommand,
	lsCommand,
	recallCommand,
	verifyCommand,
	gcCommand,
	checkCommand,
	statsCommand,
	showCommand,
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	rem := &remote{}
	defer rem.close()
	st := streams{stdin: stdin, stdout: stdout, stderr: stderr, remote: rem}
	var stopProfiles func() error
	app := &cli.App{
		Name:           "transcript-tool",
		Usage:          "shrink agent session transcripts into a content-addressed artifact store, and restore them exactly",
		Writer:         stdout,
		ErrWriter:      stderr,
		Reader:         stdin,
		Version:        version(),
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return usageError(err, c.App.Flags, "")
		},
		Flags: globalFlags(),
		Before: func(c *cli.Context) (err error) {
			stopProfiles, err = startProfiles(c)
			return err
		},
		// Reached without a command or with an unknown one; urfave/cli
		// would otherwise print the help and exit 0, or exit 3.
		Action: func(c *cli.Context) error {
			hint := "usage: transcript-tool [global flags] COMMAND [flags] PATH...; transcript-tool help lists the commands"
			if c.NArg() == 0 {
				return &exitError{code: exitUsage, err: errors.New("no command given"), hint: hint}
			}
			var names []string
			for _, cmd := range c.App.Commands {
				names = append(names, cmd.Names()...)
			}
			if s := closest(c.Args().First(), names); s != "" {
				hint = fmt.Sprintf("did you mean %q?", s)
			}
			return &exitError{code: exitUsage, err: fmt.Errorf("unknown command %q", c.Args().First()), hint: hint}
		},
	}
	for _, newCommand := range commands {
		c := newCommand(st)
		// urfave/cli consults only a command's own OnUsageError for its
		// flags; without one it prints "Incorrect Usage" and the help.
		c.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
			return usageError(err, append(c.Flags, app.Flags...), c.Name)
		}
		app.Commands = append(app.Commands, c)
	}
	plainDefaults(app.Flags)
	for _, c := range app.Commands {
		plainDefaults(c.Flags)
	}
	args, err := normalizeArgs(app, args)
	if err == nil {
		err = app.RunContext(ctx, args)
	}
	if stopProfiles != nil {
		if perr := stopProfiles(); err == nil {
			err = perr
		}
	}
	code := exitCode(st, err)
	if code == exitOK && rem.failures() > 0 {
		code = exitProblems // objects that were not fetched, reported by collect
	}
	return code
}

// plainDefaults makes the help show defaults as people write them: none
// for a boolean flag (it is off unless given), a string flag's unquoted.
func plainDefaults(flags []cli.Flag) {
	for _, f := range flags {
		switch f := f.(type) {
		case *cli.BoolFlag:
			f.DisableDefaultText = true
		case *cli.StringFlag:
			if f.DefaultText == "" {
				f.DefaultText = f.Value
			}
		}
	}
}

// version returns the version of this build: the module's version for a
// binary built by go install, else the commit it was built from (with
// "+dirty" for uncommitted changes), as the Go toolchain records them.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := info.Main.Version
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if (v == "" || v == "(devel)") && rev != "" {
		return "devel " + rev[:min(12, len(rev))] + dirty
	}
	if v == "" {
		return "unknown"
	}
	return v
}

// exitCode reports err on stderr and maps it to an exit status.
func exitCode(st streams, err error) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if !errors.As(err, &ee) {
		// Errors urfave/cli returns itself are about the command line.
		ee = &exitError{code: exitUsage, err: err}
	}
	if ee != problems {
		st.errorf("%v", ee.err)
		if ee.hint != "" {
			fmt.Fprintf(st.stderr, "hint: %s\n", ee.hint)
		}
	}
	return ee.code
}

// progressBar is a progress bar over a number of bytes, or nothing when
// progress is off.
type progressBar struct{ bar *progressbar.ProgressBar }

func (p *progressBar) Add(n int64) {
	if p != nil && p.bar != nil {
		_ = p.bar.Add64(n)
	}
}

func (p *progressBar) finish() {
	if p != nil && p.bar != nil {
		_ = p.bar.Finish()
		_ = p.bar.Exit()
	}
}

// newProgress returns a byte progress bar on stderr according to the
// global --progress flag: by default only when stderr is a terminal.
func newProgress(c *cli.Context, st streams, total int64, what string) (*progressBar, error) {
	mode := c.String("progress")
	show := false
	switch mode {
	case "auto":
		show = isTerminal(st.stderr)
	case "always":
		show = true
	case "never":
	default:
		return nil, usageErr("--progress must be auto, always or never, not %q", mode)
	}
	if !show {
		return &progressBar{}, nil
	}
	bar := progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(st.stderr),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowBytes(true),
		progressbar.OptionThrottle(100_000_000),
		progressbar.OptionClearOnFinish(),
		// Drawn empty at once, the bar's first frame with bytes comes a
		// throttle's time later: drawn on the first Add, it showed a rate
		// of that Add over microseconds ("420 GB/s").
		progressbar.OptionSetRenderBlankState(true),
	)
	return &progressBar{bar: bar}, nil
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// terminalWidth returns the width in columns of the terminal w is, or 0
// when it is none.
func terminalWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return 0
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return width
}

// requireArgs checks that a command got at least one PATH.
func requireArgs(c *cli.Context, what string) ([]string, error) {
	if c.NArg() == 0 {
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("%s: no %s given", c.Command.Name, what),
			hint: "usage: transcript-tool " + c.Command.Name + " [flags] " + strings.ToUpper(what) + "..."}
	}
	return c.Args().Slice(), nil
}
