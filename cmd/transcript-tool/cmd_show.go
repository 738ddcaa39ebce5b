package main

import (
	"cmp"
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/transcript-tool/transcript-tool/session"
	"github.com/transcript-tool/transcript-tool/show"
	"github.com/transcript-tool/transcript-tool/transcript"
)

type showOptions struct {
	store     string
	format    string
	rehydrate bool
	full      bool
	color     bool
}

func showCommand(st streams) *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "print a session as a person reads it",
		ArgsUsage: "SESSION [PATH...]",
		Description: "SESSION is a transcript file, or a session's id or the start of one, looked for in the\n" +
			"PATHs or, without them, in the agents' session folders (as for recall).\n" +
			"Each entry is shown with its time and role: the conversation's text, thinking and tool\n" +
			"calls on one line each, tool results cut to their first lines, images and migrated\n" +
			"payloads as one line each (artifact id, size, path). --rehydrate inlines migrated\n" +
			"payloads from the store; --full shows every text whole. Nothing is written.\n\n" +
			"Colours only on a terminal with --color auto, or with --color always, and\n" +
			"never when NO_COLOR is set.",
		Flags: []cli.Flag{
			storeFlag(),
			&cli.BoolFlag{Name: "rehydrate", Usage: "show migrated payloads from the store instead of their references"},
			&cli.BoolFlag{Name: "full", Usage: "show texts whole: thinking, tool arguments and results too"},
			&cli.StringFlag{Name: "color", Value: "auto", Usage: "colours: `WHEN`: auto (on a terminal, unless NO_COLOR is set), always or never"},
			inputFormatFlag(),
			formatAliasFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return &exitError{code: exitUsage, err: errors.New("show: no SESSION given"),
					hint: "usage: transcript-tool show [flags] SESSION [PATH...]"}
			}
			isTerm := false
			if f, ok := st.stdout.(*os.File); ok {
				isTerm = term.IsTerminal(int(f.Fd()))
			}
			color, err := colorFor(c.String("color"), os.Getenv("NO_COLOR"), os.Getenv("TERM"), isTerm)
			if err != nil {
				return err
			}
			opts := showOptions{store: c.String("store"), format: c.String("input-format"), rehydrate: c.Bool("rehydrate"),
				full: c.Bool("full"), color: color}
			in, err := findSession(c.Context, st, c.Args().First(), c.Args().Tail())
			if err != nil {
				return err
			}
			return runShow(st, in, opts)
		},
	}
}

// colorFor decides whether output is coloured: never when NO_COLOR is set
// to anything but the empty string (https://no-color.org); otherwise
// --color always or never as said, and auto only on a terminal that is not
// dumb.
func colorFor(mode, noColor, termName string, isTerminal bool) (bool, error) {
	switch mode {
	case "always", "never", "auto":
	default:
		return false, usageErr("--color must be auto, always or never, not %q", mode)
	}
	// NO_COLOR wins over everything, --color always included: a user who
	// set it never wants escape codes (issue #4).
	if noColor != "" {
		return false, nil
	}
	switch mode {
	case "always":
		return true, nil
	case "never":
		return false, nil
	}
	return isTerminal && termName != "dumb", nil
}

func runShow(st streams, in session.Input, opts showOptions) error {
	t, err := session.OpenInput(in, opts.format)
	if err != nil {
		return fatal(err, "")
	}
	path := t.Name
	defer t.Close()
	if t.Format == "" {
		st.warnf("%s: no known transcript format; its entries are shown as notes", path)
		fmt.Fprintf(st.stderr, "hint: name the format with --input-format %s\n", formatNames())
	}
	store, err := openStore(session.StoreFor(cmp.Or(opts.store, in.Store), in.Path))
	if err != nil {
		return err
	}
	failed := 0
	err = show.RenderLines(st.stdout, t.NewReader(), show.Options{
		Format:    t.Format,
		Store:     store,
		Rehydrate: opts.rehydrate,
		Full:      opts.full,
		Color:     opts.color,
		Problem: func(l transcript.Line, err error) {
			failed++
			st.errorf("%v", &transcript.InputError{Path: path, Line: l.Num, Offset: l.Offset, Err: err})
		},
		Long: skeletons(t),
	})
	if err != nil {
		return &exitError{code: exitProblems, err: fmt.Errorf("show %s: %w", path, err)}
	}
	if failed > 0 {
		return problems
	}
	return nil
}
