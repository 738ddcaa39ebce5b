package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/transcript-tool/transcript-tool/fsck"
	"github.com/transcript-tool/transcript-tool/internal/display"
	"github.com/transcript-tool/transcript-tool/registry"
	storepkg "github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/s3"
)

func gcCommand(st streams) *cli.Command {
	return &cli.Command{
		Name:      "gc",
		Usage:     "delete artifacts that no given transcript refers to (a dry run unless --yes)",
		ArgsUsage: "PATH...",
		Description: "Lists the artifacts of each store that none of the given transcripts refers to;\n" +
			"--yes deletes them, holding the store's lock (in S3, a lease) so that no migration\n" +
			"runs meanwhile (gc waits for those running). Kept regardless: artifacts the registry\n" +
			"records for a transcript that was not given and still exists; unless --prune-missing,\n" +
			"artifacts it records only for transcripts that no longer exist (moved, or deleted) and\n" +
			"artifacts it has no record of (its tail lost, or a run killed before its records); and\n" +
			"artifacts younger than --grace, for writers that take no lock (older versions).\n" +
			"Every transcript is read before anything is deleted; one that cannot be read stops gc.",
		Flags: []cli.Flag{
			storeFlag(),
			&cli.BoolFlag{Name: "yes", Usage: "delete; without it nothing is deleted"},
			&cli.DurationFlag{Name: "grace", Value: fsck.DefaultGrace, Usage: "keep artifacts younger than `DURATION` (at least " + fsck.MinGrace.String() + " unless --force)"},
			&cli.BoolFlag{Name: "force", Usage: "accept a --grace shorter than " + fsck.MinGrace.String()},
			&cli.BoolFlag{Name: "prune-missing", Usage: "also delete the artifacts of transcripts that no longer exist, and those no record names:\n" +
				"only when every transcript that still uses the store is given or found where the registry says"},
			&cli.BoolFlag{Name: "json", Usage: "print the reports as JSON"},
		},
		Action: func(c *cli.Context) error {
			paths, err := requireArgs(c, "path")
			if err != nil {
				return err
			}
			grace := c.Duration("grace")
			if grace < 0 {
				return usageErr("--grace must not be negative")
			}
			if grace < fsck.MinGrace && !c.Bool("force") {
				return &exitError{code: exitUsage, err: fmt.Errorf("--grace %s is shorter than %s, which a migration that takes no lock (an older version, another machine) may need", grace, fsck.MinGrace),
					hint: "add --force if no such migration can be running"}
			}
			groups, err := storeGroups(c.Context, st, paths, c.String("store"), registry.Shard{})
			if err != nil {
				return err
			}
			opts := fsck.GCOptions{Grace: grace, Remove: c.Bool("yes"), PruneMissing: c.Bool("prune-missing"), Now: time.Now(),
				Waiting: func(store string) {
					fmt.Fprintf(st.stderr, "transcript-tool: waiting for the migrations using %s to end\n", store)
				}}
			var reports []fsck.GCReport
			for _, g := range groups {
				store, err := openStore(g.store)
				if err != nil {
					return err
				}
				if _, ok := storepkg.As[*s3.Backend](store.Backend()); ok && grace < fsck.MinGrace && opts.Remove {
					st.warnf("--grace %s on %s: a migration by an earlier version of transcript-tool, which takes no lease, may lose the artifacts it has just stored or found there", grace, g.store)
				}
				rep, err := fsck.GC(c.Context, store, g.transcripts, opts)
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
	for _, p := range rep.GoneIn {
		if p == "" {
			fmt.Fprintln(st.stdout, "kept artifacts whose records name no transcript (--prune-missing deletes them)")
			continue
		}
		fmt.Fprintf(st.stdout, "kept artifacts of %s, which no longer exists (--prune-missing deletes them)\n", p)
	}
	if rep.Unrecorded > 0 {
		fmt.Fprintf(st.stdout, "kept %s that the registry has no record of (--prune-missing deletes them)\n", display.Plural(rep.Unrecorded, "artifact"))
	}
	fmt.Fprintf(st.stdout, "%s: %s %d of %s (%s); kept %d referenced, %d younger than the grace period\n",
		rep.Store, verb, len(rep.Collected), display.Plural(rep.Objects, "artifact"), human(rep.Bytes), rep.Referenced, rep.Young)
	if !rep.Removed && len(rep.Collected) > 0 {
		fmt.Fprintln(st.stdout, "run again with --yes to delete them")
	}
}
