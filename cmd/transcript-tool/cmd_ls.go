package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/urfave/cli/v2"

	"github.com/transcript-tool/transcript-tool/internal/display"
	"github.com/transcript-tool/transcript-tool/internal/extsort"
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/session"
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
			sizeFlag("min-size", "0", 0, "only artifacts of at least `SIZE`"),
			&cli.BoolFlag{Name: "json", Usage: "print a JSON array of the rows"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return &exitError{code: exitUsage, err: fmt.Errorf("ls: unexpected argument %q", c.Args().First()),
					hint: "usage: transcript-tool ls [--store DIR] [--session ID] [--tool NAME] [--min-size SIZE] [--json]"}
			}
			f := lsFilter{session: c.String("session"), tool: c.String("tool"), minSize: sizeOf(c, "min-size")}
			store, err := openStore(storeHere(c.String("store")))
			if err != nil {
				return err
			}
			if f.session != "" {
				if f.session, err = lsSession(c.Context, store, f.session); err != nil {
					return err
				}
			}
			return runLs(c.Context, st, store, f, c.Bool("json"))
		},
	}
}

// errFound stops a walk of the registry that found what it looked for.
var errFound = errors.New("found")

// lsSession returns the session id that --session arg names, as show and
// recall take a SESSION: a transcript's file (the id it records), a
// session id, or the start of one that fits one session of the registry
// only. Records of a session's subagents carry its id: they are listed
// with it.
func lsSession(ctx context.Context, store *registry.Store, arg string) (string, error) {
	if fi, err := os.Stat(arg); err == nil && !fi.IsDir() {
		t, err := session.Open(arg, "")
		if err != nil {
			return "", fatal(err, "")
		}
		defer t.Close()
		return t.Session, nil
	}
	nop := func(*registry.BadLineError) {}
	err := store.RecordsMatching(ctx, []registry.Key{{Field: registry.FieldSession, Value: arg}}, func(r registry.Record, _ registry.Pos) error {
		if r.Session == arg {
			return errFound
		}
		return nil
	}, nop)
	if errors.Is(err, errFound) {
		return arg, nil
	}
	ids := map[string]bool{}
	if err := store.Records(ctx, func(r registry.Record) error {
		if strings.HasPrefix(r.Session, arg) {
			ids[r.Session] = true
		}
		return nil
	}, nop); err != nil {
		return "", fatal(fmt.Errorf("read registry: %w", err), "")
	}
	found := slices.Sorted(maps.Keys(ids))
	switch len(found) {
	case 0:
		return "", &exitError{code: exitUsage, err: fmt.Errorf("no session %q in the registry of %s", arg, store.Dir()),
			hint: "a session is named by its transcript, its id or the start of its id"}
	case 1:
		return found[0], nil
	}
	return "", &exitError{code: exitUsage, err: fmt.Errorf("%q names %d sessions:\n  %s", arg, len(found), strings.Join(found, "\n  ")),
		hint: "give more of the id"}
}

type lsFilter struct {
	session, tool string
	minSize       int64
}

// keys returns the registry keys of the records f may keep: those of
// its session, else of its tool, else all of them (nil).
func (f lsFilter) keys() []registry.Key {
	switch {
	case f.session != "":
		return []registry.Key{{Field: registry.FieldSession, Value: f.session}}
	case f.tool != "":
		return []registry.Key{{Field: registry.FieldTool, Value: f.tool}}
	}
	return nil
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
}

func runLs(ctx context.Context, st streams, store *registry.Store, f lsFilter, asJSON bool) error {
	if err := storeMissing(store.Dir()); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fatal(fmt.Errorf("no artifact store at %s", store.Dir()), "name the store with --store DIR")
		}
		return fatal(err, "")
	}
	bad := 0
	warn := func(e *registry.BadLineError) {
		bad++
		st.warnf("%v", e)
	}
	var keep func(registry.Record) bool
	if f != (lsFilter{}) {
		keep = f.keep
	}
	done, err := streamLs(ctx, st, store, f.keys(), keep, asJSON, warn)
	if err == nil && !done {
		// The registry changed in place under its index before a row
		// was written: list it again, read whole, its bad lines told
		// (those the index gave are told a second time: better than a
		// line broken since the index was written told never).
		if done, err = streamLs(ctx, st, store, nil, f.keep, asJSON, warn); err == nil && !done {
			err = fatal(fmt.Errorf("read registry: %w", registry.ErrIndexChanged), "")
		}
	}
	if err != nil {
		return err
	}
	if bad > 0 {
		return problems
	}
	return nil
}

// errRead marks an error of reading the registry while rows are written.
type errRead struct{ err error }

func (e *errRead) Error() string { return e.err.Error() }
func (e *errRead) Unwrap() error { return e.err }

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// streamLs lists the registry through its listing of the records keep
// keeps, keys naming them (see registry.Listing), holding few of its rows
// at a time: as JSON a row at a time, newest first; as a table through
// tableLs. It reports false, having written nothing, when the registry
// changed under the listing before its first row was written.
func streamLs(ctx context.Context, st streams, store *registry.Store, keys []registry.Key, keep func(registry.Record) bool, asJSON bool, bad func(*registry.BadLineError)) (bool, error) {
	l, err := store.Listing(ctx, keys, keep, bad)
	switch {
	case errors.Is(err, registry.ErrIndexChanged):
		return false, nil
	case err != nil:
		return false, fatal(fmt.Errorf("read registry: %w", err), "")
	}
	defer l.Close()
	out := &countingWriter{w: st.stdout}
	if asJSON {
		err = jsonLs(out, l, store)
	} else {
		err = tableLs(out, l, sourceBase(store), terminalWidth(st.stdout))
	}
	var re *errRead
	switch {
	case errors.Is(err, registry.ErrIndexChanged) && out.n == 0:
		return false, nil
	case errors.As(err, &re):
		return true, fatal(fmt.Errorf("read registry: %w", re.err), "")
	}
	return true, err
}

// tableLs writes the table of the rows of l (see lsTable). Through
// rankRows, it makes each row's cells once and measures them while the
// registry is read, so that the table's widths are known before its
// first row is written. (On a terminal the summary's cell is
// made for the widest column it may have and cut again when written,
// which gives the cell made for its column.)
func tableLs(w io.Writer, l *registry.Listing, base string, columns int) error {
	// Each worker makes and measures cells with a table of its own.
	ts := make([]*lsTable, lsWorkers())
	for i := range ts {
		ts[i] = newLsTable(base, columns)
	}
	// Buckets of 16k rows of about 100 bytes.
	rk := extsort.NewRanked(l.Len(), 16<<10, 4<<20)
	defer rk.Close()
	n, err := rankRows(l, rk, len(ts), func(w int, rec []byte, r lsRow) []byte { return ts[w].appendRow(rec, r) })
	if err != nil || n == 0 {
		return err
	}
	t := ts[0]
	for _, o := range ts[1:] {
		for i := range t.width {
			t.width[i] = max(t.width[i], o.width[i])
		}
	}
	t.fit()
	bw := bufio.NewWriterSize(w, 256<<10)
	if _, err := bw.Write(t.appendLine(nil, lsHeadCells())); err != nil {
		return err
	}
	if err := t.writeRows(bw, rk); err != nil {
		return fmt.Errorf("ls: %w", err)
	}
	return bw.Flush()
}

// lsChunk is consecutive rows of the table: their records, as appendRow
// made them, then their lines.
type lsChunk struct {
	recs, lines []byte
	done        chan struct{} // a value once lines is made
}

// writeRows writes to w the lines of the records of rk, in the order of
// their ranks. A goroutine per core lays out chunks of them while rk
// reads the next and a writer writes the last in order: a million rows
// are 126 MB of lines, a quarter of the time of ls when one goroutine
// made and wrote them.
func (t *lsTable) writeRows(w io.Writer, rk *extsort.Ranked) error {
	const inFlight, chunkSize = 8, 128 << 10
	var (
		work    = make(chan *lsChunk, inFlight)
		order   = make(chan *lsChunk, inFlight)
		free    = make(chan *lsChunk, inFlight)
		wrote   = make(chan error)
		failed  = make(chan struct{}) // closed when a write fails
		layouts sync.WaitGroup
	)
	for range inFlight {
		free <- &lsChunk{done: make(chan struct{}, 1)}
	}
	for range lsWorkers() {
		layouts.Add(1)
		go func() {
			defer layouts.Done()
			for c := range work {
				c.lines = t.appendLines(c.lines[:0], c.recs)
				c.done <- struct{}{}
			}
		}()
	}
	go func() {
		var err error
		for c := range order {
			<-c.done
			if err == nil {
				if _, err = w.Write(c.lines); err != nil {
					close(failed)
				}
			}
			c.recs = c.recs[:0]
			free <- c
		}
		wrote <- err
	}()
	c := <-free
	err := rk.Each(func(rec []byte) error {
		c.recs = append(c.recs, rec...)
		if len(c.recs) < chunkSize {
			return nil
		}
		order <- c
		work <- c
		select {
		case <-failed:
			c = nil
			return errStopped
		case c = <-free:
			return nil
		}
	})
	if c != nil && len(c.recs) > 0 {
		order <- c
		work <- c
	}
	close(work)
	close(order)
	werr := <-wrote
	layouts.Wait()
	if werr != nil {
		return werr
	}
	return err
}

// errStopped stops the reading of rows that can no longer be written.
var errStopped = errors.New("stopped")

// appendLines appends the lines of recs, records as appendRow makes
// them, one after the other.
func (t *lsTable) appendLines(dst, recs []byte) []byte {
	for len(recs) > 0 {
		var c lsCells
		for i := range c.s {
			size := int(recs[0])<<8 | int(recs[1])
			c.w[i] = int(recs[2])<<8 | int(recs[3])
			recs = recs[4:]
			// The cell is appended before recs changes.
			c.s[i] = unsafe.String(unsafe.SliceData(recs), size)
			recs = recs[size:]
		}
		dst = t.appendLine(dst, &c)
	}
	return dst
}

// jsonLs writes the rows of l as a JSON array, what ls --json prints,
// through rankRows, each written as JSON once.
func jsonLs(w io.Writer, l *registry.Listing, store *registry.Store) error {
	// Buckets of 8k rows of about 500 bytes.
	rk := extsort.NewRanked(l.Len(), 8<<10, 4<<20)
	defer rk.Close()
	paths := make([]*objectPaths, lsWorkers())
	for i := range paths {
		paths[i] = newObjectPaths(store)
	}
	if _, err := rankRows(l, rk, len(paths), func(w int, rec []byte, r lsRow) []byte {
		return appendRowJSON(rec, r, paths[w])
	}); err != nil {
		return err
	}
	return writeJSONArray(w, rk.Each)
}

// rankRows deals to rk, by their ranks, the records that record makes of
// the rows of l, and returns how many. It reads them in the segment's
// order (Listing.Scan), in large blocks, for rk to put back in the
// listing's order, newest first; the rows are decoded and made into
// records by workers goroutines at once, record called with the
// number of the one calling it (calls with one number never overlap).
// record appends the row's record to rec and returns it.
func rankRows(l *registry.Listing, rk *extsort.Ranked, workers int, record func(w int, rec []byte, r lsRow) []byte) (int, error) {
	// Each worker hands rk its records a batch at a time: a lock taken
	// for each row, by two workers, cost more than the rows.
	type batch struct {
		recs  []byte
		ranks []int64
		ends  []int
	}
	var (
		mu      sync.Mutex
		n       int
		batches = make([]batch, workers)
	)
	flush := func(b *batch) {
		mu.Lock()
		start := 0
		for i, end := range b.ends {
			rk.Add(b.ranks[i], b.recs[start:end])
			start = end
		}
		n += len(b.ends)
		mu.Unlock()
		b.recs, b.ranks, b.ends = b.recs[:0], b.ranks[:0], b.ends[:0]
	}
	err := l.Scan(workers, func(w int, rank int64, r registry.Record, _ registry.Pos, refs int) error {
		b := &batches[w]
		b.recs = record(w, b.recs, lsRow{ID: r.Hash, Size: r.Size, Media: r.Media, Tool: r.Tool, Session: r.Session,
			Source: r.Source, Entry: r.Entry, Site: r.Site, CreatedAt: r.CreatedAt, Refs: refs, Summary: r.Summary})
		b.ranks, b.ends = append(b.ranks, rank), append(b.ends, len(b.recs))
		if len(b.recs) >= 64<<10 {
			flush(b)
		}
		return nil
	})
	for i := range batches {
		flush(&batches[i])
	}
	if err != nil {
		return n, &errRead{err}
	}
	return n, nil
}

// lsWorkers is how many goroutines decode the rows of a listing: one
// per core, four at most. Each holds a few MiB (batches of lines, the
// shared values its decoder keeps, its rows) and the reader of the
// registry keeps up with about that many, so that more would add memory
// and no speed: ls stays within its 64 MiB on a machine of any size.
func lsWorkers() int { return min(runtime.GOMAXPROCS(0), maxLsWorkers) }

// maxLsWorkers bounds lsWorkers.
const maxLsWorkers = 4

// writeJSONArray writes the JSON values each passes its function as one
// JSON array, indented as json.MarshalIndent(rows, "", "  ") would.
func writeJSONArray(w io.Writer, each func(put func([]byte) error) error) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	n := 0
	err := each(func(v []byte) error {
		if n == 0 {
			bw.WriteString("[\n  ")
		} else {
			bw.WriteString(",\n  ")
		}
		n++
		_, err := bw.Write(v)
		return err
	})
	if err != nil {
		return err
	}
	if n == 0 {
		bw.WriteString("[]\n")
	} else {
		bw.WriteString("\n]\n")
	}
	return bw.Flush()
}

// appendRowJSON appends r, with the path of its object when its ID is a
// digest, as json.MarshalIndent(r, "  ", "  ") would write it: the bytes
// of ls --json, without reflection or a second pass to indent.
func appendRowJSON(dst []byte, r lsRow, paths *objectPaths) []byte {
	r.Path = paths.path(r.ID)
	const field = "\n    \""
	str := func(dst []byte, key, v string) []byte {
		dst = append(append(append(dst, field...), key...), "\": "...)
		return appendJSONString(dst, v)
	}
	num := func(dst []byte, key string, v int64) []byte {
		dst = append(append(append(dst, field...), key...), "\": "...)
		return strconv.AppendInt(dst, v, 10)
	}
	dst = append(dst, '{')
	dst = str(dst, "id", r.ID)
	dst = append(num(append(dst, ','), "size", r.Size), ',')
	dst = append(str(dst, "media", r.Media), ',')
	dst = append(str(dst, "tool", r.Tool), ',')
	dst = append(str(dst, "session", r.Session), ',')
	dst = append(str(dst, "source", r.Source), ',')
	dst = append(str(dst, "entry", r.Entry), ',')
	dst = append(str(dst, "site", r.Site), ',')
	dst = append(str(dst, "createdAt", r.CreatedAt), ',')
	dst = append(num(dst, "refs", int64(r.Refs)), ',')
	dst = append(str(dst, "summary", r.Summary), ',')
	dst = str(dst, "path", r.Path)
	return append(dst, "\n  }"...)
}

// objectPaths gives the paths of objects, as their store's Path does,
// to ls --json: the folder of each shard is made once, not a path for
// each row.
type objectPaths struct {
	store *registry.Store
	dirs  map[string]string // by shard; "" where Path does not end with the id
}

func newObjectPaths(store *registry.Store) *objectPaths {
	return &objectPaths{store: store, dirs: map[string]string{}}
}

// path returns the path of the object named id, "" when id is not a
// digest (which is its lower-case hex form).
func (p *objectPaths) path(id string) string {
	d, err := storepkg.ParseDigest(id)
	if err != nil {
		return ""
	}
	dir, ok := p.dirs[id[:2]]
	if !ok {
		full := p.store.Path(d)
		if strings.HasSuffix(full, id) {
			dir = full[:len(full)-len(id)]
		}
		p.dirs[id[:2]] = dir
	}
	if dir == "" {
		return p.store.Path(d)
	}
	return dir + id
}

// jsonPlain tells the ASCII bytes that encoding/json writes as they
// are.
var jsonPlain = func() (t [utf8.RuneSelf]bool) {
	for c := byte(' '); c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendJSONString appends s as encoding/json writes a string. Most
// strings it writes as they are, between quotes; the others are
// encoding/json's own.
func appendJSONString(dst []byte, s string) []byte {
	if !jsonVerbatim(s) {
		b, _ := json.Marshal(s) // a string always marshals
		return append(dst, b...)
	}
	return append(append(append(dst, '"'), s...), '"')
}

// jsonVerbatim reports whether encoding/json writes s as it is: valid
// UTF-8 with no ASCII byte it escapes (quote, backslash, control
// characters, and, for HTML, <, > and &) and neither U+2028 nor U+2029.
func jsonVerbatim(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if !jsonPlain[c] {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			return false
		}
		i += size
	}
	return true
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

// lsCols is the number of columns of ls's table.
const lsCols = 8

// lsTable lays out ls's rows as a table: columns as wide as their widest
// cell in code points, two spaces apart, the last one not padded (what
// text/tabwriter makes of them, without its copy of every cell). On a
// terminal of columns columns (0: none) the columns are narrower and a
// row is cut to fit; --json has every value whole. Each row's cells are
// measured before the first is put.
type lsTable struct {
	base    string
	columns int
	wide    [lsCols]int // the most a cell of each column shows
	srcWide int         // the source's cell, cut again to its column's width
	width   [lsCols]int // the widest cell of each column measured
	// The cells of the columns whose values repeat are made once a run
	// of rows with the same value: rows newest first mostly come a
	// session at a time.
	memo [lsCols]struct {
		in, out string
		w       int
	}
}

// lsCells is the cells of a row of the table, and their widths in code
// points: each cell is measured once, when it is made.
type lsCells struct {
	s [lsCols]string
	w [lsCols]int
}

var lsHead = [lsCols]string{"ID", "SIZE", "MEDIA", "TOOL", "SESSION", "SOURCE", "REFS", "SUMMARY"}

func lsHeadCells() *lsCells {
	c := &lsCells{s: lsHead}
	for i, s := range c.s {
		c.w[i] = display.Len(s)
	}
	return c
}

func newLsTable(base string, columns int) *lsTable {
	t := &lsTable{base: base, columns: columns, wide: [lsCols]int{display.IDLen, 10, 40, 32, 40, 80, 6, 80}}
	if columns > 0 {
		// The summary's width is set by fit; until then, the most it
		// may be, but no more than a cell's record holds.
		t.wide = [lsCols]int{display.IDLen, 10, 24, 16, 13, 32, 6, min(max(columns, 80), maxCell)}
	}
	t.srcWide = t.wide[5]
	for i, n := range lsHeadCells().w[:lsCols-1] {
		t.width[i] = n
	}
	return t
}

// appendRow appends to rec the cells of row r (see appendCell), and
// widens the columns to fit them. The cells of numbers are formatted in
// place, and those of repeated values made once (see appendShared).
func (t *lsTable) appendRow(rec []byte, r lsRow) []byte {
	id := r.ID[:min(len(r.ID), display.IDLen)]
	rec = t.appendCell(rec, 0, id, display.Len(id))
	rec = t.appendASCII(rec, 1, func(b []byte) []byte { return appendHuman(b, r.Size) })
	rec = t.appendShared(rec, 2, r.Media, t.media)
	rec = t.appendShared(rec, 3, r.Tool, t.tool)
	rec = t.appendShared(rec, 4, r.Session, t.session)
	rec = t.appendShared(rec, 5, r.Source, t.source)
	rec = t.appendASCII(rec, 6, func(b []byte) []byte { return strconv.AppendInt(b, int64(r.Refs), 10) })
	sum, w := cellLen(r.Summary, t.wide[7])
	return t.appendCell(rec, 7, sum, w)
}

// maxCell is the most code points a cell has: its record gives its size
// in two bytes (see appendCell), and a code point takes up to four. Only
// the summary's, on a terminal of more columns, would have more.
const maxCell = 1<<16/4 - 1

// appendCell appends s, the cell of column i, n code points wide, as
// its size and its width (two bytes each: a cell is at most maxCell
// code points) then its bytes, and widens the column to fit it.
func (t *lsTable) appendCell(rec []byte, i int, s string, n int) []byte {
	if i < lsCols-1 {
		t.width[i] = max(t.width[i], n)
	}
	rec = append(rec, byte(len(s)>>8), byte(len(s)), byte(n>>8), byte(n))
	return append(rec, s...)
}

// appendASCII is appendCell of the ASCII text that format appends.
func (t *lsTable) appendASCII(rec []byte, i int, format func([]byte) []byte) []byte {
	at := len(rec)
	rec = format(append(rec, 0, 0, 0, 0))
	n := len(rec) - at - 4
	rec[at], rec[at+1], rec[at+2], rec[at+3] = byte(n>>8), byte(n), byte(n>>8), byte(n)
	if i < lsCols-1 {
		t.width[i] = max(t.width[i], n)
	}
	return rec
}

// appendShared is appendCell of mk(s), the cell of column i, made and
// measured once a run of rows with value s.
func (t *lsTable) appendShared(rec []byte, i int, s string, mk func(string) string) []byte {
	m := &t.memo[i]
	if m.in != s || m.out == "" {
		m.in, m.out = s, mk(s)
		m.w = display.Len(m.out) // once a run
	}
	return t.appendCell(rec, i, m.out, m.w)
}

func (t *lsTable) media(s string) string   { m, _, _ := strings.Cut(s, ";"); return cell(m, t.wide[2]) }
func (t *lsTable) tool(s string) string    { return cell(s, t.wide[3]) }
func (t *lsTable) session(s string) string { return cell(s, t.wide[4]) }

func (t *lsTable) source(s string) string {
	if rel, err := filepath.Rel(t.base, s); t.base != "" && err == nil && filepath.IsAbs(s) && !strings.HasPrefix(rel, "..") {
		s = rel
	}
	return cell(s, t.srcWide)
}

// fit narrows the columns, once every row is measured, to what a
// terminal shows.
func (t *lsTable) fit() {
	if t.columns == 0 {
		return
	}
	// The source and the summary share what the other columns leave of
	// the line, the source at most half of it.
	used := 0
	for i, n := range t.width[:lsCols-1] {
		if i != 5 {
			used += n + 2
		}
	}
	room := max(t.columns-used-2, 16)
	t.width[5] = min(t.width[5], room/2)
	t.wide[5], t.wide[7] = t.width[5], room-t.width[5]
}

// appendLine appends the line of the row of cells c to dst. A cell that
// is wider than its column is cut again; one that fits is as
// display.Line would make it.
func (t *lsTable) appendLine(dst []byte, c *lsCells) []byte {
	for i, s := range c.s[:lsCols-1] {
		n := c.w[i]
		if n > t.width[i] {
			s = display.Line(s, t.width[i])
			n = display.Len(s)
		}
		dst = append(dst, s...)
		for ; n < t.width[i]+2; n++ {
			dst = append(dst, ' ')
		}
	}
	last := c.s[lsCols-1]
	if c.w[lsCols-1] > t.wide[7] {
		last = display.Line(last, t.wide[7])
	}
	return append(append(dst, last...), '\n')
}

// cell makes s one table cell: one line, no tabs, "-" when empty.
func cell(s string, n int) string {
	s, _ = cellLen(s, n)
	return s
}

// cellLen returns cell(s, n) and its length in code points.
func cellLen(s string, n int) (string, int) {
	s, w := display.LineLen(s, n)
	if s == "" {
		return "-", 1
	}
	return s, w
}
