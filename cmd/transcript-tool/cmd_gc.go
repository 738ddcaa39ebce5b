package main

import (
	"bufio"
	"bytes"
	varint "encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/transcript-tool/transcript-tool/fsck"
	"github.com/transcript-tool/transcript-tool/internal/display"
	"github.com/transcript-tool/transcript-tool/internal/extsort"
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
			var collected collectedSpill
			defer collected.close()
			// Before anything is deleted: the list is the record of what
			// was.
			if err := collected.sp.Open(); err != nil {
				return fatal(fmt.Errorf("gc keeps the list of what it collects in a %w", err), "nothing was deleted; set TMPDIR to a folder this user can write to")
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
				return writeGCJSON(st.stdout, reports, collected.each)
			}
			for i, rep := range reports {
				if err := printGC(st, rep, func(fn func(fsck.Collected)) error { return collected.each(i, fn) }); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// printGC prints the report of gc on one store, and what collected
// passes on, which the report does not hold.
func printGC(st streams, rep fsck.GCReport, collected func(func(fsck.Collected)) error) error {
	verb := "would delete"
	if rep.Removed {
		verb = "deleted"
	}
	n := 0
	if err := collected(func(c fsck.Collected) {
		n++
		fmt.Fprintf(st.stdout, "%s %s (%s)\n", verb, c.Path, human(c.Size))
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

// writeGCJSON writes reports as writeJSON does, each with what collected
// passes on for it, by its number, as its Collected.
func writeGCJSON(w io.Writer, reports []fsck.GCReport, collected func(int, func(fsck.Collected)) error) error {
	if len(reports) == 0 {
		return writeJSON(w, reports)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString("[\n")
	for i, rep := range reports {
		rep.Collected = []fsck.Collected{}
		b, err := json.MarshalIndent(rep, "  ", "  ")
		if err != nil {
			return err
		}
		head, tail, ok := bytes.Cut(b, []byte(`"collected": []`))
		if !ok {
			return errors.New("gc report without its list of collected artifacts")
		}
		bw.WriteString("  ")
		bw.Write(head)
		bw.WriteString(`"collected": [`)
		n := 0
		err = collected(i, func(c fsck.Collected) {
			if err != nil {
				return
			}
			if n > 0 {
				bw.WriteByte(',')
			}
			n++
			var e []byte
			if e, err = json.MarshalIndent(c, "      ", "  "); err == nil {
				bw.WriteString("\n      ")
				bw.Write(e)
			}
		})
		if err != nil {
			return err
		}
		if n > 0 {
			bw.WriteString("\n    ")
		}
		bw.WriteByte(']')
		bw.Write(tail)
		if i < len(reports)-1 {
			bw.WriteByte(',')
		}
		bw.WriteByte('\n')
	}
	bw.WriteString("]\n")
	return bw.Flush()
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

// collectedSpill keeps what gc collects from each store, in order, in a
// temporary file rather than in memory: gc may collect millions.
type collectedSpill struct {
	sp     extsort.Spill
	buf    []byte
	chunks [][]extsort.Chunk // each store's
	n      int               // collected from the current store
}

// begin starts the next store's.
func (c *collectedSpill) begin() {
	c.flush()
	c.chunks = append(c.chunks, nil)
	c.n = 0
}

// count returns how many were collected from the current store.
func (c *collectedSpill) count() int { return c.n }

// add adds an artifact collected from the current store; an error says
// the list could not be kept, which stops gc (see fsck.GCOptions).
func (c *collectedSpill) add(col fsck.Collected) error {
	c.n++
	c.buf = varint.AppendUvarint(c.buf, uint64(len(col.Path)))
	c.buf = varint.AppendVarint(append(c.buf, col.Path...), col.Size)
	if len(c.buf) >= 64<<10 {
		c.flush()
	}
	if err := c.sp.Err(); err != nil {
		return fmt.Errorf("keep the list of collected artifacts: %w", err)
	}
	return nil
}

func (c *collectedSpill) flush() {
	if len(c.buf) > 0 {
		last := len(c.chunks) - 1
		c.chunks[last] = append(c.chunks[last], c.sp.Write(c.buf))
		c.buf = c.buf[:0]
	}
}

// each calls fn with what was collected from the i-th store, in order.
func (c *collectedSpill) each(i int, fn func(fsck.Collected)) error {
	c.flush()
	if err := c.sp.Err(); err != nil {
		return fmt.Errorf("keep the list of collected artifacts: %w", err)
	}
	var path []byte
	for _, ch := range c.chunks[i] {
		r := c.sp.Reader(ch)
		for {
			n, err := varint.ReadUvarint(r)
			if err == io.EOF {
				break
			}
			if err == nil {
				path = slices.Grow(path[:0], int(n))[:n]
				_, err = io.ReadFull(r, path)
			}
			var size int64
			if err == nil {
				size, err = varint.ReadVarint(r)
			}
			if err != nil {
				return fmt.Errorf("read the list of collected artifacts: %w", err)
			}
			fn(fsck.Collected{Path: string(path), Size: size})
		}
	}
	return nil
}

func (c *collectedSpill) close() { c.sp.Close() }
