package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/transcript-tool/transcript-tool/fsck"
	"github.com/transcript-tool/transcript-tool/registry"
)

func gcCommand(st streams) *cli.Command {
	return &cli.Command{
		Name:      "gc",
		Usage:     "delete artifacts that no given transcript refers to (a dry run unless --yes)",
		ArgsUsage: "PATH...",
		Description: "Lists the artifacts of each store that none of the given transcripts refers to;\n" +
			"--yes deletes them. Kept regardless: artifacts younger than --grace (a migration\n" +
			"running now may not have renamed its transcript yet), and artifacts the registry\n" +
			"records for a transcript that was not given and still exists. Every transcript is\n" +
			"read before anything is deleted; one that cannot be read stops gc.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "store", Usage: "artifact store `DIR` (default: artifacts/ beside each transcript)"},
			&cli.BoolFlag{Name: "yes", Usage: "delete; without it nothing is deleted"},
			&cli.DurationFlag{Name: "grace", Value: fsck.DefaultGrace, Usage: "keep artifacts younger than this"},
			&cli.BoolFlag{Name: "json", Usage: "print the reports as JSON"},
		},
		Action: func(c *cli.Context) error {
			paths, err := requireArgs(c, "path")
			if err != nil {
				return err
			}
			if c.Duration("grace") < 0 {
				return usageErr("--grace must not be negative")
			}
			groups, err := storeGroups(paths, c.String("store"))
			if err != nil {
				return err
			}
			opts := fsck.GCOptions{Grace: c.Duration("grace"), Remove: c.Bool("yes"), Now: time.Now()}
			var reports []fsck.GCReport
			for _, g := range groups {
				rep, err := fsck.GC(c.Context, registry.Open(g.store), g.transcripts, opts)
				if err != nil {
					return fatal(err, "nothing was deleted from "+g.store)
				}
				reports = append(reports, rep)
			}
			if c.Bool("json") {
				return writeJSON(st.stdout, reports)
			}
			for _, rep := range reports {
				printGC(st, rep)
			}
			return nil
		},
	}
}

func printGC(st streams, rep fsck.GCReport) {
	verb := "would delete"
	if rep.Removed {
		verb = "deleted"
	}
	for _, c := range rep.Collected {
		fmt.Fprintf(st.stdout, "%s %s (%s)\n", verb, c.Path, human(c.Size))
	}
	for _, p := range rep.ElsewhereIn {
		fmt.Fprintf(st.stdout, "kept artifacts of %s, which was not given\n", p)
	}
	fmt.Fprintf(st.stdout, "%s: %s %d of %d artifacts (%s); kept %d referenced, %d younger than the grace period\n",
		rep.Store, verb, len(rep.Collected), rep.Objects, human(rep.Bytes), rep.Referenced, rep.Young)
	if !rep.Removed && len(rep.Collected) > 0 {
		fmt.Fprintln(st.stdout, "run again with --yes to delete them")
	}
}
