package main

import (
	varint "encoding/binary"
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
			// What is collected is printed with the reports, after the
			// last store's: it waits in a temporary file meanwhile.
			collected := collectedList{listSpill: listSpill{what: "collected artifacts"}}
			defer collected.close()
			// Before anything is deleted: the list is the record of what
			// was.
			if err := collected.open(); err != nil {
				return fatal(err, "nothing was deleted; set TMPDIR to a folder this user can write to")
			}
			opts.Collected = collected.add
			for i, g := range groups {
				collected.begin()
				store, err := openStore(g.store)
				if err != nil {
					return err
				}
				if _, ok := storepkg.As[*s3.Backend](store.Backend()); ok && grace < fsck.MinGrace && opts.Remove {
					st.warnf("--grace %s on %s: a migration by an earlier version of transcript-tool, which takes no lease, may lose the artifacts it has just stored or found there", grace, g.store)
				}
				rep, err := fsck.GC(c.Context, store, g.transcripts, opts)
				if err != nil {
					return fatal(err, gcStopped(g.store, opts.Remove, collected.count(), i))
				}
				reports = append(reports, rep)
			}
			if c.Bool("json") {
				return writeListsJSON(st.stdout, reports, "collected", func(i int, put func(any) error) error {
					return collected.each(i, func(c fsck.Collected) error { return put(c) })
				})
			}
			for i, rep := range reports {
				if err := printGC(st, rep, func(fn func(fsck.Collected) error) error { return collected.each(i, fn) }); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// printGC prints the report of gc on one store, and what collected
// passes on, which the report does not hold.
func printGC(st streams, rep fsck.GCReport, collected func(func(fsck.Collected) error) error) error {
	verb := "would delete"
	if rep.Removed {
		verb = "deleted"
	}
	n := 0
	if err := collected(func(c fsck.Collected) error {
		n++
		fmt.Fprintf(st.stdout, "%s %s (%s)\n", verb, c.Path, human(c.Size))
		return nil
	}); err != nil {
		return err
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
		rep.Store, verb, n, display.Plural(rep.Objects, "artifact"), human(rep.Bytes), rep.Referenced, rep.Young)
	if !rep.Removed && n > 0 {
		fmt.Fprintln(st.stdout, "run again with --yes to delete them")
	}
	return nil
}

// gcStopped is the hint of a gc that failed on store, the earlier-th
// store of its run, having collected deleted of its artifacts: with
// --yes, each was deleted as it was collected, and the stores before it
// were collected in full.
func gcStopped(store string, removing bool, deleted, earlier int) string {
	hint := "nothing was deleted from " + store
	if !removing {
		return hint
	}
	if deleted > 0 {
		hint = fmt.Sprintf("%s of %s deleted before the error, none that a given transcript refers to; the store's registry names them until gc --yes runs again",
			display.Plural(deleted, "artifact"), store)
	}
	if earlier > 0 {
		hint += fmt.Sprintf(" (%s before it collected in full)", display.Plural(earlier, "store"))
	}
	return hint
}

// collectedList is gc's list of what it collects from each store, in a
// temporary file (see listSpill): each artifact its size and path.
type collectedList struct {
	listSpill
	rec []byte
}

// add adds an artifact collected from the current store; an error says
// the list could not be kept, which stops gc (see fsck.GCOptions).
func (c *collectedList) add(col fsck.Collected) error {
	c.rec = append(varint.AppendVarint(c.rec[:0], col.Size), col.Path...)
	return c.listSpill.add(c.rec)
}

// each calls fn with what was collected from the i-th store, in order.
func (c *collectedList) each(i int, fn func(fsck.Collected) error) error {
	return c.listSpill.each(i, func(e []byte) error {
		size, n := varint.Varint(e)
		if n <= 0 {
			return fmt.Errorf("read the list of %s: a bad entry", c.what)
		}
		return fn(fsck.Collected{Path: string(e[n:]), Size: size})
	})
}
