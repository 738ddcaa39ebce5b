package main

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/transcript-tool/transcript-tool/inspect"
	"github.com/transcript-tool/transcript-tool/internal/display"
	"github.com/transcript-tool/transcript-tool/registry"
	storepkg "github.com/transcript-tool/transcript-tool/store"
)

func lsCommand(st streams) *cli.Command {
	return &cli.Command{
		Name:  "ls",
		Usage: "list the artifacts of a store's registry, newest first",
		Description: "One row per artifact: its id prefix, size, media type, tool, session, source\n" +
			"transcript (relative to the store's parent directory when inside it), the number of\n" +
			"places that reference it, and its summary. The row shows the artifact's newest\n" +
			"registry record among those the filters keep; records that differ only in their\n" +
			"creation time count once. Rows are ordered by that record's creation time, newest\n" +
			"first, then by its place in the registry, later first.\n\n" +
			"--session and --tool keep the records of that session id or tool name; --min-size\n" +
			"keeps artifacts of at least that size (4096, 4KB, 1.5MB, 512KiB; KB = 1000 bytes,\n" +
			"KiB = 1024). A registry line that does not parse is reported on stderr with its line\n" +
			"and byte offset, the listing goes on, and the status is 1.",
		Flags: []cli.Flag{
			storeFlag(),
			&cli.StringFlag{Name: "session", Usage: "only artifacts of session `ID`"},
			&cli.StringFlag{Name: "tool", Usage: "only artifacts of tool `NAME`"},
			&cli.StringFlag{Name: "min-size", Usage: "only artifacts of at least `SIZE`"},
			&cli.BoolFlag{Name: "json", Usage: "print a JSON array of the rows"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return &exitError{code: exitUsage, err: fmt.Errorf("ls: unexpected argument %q", c.Args().First()),
					hint: "usage: transcript-tool ls [--store DIR] [--session ID] [--tool NAME] [--min-size SIZE] [--json]"}
			}
			f := lsFilter{session: c.String("session"), tool: c.String("tool")}
			if s := c.String("min-size"); s != "" {
				n, err := inspect.ParseSize(s)
				if err != nil {
					return usageErr("--min-size: %v", err)
				}
				f.minSize = n
			}
			store, err := openStore(storeHere(c.String("store")))
			if err != nil {
				return err
			}
			return runLs(st, store, f, c.Bool("json"))
		},
	}
}

type lsFilter struct {
	session, tool string
	minSize       int64
}

func (f lsFilter) keep(r registry.Record) bool {
	return (f.session == "" || r.Session == f.session) && (f.tool == "" || r.Tool == f.tool) && r.Size >= f.minSize
}

// lsRow is one artifact of the listing: its newest record kept by the
// filters, and the number of distinct places that reference it.
type lsRow struct {
	ID        string `json:"id"`
	Size      int64  `json:"size"`
	Media     string `json:"media"`
	Tool      string `json:"tool"`
	Session   string `json:"session"`
	Source    string `json:"source"`
	Entry     string `json:"entry"`
	Site      string `json:"site"`
	CreatedAt string `json:"createdAt"`
	Refs      int    `json:"refs"`
	Summary   string `json:"summary"`
	Path      string `json:"path"` // the object's absolute path, to open it

	digest  storepkg.Digest
	created time.Time
	index   int // registry position of the record shown
}

func has[K comparable](m map[K]struct{}, k K) bool {
	_, ok := m[k]
	return ok
}

func runLs(st streams, store *registry.Store, f lsFilter, asJSON bool) error {
	if err := storeMissing(store.Dir()); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fatal(fmt.Errorf("no artifact store at %s", store.Dir()), "name the store with --store DIR")
		}
		return fatal(err, "")
	}
	rows, bad, err := listArtifacts(store, f, func(e *registry.BadLineError) { st.warnf("%v", e) })
	if err != nil {
		return fatal(fmt.Errorf("read registry: %w", err), "")
	}
	if asJSON {
		err = writeJSON(st.stdout, rows)
	} else {
		err = printLs(st.stdout, rows, sourceBase(store))
	}
	if err != nil {
		return err
	}
	if bad > 0 {
		return problems
	}
	return nil
}

// listArtifacts reads the registry into rows, newest first, and returns
// the number of bad lines, each passed to bad.
func listArtifacts(store *registry.Store, f lsFilter, bad func(*registry.BadLineError)) ([]lsRow, int, error) {
	// A place is counted once however many records name it: one map for
	// all of them, not one per artifact (a million records).
	type place struct{ hash, source, entry, site string }
	var (
		rows   []lsRow
		byHash = map[string]int{}
		places = map[place]struct{}{}
		index  int
		nbad   int
	)
	err := store.RecordsAt(func(r registry.Record, at registry.Pos) error {
		d, err := storepkg.ParseDigest(r.Hash)
		if err != nil {
			// A record of no artifact: reported as a bad line, not listed.
			nbad++
			bad(&registry.BadLineError{Path: at.Path, Line: at.Line, Offset: at.Offset, Err: err})
			return nil
		}
		index++
		if !f.keep(r) {
			return nil
		}
		created, _ := time.Parse(time.RFC3339Nano, r.CreatedAt)
		row := lsRow{ID: r.Hash, Size: r.Size, Media: r.Media, Tool: r.Tool, Session: r.Session, Source: r.Source,
			Entry: r.Entry, Site: r.Site, CreatedAt: r.CreatedAt, Summary: r.Summary, digest: d, created: created, index: index}
		i, seen := byHash[r.Hash]
		if !seen {
			i = len(rows)
			byHash[r.Hash] = i
			rows = append(rows, row)
		} else if !created.Before(rows[i].created) {
			row.Refs = rows[i].Refs
			rows[i] = row
		}
		if p := (place{r.Hash, r.Source, r.Entry, r.Site}); !has(places, p) {
			places[p] = struct{}{}
			rows[i].Refs++
		}
		return nil
	}, func(e *registry.BadLineError) {
		nbad++
		bad(e)
	})
	slices.SortFunc(rows, func(a, b lsRow) int {
		return cmp.Or(b.created.Compare(a.created), cmp.Compare(b.index, a.index))
	})
	if rows == nil {
		rows = []lsRow{}
	}
	for i := range rows {
		rows[i].Path = store.Path(rows[i].digest)
	}
	return rows, nbad, err
}

// sourceBase is the directory sources are shown relative to: the store's
// parent, where migrate puts transcripts' default store.
func sourceBase(store *registry.Store) string {
	abs, err := filepath.Abs(store.Dir())
	if err != nil {
		return ""
	}
	return filepath.Dir(abs)
}

// printLs writes rows as a table.
func printLs(w io.Writer, rows []lsRow, base string) error {
	if len(rows) == 0 {
		return nil
	}
	// The table is written once, at the end, a cell at a time: buffered,
	// not a system call per cell.
	bw := bufio.NewWriterSize(w, 256<<10)
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSIZE\tMEDIA\tTOOL\tSESSION\tSOURCE\tREFS\tSUMMARY")
	for _, r := range rows {
		source := r.Source
		if rel, err := filepath.Rel(base, source); base != "" && err == nil && filepath.IsAbs(source) && !strings.HasPrefix(rel, "..") {
			source = rel
		}
		media, _, _ := strings.Cut(r.Media, ";")
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n",
			cell(display.ID(r.ID), display.IDLen), human(r.Size), cell(media, 40), cell(r.Tool, 32),
			cell(r.Session, 40), cell(source, 80), r.Refs, cell(r.Summary, 80))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return bw.Flush()
}

// cell makes s one table cell: one line, no tabs, "-" when empty.
func cell(s string, n int) string {
	if s = display.Line(s, n); s == "" {
		return "-"
	}
	return s
}
