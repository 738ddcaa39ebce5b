package inspect

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"sync"

	"github.com/transcript-tool/transcript-tool/externalizer"
	"github.com/transcript-tool/transcript-tool/format"
	"github.com/transcript-tool/transcript-tool/internal/canon"
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/session"
	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// Default limits of Check.
const (
	// DefaultMaxInline is migrate's default threshold: a tree migrated
	// with the defaults passes a check with the defaults.
	DefaultMaxInline = externalizer.DefaultThreshold
	// DefaultMaxLine leaves room for a large inline image or diff but
	// catches the lines that make agents choke (lines of hundreds of MB
	// are seen in the field).
	DefaultMaxLine = 1_000_000
)

// CheckOptions are the limits Check enforces; a limit of 0 is not checked.
type CheckOptions struct {
	// MaxInline is the size, in JSON bytes, from which a payload site still
	// inline is a violation: the payloads migrate --threshold MaxInline
	// moves. A placeholder is far smaller, so migrated sites pass, and so
	// do those migrate keeps because moving them would not shorten their
	// line (measured with the placeholders of the store migrate writes to
	// by default, or of Store).
	MaxInline int
	// MaxLine is the longest line allowed, in bytes without its end of
	// line.
	MaxLine int64
	// MaxFile is the largest file allowed, in bytes on disk.
	MaxFile int64
	// Store is the store every reference of a migrated entry must restore
	// from: each artifact present and hashing to its name, the rebuilt
	// line hashing to the SHA-256 its marker records. "" is each
	// transcript's own default store (session.StoreFor).
	Store string
	// OpenStore opens the backend of a store: the command line's
	// location.Open.
	OpenStore store.OpenFunc `json:"-"`
	// NoReferences skips the check of references, which reads every
	// artifact referred to.
	NoReferences bool
	// Format names the transcripts' format instead of detecting it per
	// file.
	Format string
	// Jobs is how many files are checked at once; 0 means one per core,
	// and it is capped as session.Workers caps it. Findings are reported
	// in the same order whatever it is.
	Jobs int
}

// Kind is what a Finding is about.
type Kind string

// The kinds of Finding. The first four are violations.
const (
	KindInline    Kind = "inline"    // a payload over MaxInline still inline
	KindLine      Kind = "line"      // a line over MaxLine
	KindFile      Kind = "file"      // a file over MaxFile
	KindReference Kind = "reference" // a migrated entry that does not restore from Store
	// KindNote is information that is not a violation: a file of no known
	// format, of which only the sizes of lines and of the file are checked.
	KindNote Kind = "note"
	// KindUnreadable is a file that could not be opened or read to its
	// end: the check of that file is incomplete.
	KindUnreadable Kind = "unreadable"
)

// Violation reports whether a finding of kind k fails the check.
func (k Kind) Violation() bool {
	switch k {
	case KindInline, KindLine, KindFile, KindReference:
		return true
	}
	return false
}

// Finding is one violation, note or unreadable file.
type Finding struct {
	Kind    Kind   `json:"kind"`
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`   // 1-based; 0 for the whole file
	Offset  int64  `json:"offset,omitempty"` // byte offset of the line in the (decompressed) transcript
	Site    string `json:"site,omitempty"`   // JSON pointer of an inline payload within its entry
	Tool    string `json:"tool,omitempty"`
	Size    int64  `json:"size,omitempty"`
	Limit   int64  `json:"limit,omitempty"`
	Message string `json:"message"`
}

// CheckTotals sums up a check.
type CheckTotals struct {
	Files               int   `json:"files"` // unreadable ones included
	Lines               int64 `json:"lines"`
	Bytes               int64 `json:"bytes"` // JSONL bytes read
	Violations          int   `json:"violations"`
	FilesWithViolations int   `json:"filesWithViolations"`
	InlinePayloads      int   `json:"inlinePayloads"`
	LongLines           int   `json:"longLines"`
	LargeFiles          int   `json:"largeFiles"`
	BrokenReferences    int   `json:"brokenReferences"`
	Notes               int   `json:"notes"`
	Unreadable          int   `json:"unreadable"`
	// Stores are the stores references were checked against, sorted.
	Stores []string `json:"stores"`
}

func (t *CheckTotals) add(f Finding) {
	switch f.Kind {
	case KindInline:
		t.InlinePayloads++
	case KindLine:
		t.LongLines++
	case KindFile:
		t.LargeFiles++
	case KindReference:
		t.BrokenReferences++
	case KindNote:
		t.Notes++
	case KindUnreadable:
		t.Unreadable++
	}
	if f.Kind.Violation() {
		t.Violations++
	}
}

// Check checks the inputs and passes each finding to report, in the
// order of files and, within a file, of lines, as it is found (findings of
// a file checked ahead of its turn wait for it). It returns an error only
// when ctx is done; files that cannot be read are findings of
// KindUnreadable and the others go on.
func Check(ctx context.Context, inputs []session.Input, opts CheckOptions, report func(Finding)) (CheckTotals, error) {
	jobs := session.Workers(opts.Jobs, len(inputs))
	files := make([]*checked, len(inputs))
	for i := range files {
		files[i] = &checked{}
		files[i].cond = sync.NewCond(&files[i].mu)
	}
	// window bounds how far the workers run ahead of the reports.
	window := make(chan struct{}, 2*jobs)
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				err := checkFile(ctx, inputs[i], opts, files[i])
				files[i].finish(err)
			}
		}()
	}
	go func() {
		defer close(next)
		for i := range inputs {
			select {
			case window <- struct{}{}:
			case <-ctx.Done():
			}
			if ctx.Err() != nil {
				for _, c := range files[i:] {
					c.finish(ctx.Err())
				}
				return
			}
			next <- i
		}
	}()
	defer func() {
		// Workers whose files the reports never reached are waiting to
		// report: their findings go nowhere now.
		for _, c := range files {
			c.drop()
		}
		wg.Wait()
	}()

	totals := CheckTotals{Stores: []string{}}
	stores := map[string]bool{}
	for i, in := range inputs {
		totals.Files++
		before := totals.Violations
		c := files[i]
		err := c.drain(func(f Finding) {
			totals.add(f)
			report(f)
		})
		// The file's place in the window: taken before it was handed to
		// a worker, unless the check was cancelled first.
		select {
		case <-window:
		default:
		}
		totals.Lines += c.lines
		totals.Bytes += c.bytes
		if c.store != "" && !stores[c.store] {
			stores[c.store] = true
			totals.Stores = append(totals.Stores, c.store)
		}
		if err != nil && ctx.Err() != nil {
			return totals, ctx.Err()
		}
		if err != nil {
			f := Finding{Kind: KindUnreadable, File: in.Name(), Message: err.Error()}
			totals.add(f)
			report(f)
		}
		if totals.Violations > before {
			totals.FilesWithViolations++
		}
	}
	slices.Sort(totals.Stores)
	return totals, nil
}

// checked is one file being checked: its findings, held until the reports
// reach the file and then passed on as they come, and its counts.
type checked struct {
	mu   sync.Mutex
	cond *sync.Cond
	buf  []Finding
	emit func(Finding) // set once the reports have reached the file
	done bool
	err  error

	lines, bytes int64 // written by the worker only, read once done
	// store is the store the file's references were checked against, ""
	// when it had none; written by the worker only, read once done.
	store string
}

// maxHeld is the most findings of a file held before its turn; its worker
// then waits. Tests lower it.
var maxHeld = 4096

// found reports f, or holds it until the file's turn.
func (c *checked) found(f Finding) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.emit == nil && len(c.buf) >= maxHeld {
		c.cond.Wait()
	}
	if c.emit != nil {
		c.emit(f)
		return
	}
	c.buf = append(c.buf, f)
}

// finish marks the file checked, with the error that ended its check.
func (c *checked) finish(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.done {
		c.done, c.err = true, err
		c.cond.Broadcast()
	}
}

// drop discards the findings held and to come, for a Check that ended
// before it reached the file.
func (c *checked) drop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.emit == nil {
		c.buf = nil
		c.emit = func(Finding) {}
		c.cond.Broadcast()
	}
}

// drain passes the findings of the file to emit, those held and those to
// come, until the file is checked, and returns the error that ended it.
func (c *checked) drain(emit func(Finding)) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range c.buf {
		emit(f)
	}
	c.buf = nil
	c.emit = emit
	c.cond.Broadcast()
	for !c.done {
		c.cond.Wait()
	}
	return c.err
}

// checkFile checks one transcript, passing its findings to c.
func checkFile(ctx context.Context, in session.Input, opts CheckOptions, c *checked) error {
	path := in.Name()
	report := c.found
	t, fm, err := open(in, opts.Format)
	if err != nil {
		return err
	}
	defer t.Close()
	if opts.MaxFile > 0 && t.Size > opts.MaxFile {
		report(Finding{Kind: KindFile, File: path, Size: t.Size, Limit: opts.MaxFile,
			Message: fmt.Sprintf("file of %d bytes; limit %d", t.Size, opts.MaxFile)})
	}
	refs := references{dir: session.StoreFor(cmp.Or(opts.Store, in.Store), in.Path), open: opts.OpenStore, off: opts.NoReferences}
	var x *externalizer.Externalizer
	if fm != nil && opts.MaxInline > 0 {
		// Asked which sites migrate would move: not those whose moving
		// would not shorten their line. Its placeholders name artifacts
		// by the store migrate writes to by default, or --store.
		st, err := registry.Open(opts.OpenStore, refs.dir)
		if err != nil {
			return err
		}
		x = &externalizer.Externalizer{Format: fm, Threshold: opts.MaxInline, PathFor: session.PathFor(st, "")}
	}
	var sites []format.Site
	names := newToolNames()
	threshold := opts.MaxInline
	if threshold <= 0 {
		threshold = externalizer.DefaultThreshold
	}
	err = scan(ctx, t, threshold, true, func(l *line) error {
		c.lines++
		c.bytes += lineLen(l)
		at := Finding{File: path, Line: l.Num, Offset: l.Offset}
		if n := textLen(l); opts.MaxLine > 0 && n > opts.MaxLine {
			f := at
			f.Kind, f.Size, f.Limit = KindLine, n, opts.MaxLine
			f.Message = fmt.Sprintf("line of %d bytes; limit %d", n, opts.MaxLine)
			report(f)
		}
		if fm == nil {
			return nil
		}
		if l.tooLarge {
			// Fail closed: a gate that cannot look must not pass.
			f := at
			f.Kind, f.Size, f.Limit = KindInline, l.Len, int64(opts.MaxInline)
			f.Message = fmt.Sprintf("line of %d bytes too large to inspect in bounded memory (too much of it is numbers, literals or short strings): counted as an inline payload, since it cannot be shown to hold none", l.Len)
			report(f)
			return nil
		}
		start := transcript.JSONStart(l.Line)
		root, err := l.parse(start)
		if err != nil || root.Kind() != transcript.Object {
			return nil // no site, and no marker that could restore
		}
		names.see(fm, root)
		sites = sites[:0]
		if opts.MaxInline > 0 && root.Len() >= opts.MaxInline {
			sites = payloads(fm, root, opts.MaxInline, sites)
		}
		var moves []bool
		if x != nil {
			// Every line, sites or none: its tool calls name the results after it.
			var big *externalizer.BigLine
			if l.sk != nil {
				big = &externalizer.BigLine{Skeleton: l.sk, Src: l.src}
			}
			moves, err = x.Moves(root, sites, big)
			if errors.Is(err, externalizer.ErrNeedWhole) {
				moves = nil // every site counts, as it cannot be shown to stay
			} else if err != nil {
				return &transcript.InputError{Path: path, Line: l.Num, Offset: l.Offset, Err: err}
			}
		}
		if len(sites) > 0 {
			tools := names.line(sites)
			for i, s := range sites {
				if moves != nil && !moves[i] {
					continue // migrate keeps it: moving it would not shorten the line
				}
				f := at
				f.Kind, f.Site, f.Tool, f.Size, f.Limit = KindInline, oneLine(s.Path.String()), names.site(s, tools), l.size(s.Value), int64(opts.MaxInline)
				f.Message = fmt.Sprintf("inline payload of %d bytes at %s", f.Size, f.Site)
				if f.Tool != "" {
					f.Message += " (tool " + f.Tool + ")"
				}
				f.Message += fmt.Sprintf("; limit %d", opts.MaxInline)
				report(f)
			}
		}
		// A skeleton is of a line without a marker: no reference to check.
		if l.sk == nil && !refs.off && externalizer.HasMarker(l.Text) {
			c.store = refs.dir
			if err := refs.check(ctx, l.Text, start); err != nil {
				f := at
				f.Kind, f.Message = KindReference, "reference does not restore: "+err.Error()
				report(f)
			}
		}
		return nil
	})
	if err == nil && fm == nil {
		// Only now: a file that cannot be read is not of an unknown format.
		report(Finding{Kind: KindNote, File: path, Message: "unknown transcript format: only the sizes of lines and of the file are checked"})
	}
	return err
}

// references checks the references of one transcript's migrated lines
// against its store, opened at the first.
type references struct {
	dir     string
	open    store.OpenFunc
	off     bool
	restore externalizer.Opener
	err     error // why the store cannot be read
}

// check restores one line into nothing, checking every artifact it names.
func (r *references) check(ctx context.Context, text []byte, start int) error {
	if r.restore == nil && r.err == nil {
		if _, err := os.Stat(r.dir); errors.Is(err, fs.ErrNotExist) && !canon.IsURL(r.dir) {
			r.err = fmt.Errorf("no artifact store at %s", r.dir)
		} else if st, err := registry.Open(r.open, r.dir); err != nil {
			r.err = err
		} else {
			r.restore = st.Opener(ctx)
		}
	}
	if r.err != nil {
		return r.err
	}
	_, err := externalizer.RestoreTo(io.Discard, text, start, r.restore)
	return err
}

// String returns the finding as "FILE:LINE: MESSAGE", or "FILE: MESSAGE"
// for one about the whole file, the form compilers use and editors and CI
// logs link.
func (f Finding) String() string {
	if f.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", f.File, f.Line, f.Message)
	}
	return f.File + ": " + f.Message
}
