package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/transcript-tool/transcript-tool/externalizer"
	"github.com/transcript-tool/transcript-tool/format"
	"github.com/transcript-tool/transcript-tool/internal/display"
	"github.com/transcript-tool/transcript-tool/recall"
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/session"
)

func recallCommand(st streams) *cli.Command {
	d := recall.DefaultOptions
	return &cli.Command{
		Name:      "recall",
		Usage:     "print the bounded artifact-recall section of one session, for an agent's prompt",
		ArgsUsage: "SESSION [PATH...]",
		Description: "SESSION is a transcript file, or a session's id or the start of one, looked for in the\n" +
			"PATHs or, without them, in the agents' session folders:\n\n" +
			"  " + strings.Join(format.SessionFolders(), "\n  ") + "\n\n" +
			"The section is a fixed header that says how to print an\n" +
			"artifact, a narrative (session id, format, number of entries, time span, tool calls by\n" +
			"name, number and total size of artifacts, and the last user request shortened), and\n" +
			"one line per artifact, most recently referenced first: its 12-character id prefix,\n" +
			"tool, size, a summary of its bytes (read from the store and checked against its hash)\n" +
			"and its path.\n\n" +
			"All lengths are Unicode code points (characters), newlines included. The markdown\n" +
			"text is never longer than --max-chars and lists at most --max-items artifacts, chosen\n" +
			"newest first while they fit; the narrative is never longer than --narrative-max-chars.\n" +
			"With --format json the same section comes as fields (header, narrative, items, omitted,\n" +
			"text, length); the budget bounds its markdown text, not the JSON document.\n" +
			"The output depends only on the transcript, the store and the flags.",
		Flags: []cli.Flag{
			storeFlag(),
			&cli.IntFlag{Name: "max-items", Value: d.MaxItems, Usage: "list at most `N` artifacts"},
			&cli.IntFlag{Name: "max-chars", Value: d.MaxChars, Usage: "the whole text in at most `N` characters (code points)"},
			&cli.IntFlag{Name: "narrative-max-chars", Value: d.NarrativeMaxChars, Usage: "the narrative in at most `N` characters (code points)"},
			&cli.StringFlag{Name: "format", Value: "markdown", Usage: "output `FORMAT`: markdown or json"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return &exitError{code: exitUsage, err: errors.New("recall: no SESSION given"),
					hint: "usage: transcript-tool recall [flags] SESSION [PATH...]"}
			}
			opts := recall.Options{MaxItems: c.Int("max-items"), MaxChars: c.Int("max-chars"), NarrativeMaxChars: c.Int("narrative-max-chars")}
			if opts.MaxItems < 0 || opts.MaxChars < 0 || opts.NarrativeMaxChars < 0 {
				return usageErr("--max-items, --max-chars and --narrative-max-chars must not be negative")
			}
			format := c.String("format")
			if format != "markdown" && format != "json" {
				return usageErr("--format must be markdown or json, not %q", format)
			}
			in, err := findSession(c.Context, st, c.Args().First(), c.Args().Tail())
			if err != nil {
				return err
			}
			return runRecall(c.Context, st, in, c.String("store"), format, opts)
		},
	}
}

func runRecall(ctx context.Context, st streams, in session.Input, storeDir, format string, opts recall.Options) error {
	store, err := openStore(session.StoreFor(cmp.Or(storeDir, in.Store), in.Path))
	if err != nil {
		return err
	}
	s, err := scanSession(in, "", store.Opener(ctx))
	if err != nil {
		return fatal(err, "recall reads transcripts of the formats "+formatNames())
	}
	path := in.Name()
	s.Source = registry.SourcePath(path)
	for _, sub := range session.Subagents(in.Path) {
		ss, err := scanSession(session.Input{Path: sub}, "", store.Opener(ctx))
		if err != nil {
			return fatal(err, "")
		}
		s.AddSubagent(ss)
	}
	if err := storeMissing(store.Dir()); err != nil && len(s.Refs) > 0 {
		st.warnf("no artifact store at %s: the %s of %s cannot be read", store.Dir(), display.Plural(len(s.Refs), "artifact"), path)
	}
	sec, err := recall.Build(ctx, s, store, opts, func(e *registry.BadLineError) { st.warnf("%v", e) })
	if err != nil {
		return fatal(fmt.Errorf("read registry: %w", err), "")
	}
	if format == "json" {
		if sec.Items == nil {
			sec.Items = []recall.Item{}
		}
		return writeJSON(st.stdout, sec)
	}
	_, err = fmt.Fprint(st.stdout, sec.Text)
	return err
}

// scanSession reads the transcript in for recall, its session id
// included.
func scanSession(in session.Input, format string, open externalizer.Opener) (*recall.Session, error) {
	t, err := session.OpenInput(in, format)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	if t.Format == "" {
		return nil, fmt.Errorf("%s: %w", t.Name, session.ErrUnknownFormat)
	}
	s, err := recall.ScanLines(t.NewReader(), t.Format, open, skeletons(t))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", t.Name, err)
	}
	s.ID = t.Session
	return s, nil
}
