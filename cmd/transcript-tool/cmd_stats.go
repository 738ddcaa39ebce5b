package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/transcript-tool/transcript-tool/inspect"
	"github.com/transcript-tool/transcript-tool/internal/display"
	"github.com/transcript-tool/transcript-tool/store/location"
)

func statsCommand(st streams) *cli.Command {
	return &cli.Command{
		Name:      "stats",
		Usage:     "report where the bytes of transcripts are and what migrate would save",
		ArgsUsage: "PATH...",
		Description: "Lines, bytes and payload bytes (payload sites of at least --threshold JSON bytes) by format,\n" +
			"entry type and tool; the largest payloads; and what migrate --threshold would save, found by\n" +
			"running migrate's own rewriting with a store that only records digests: transcript bytes\n" +
			"saved, artifacts after deduplication across all the files given, and the bytes the store\n" +
			"would grow by. Nothing is written.\n\n" +
			"Estimated tokens saved: saved text bytes / 4 (about four bytes make a token of English, code\n" +
			"or JSON for current tokenizers), plus, for each image moved, the tokens a model is charged to\n" +
			"see it (width x height / 750, at most 1600), not its base64 bytes.",
		Flags: []cli.Flag{
			shardFlag(),
			storeAsFlag(),
			thresholdFlag("payloads are sites of at least `SIZE` JSON bytes, as for migrate"),
			newStoreFlag(),
			inputFormatFlag(),
			formatAliasFlag(),
			&cli.IntFlag{Name: "top", Value: inspect.DefaultTop, Usage: "list the `N` largest payloads"},
			&cli.BoolFlag{Name: "json", Usage: "print the report as JSON"},
		},
		Action: func(c *cli.Context) error {
			paths, err := requirePaths(c)
			if err != nil {
				return err
			}
			opts := inspect.StatsOptions{Threshold: int(sizeOf(c, "threshold")), Store: c.String("store"), OpenStore: location.Open, StoreAs: c.String("store-as"), Format: c.String("input-format"), Top: c.Int("top")}
			if opts.Top < 0 {
				return usageErr("--top must not be negative")
			}
			inputs, err := collect(c.Context, st, paths, nil, shardOf(c))
			if err != nil {
				return err
			}
			bar, err := newProgress(c, st, totalSize(inputs), "stats")
			if err != nil {
				return err
			}
			opts.Progress = bar
			rep, err := inspect.Stats(c.Context, inputs, opts)
			bar.finish()
			if err != nil {
				return fatal(err, "")
			}
			failed := 0
			for _, f := range rep.Findings {
				if f.Kind == inspect.KindUnreadable {
					failed++
					st.errorf("%s", f.Message)
				} else {
					st.warnf("%s", f)
				}
			}
			if c.Bool("json") {
				err = writeJSON(st.stdout, rep)
			} else {
				err = printStats(st.stdout, rep)
			}
			if err != nil {
				return err
			}
			if failed > 0 {
				return problems
			}
			return nil
		},
	}
}

// printStats writes the report as tables for people.
func printStats(w io.Writer, r inspect.StatsReport) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	t := r.Total
	fmt.Fprintf(tw, "%s, %s, %s; %s of at least %d bytes: %s (%s)\n", display.Plural(r.Files, "file"), display.Plural(int(t.Lines), "line"),
		human(t.Bytes), display.Plural(int(t.Payloads), "payload"), r.Threshold, human(t.PayloadBytes), share(t.PayloadBytes, t.Bytes))

	fmt.Fprintln(tw, "\nFORMAT\tFILES\tLINES\tBYTES\tPAYLOADS\tPAYLOAD BYTES\tSHARE")
	for _, g := range r.Formats {
		fmt.Fprintf(tw, "%s\t%d\t%s\n", g.Format, g.Files, countCells(g.Counts))
	}
	for _, table := range []struct {
		what   string
		groups []inspect.Group
	}{{"ENTRY TYPE", r.EntryTypes}, {"TOOL", r.Tools}} {
		fmt.Fprintf(tw, "\nFORMAT\t%s\tLINES\tBYTES\tPAYLOADS\tPAYLOAD BYTES\tSHARE\n", table.what)
		for _, g := range table.groups {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", g.Format, g.Name, countCells(g.Counts))
		}
	}
	if len(r.NotUnderstood) > 0 {
		fmt.Fprintln(tw, "\nENTRY TYPES NOT UNDERSTOOD (kept as they are)\nFORMAT\tENTRY TYPE\tLINES\tBYTES")
		for _, g := range r.NotUnderstood {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", g.Format, g.Name, g.Lines, human(g.Bytes))
		}
	}
	for i, tr := range r.ToolResults {
		if i == 0 || tr.Agent != r.ToolResults[i-1].Agent {
			fmt.Fprintf(tw, "\n%s'S OWN %s/ (kept as they are)\nPROJECT\tFILES\tBYTES\n", strings.ToUpper(tr.Agent), tr.Folder)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\n", tr.Project, tr.Files, human(tr.Bytes))
	}
	if len(r.Largest) > 0 {
		fmt.Fprintln(tw, "\nLARGEST PAYLOADS\nSIZE\tTOOL\tSITE\tFILE:LINE")
		for _, p := range r.Largest {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s:%d\n", human(p.Size), p.Tool, p.Site, p.File, p.Line)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	m := r.Migrate
	fmt.Fprintf(w, "\nmigrate --threshold %d would save %s of %s in %d of %s",
		r.Threshold, saved(m.Saved, m.BytesBefore), human(m.BytesBefore), m.Files, display.Plural(r.Files, "file"))
	if m.Failed > 0 {
		fmt.Fprintf(w, " (and fail on %d)", m.Failed)
	}
	fmt.Fprintf(w, "\nartifacts: %d referenced, %d unique, %d new to the store (%s)\n", m.Artifacts, m.Unique, m.New, human(m.NewBytes))
	_, err := fmt.Fprintf(w, "estimated tokens saved: %d (%s of text / 4, %s)\n", m.Tokens, human(m.TextBytes), display.Plural(m.Images, "image"))
	return err
}

// countCells formats counts as the tab-separated cells of a table row.
func countCells(c inspect.Counts) string {
	return strconv.FormatInt(c.Lines, 10) + "\t" + human(c.Bytes) + "\t" + strconv.FormatInt(c.Payloads, 10) + "\t" +
		human(c.PayloadBytes) + "\t" + share(c.PayloadBytes, c.Bytes)
}

// share formats part as a share of whole, "-" when whole is nothing.
func share(part, whole int64) string {
	if whole == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(part)/float64(whole))
}
