package registry

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"sync"

	"github.com/transcript-tool/transcript-tool/store"
)

// Listing is the artifacts of a registry, newest first, each with its
// newest record and the number of places that refer to it, read in
// bounded memory: a listing of millions of records holds a few of them
// at a time. A registry that is one indexed segment, perhaps followed by
// small ones, is listed through the segment's index; any other is read
// twice, its places sorted on disk in between (see
// docs/registry-index.md, # Listings).
type Listing struct {
	s     *Store
	files []*regFile
	rf    *regFile
	ix    *index
	m     *merged  // when there is no index to list through
	ov    *overlay // the segments after the indexed one, if any
	dec   decoder
	line  []byte // a bad line
	sum   uint32 // the CRC-32C of the segment's lines Scan read
}

// ErrIndexChanged is the error of Listing.Scan when the registry no
// longer has the lines its index, or the listing's first read, found:
// it was changed in place.
var ErrIndexChanged = errors.New("the registry changed under its index")

// Listing returns the listing of the registry, or, with keep, of the
// records keep keeps (keys, if any, name them, as to RecordsMatching),
// passing bad each line that holds no artifact's record: one that does
// not parse, is too long, or whose hash is not an artifact id. Without
// keep, a registry that is one segment of at least 1 MiB of a backend
// whose files have IDs (a local folder), perhaps followed by segments of
// at most 4 MiB together (whose artifacts it has at most 4 MiB of lines
// of), is listed through that segment's index, which Listing writes when
// it has none or one that does not cover every whole line of it. The
// caller closes it.
func (s *Store) Listing(ctx context.Context, keys []Key, keep func(Record) bool, bad func(*BadLineError)) (*Listing, error) {
	files, err := s.openRegistry(ctx)
	if err != nil {
		return nil, err
	}
	l := &Listing{s: s, files: files}
	if keep == nil && (len(files) == 1 && files[0].from == 0 && indexed(files[0]) || overlaid(files)) {
		l.rf = files[0]
		if l.ix, err = s.listingIndex(ctx, l.rf); err != nil {
			closeAll(files)
			return nil, err
		}
	}
	// The overlay's bad lines, told after the index's; none told if the
	// registry is merged instead, which tells them all.
	var obad []*BadLineError
	if l.ix != nil && len(files) > 1 {
		var collect func(*BadLineError)
		if bad != nil {
			collect = func(e *BadLineError) { obad = append(obad, e) }
		}
		l.ov, err = l.newOverlay(ctx, collect)
		switch {
		case errors.Is(err, errOverlayLarge):
			l.ix.close()
			l.rf, l.ix = nil, nil
		case err != nil:
			l.Close()
			return nil, err
		}
	}
	if l.ix == nil {
		if l.m, err = s.merge(ctx, files, keys, keep, bad); err != nil {
			closeAll(files)
			return nil, err
		}
		return l, nil
	}
	if bad != nil {
		if err := l.badLines(bad); err != nil {
			l.Close()
			return nil, err
		}
		for _, e := range obad {
			bad(e)
		}
	}
	return l, nil
}

// listingIndex returns the index of rf, a segment that should have one,
// writing it when it has none or one that does not cover every whole
// line of it; nil when it cannot be written.
func (s *Store) listingIndex(ctx context.Context, rf *regFile) (*index, error) {
	ix := s.loadIndex(ctx, rf)
	if ix != nil && coversAll(rf, ix) {
		return ix, nil
	}
	if ix != nil {
		ix.close()
	}
	rd := &recordReader{s: s, ctx: ctx, fn: func(Record, Pos) error { return nil }}
	if err := rd.whole(rf, []Key{}, nil); err != nil {
		return nil, err
	}
	if ix = s.loadIndex(ctx, rf); ix != nil && !coversAll(rf, ix) {
		ix.close()
		ix = nil
	}
	return ix, nil
}

// coversAll reports whether ix covers every whole line of rf: past it
// there is at most a torn line, of no newline.
func coversAll(rf *regFile, ix *index) bool {
	n := rf.size - ix.covered
	if n > maxLine {
		return false
	}
	tail := make([]byte, n)
	if _, err := rf.f.ReadAt(tail, ix.covered); err != nil {
		return false
	}
	return bytes.IndexByte(tail, '\n') < 0
}

// Close closes the registry's files.
func (l *Listing) Close() {
	if l.ix != nil {
		l.ix.close()
	}
	if l.m != nil {
		l.m.close()
	}
	closeAll(l.files)
}

// readLine returns line n (from 0) of the segment, and where it starts,
// checking that it is one line; nil when it is over maxLine, with its
// size.
func (l *Listing) readLine(n uint32) (line []byte, off, size int64, err error) {
	off, end, err := l.ix.span(n)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("registry index %s: %w", l.s.where(indexHandle(l.rf.h)), err)
	}
	if end-off > maxLine {
		return nil, off, end - off, nil
	}
	from := max(off-1, 0)
	l.line = slices.Grow(l.line[:0], int(end-from))[:end-from]
	if _, err := l.rf.f.ReadAt(l.line, from); err != nil {
		return nil, 0, 0, fmt.Errorf("read registry %s: %w", l.rf.path, err)
	}
	line = l.line[off-from:]
	if (off > 0 && l.line[0] != '\n') || bytes.IndexByte(line, '\n') != len(line)-1 {
		return nil, 0, 0, fmt.Errorf("%s: %w", l.rf.path, ErrIndexChanged)
	}
	return line, off, end - off, nil
}

// Len returns the number of artifacts the listing has: Scan passes
// fewer only when it fails.
func (l *Listing) Len() int64 {
	if l.m != nil {
		return l.m.narts
	}
	if l.ov != nil {
		return l.ix.narts - int64(len(l.ov.hidden)) + int64(len(l.ov.extra))
	}
	return l.ix.narts
}

// scanWindow is how many lines of the segment Scan maps to the artifacts
// they show at once (a shownLine each): a segment of any length is read
// in bounded memory, its artifacts read again for each window. A
// variable for tests.
var scanWindow int64 = 1 << 18

// shownLine is the artifact a line shows in a listing, for Scan: its
// rank plus one (0: none), the place in the line, the number of places
// that refer to it, and where the index says the line is.
type shownLine struct {
	rank, place, refs, size uint32
	off                     int64
}

// ScanFunc is what Scan calls for each artifact of a listing: w tells
// which of Scan's workers calls it, rank is the artifact's rank in the
// listing, newest first (0 for the newest), r its newest record, at
// where its line is, and refs the number of distinct places (source,
// entry, site) its records name (records that differ only in their
// creation time count once).
type ScanFunc func(w int, rank int64, r Record, at Pos, refs int) error

// Scan calls fn for each artifact of the registry with its newest record
// (by creation time, then by place in the registry, later first). It
// passes them in the registry's order, not the listing's, so that the
// registry is read once, in large blocks, each record decoded once; the
// caller puts what it makes of them in order by rank. The records are
// decoded by workers goroutines at once, each calling fn with its
// number, from 0 to workers-1: calls with the same number never
// overlap. A line the listing found must be the line the registry has
// there, and the bytes an index covers those it was made of, or Scan
// fails with ErrIndexChanged, perhaps once fn has had some artifacts:
// the caller acts on them only once Scan returns nil. Scan is called
// once.
func (l *Listing) Scan(workers int, fn ScanFunc) error {
	p := startScan(max(workers, 1), fn)
	if l.m != nil {
		return p.wait(l.m.scan(p))
	}
	shown := make([]shownLine, min(scanWindow, l.ix.nlines))
	var err error
	for lo := int64(0); lo < l.ix.nlines && err == nil; lo += scanWindow {
		hi := min(lo+scanWindow, l.ix.nlines)
		clear(shown)
		if err = l.shownIn(lo, hi, shown); err == nil {
			err = l.scanLines(lo, hi, shown, p)
		}
	}
	if err == nil && l.sum != l.ix.sum {
		// Every line the index covers was read: they are not those
		// it was made of, though each is where and as long as it says
		// (a line changed in place, keeping its length, where no
		// sample looks).
		err = fmt.Errorf("%s: %w", l.rf.path, ErrIndexChanged)
	}
	if err == nil && l.ov != nil {
		err = l.ov.scan(l.files, p)
	}
	return p.wait(err)
}

// shownIn sets shown[n-lo] for each artifact shown from a line n of
// [lo, hi).
func (l *Listing) shownIn(lo, hi int64, shown []shownLine) error {
	rk := ranker{o: l.ov}
	err := l.ix.eachArt(func(rank int64, b []byte) (bool, error) {
		n := int64(^binary.BigEndian.Uint32(b[12:]))
		if n < lo || n >= hi {
			return true, nil
		}
		refs, listed := binary.BigEndian.Uint32(b[20:]), rank
		if l.ov != nil {
			var ok bool
			if listed, ok = rk.rank(rank); !ok {
				return true, nil // its newest record is in a later segment
			}
			if r, ok := l.ov.refs[rank]; ok {
				refs = r
			}
		}
		size := binary.BigEndian.Uint32(b[32:])
		if shown[n-lo].rank != 0 || size > maxLine {
			return false, errors.New("a bad line offset")
		}
		shown[n-lo] = shownLine{rank: uint32(listed + 1), place: ^binary.BigEndian.Uint32(b[16:]),
			refs: refs, size: size, off: int64(binary.BigEndian.Uint64(b[24:]))}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("registry index %s: %w", l.s.where(indexHandle(l.rf.h)), err)
	}
	return nil
}

// scanLines reads lines [lo, hi) of the segment in order and hands p
// those that show an artifact.
func (l *Listing) scanLines(lo, hi int64, shown []shownLine, p *scanPool) error {
	start, _, err := l.ix.span(uint32(lo))
	if err != nil {
		return fmt.Errorf("registry index %s: %w", l.s.where(indexHandle(l.rf.h)), err)
	}
	if start > 0 {
		var nl [1]byte
		if _, err := l.rf.f.ReadAt(nl[:], start-1); err != nil {
			return fmt.Errorf("read registry %s: %w", l.rf.path, err)
		}
		if nl[0] != '\n' {
			return fmt.Errorf("%s: %w", l.rf.path, ErrIndexChanged)
		}
	}
	br := bufio.NewReaderSize(io.NewSectionReader(l.rf.f, start, l.ix.covered-start), maxLine+1)
	off := start
	for n := lo; n < hi; n++ {
		line, err := br.ReadSlice('\n')
		size := int64(len(line))
		l.sum = crc32.Update(l.sum, castagnoli, line)
		for errors.Is(err, bufio.ErrBufferFull) {
			// A line over maxLine: none the listing shows.
			line = nil
			var more []byte
			more, err = br.ReadSlice('\n')
			size += int64(len(more))
			l.sum = crc32.Update(l.sum, castagnoli, more)
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return fmt.Errorf("%s: %w", l.rf.path, ErrIndexChanged)
			}
			return fmt.Errorf("read registry %s: %w", l.rf.path, err)
		}
		if sh := shown[n-lo]; sh.rank != 0 {
			if sh.off != off || int64(sh.size) != size {
				return fmt.Errorf("%s: %w", l.rf.path, ErrIndexChanged)
			}
			if line == nil {
				return fmt.Errorf("%s: %w", l.rf.path, ErrIndexChanged)
			}
			sl := scanLine{rank: int64(sh.rank) - 1, place: int(sh.place), refs: int(sh.refs), n: n, off: off, path: l.rf.path}
			if err := p.add(sl, line); err != nil {
				return err
			}
		}
		off += size
	}
	// Lines made one, or one split in two, with no line shown after
	// them in the window (the overlay hides their artifacts, or they
	// are older records) leave the lines read ending elsewhere than the
	// window: the next window checks only the newline before it.
	end := l.ix.covered
	if hi < l.ix.nlines {
		if end, _, err = l.ix.span(uint32(hi)); err != nil {
			return fmt.Errorf("registry index %s: %w", l.s.where(indexHandle(l.rf.h)), err)
		}
	}
	if off != end {
		return fmt.Errorf("%s: %w", l.rf.path, ErrIndexChanged)
	}
	return nil
}

// scanBatchSize is how many bytes of lines Scan hands a worker at once:
// a variable for tests.
var scanBatchSize = 256 << 10

// scanLine is a line of a batch of Scan: the artifact it shows (its
// rank, its place in the line, the places that refer to it), the line's
// number from 0, where it starts in its file, and where it ends in the
// batch's bytes.
type scanLine struct {
	rank        int64
	place, refs int
	n, off      int64
	end         int
	path        string
}

// scanBatch is lines of the segment for a worker of Scan to decode.
type scanBatch struct {
	buf   []byte
	lines []scanLine
}

// scanPool is Scan's workers, and the batches of lines that go round
// between them and the reader: a fixed number, so that a scan holds
// a few hundred KB of lines however long the segment is.
type scanPool struct {
	batch   *scanBatch // being filled
	work    chan *scanBatch
	free    chan *scanBatch
	failed  chan struct{} // closed at the first failure of a worker
	errOnce sync.Once
	err     error
	wg      sync.WaitGroup
}

// errScanStopped stops the reader of a scan whose worker failed.
var errScanStopped = errors.New("scan stopped")

func startScan(workers int, fn ScanFunc) *scanPool {
	p := &scanPool{work: make(chan *scanBatch, workers), free: make(chan *scanBatch, 2*workers+1),
		failed: make(chan struct{})}
	for range 2 * workers {
		p.free <- &scanBatch{}
	}
	p.batch = &scanBatch{}
	for w := range workers {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			var dec decoder
			for b := range p.work {
				if err := p.decode(&dec, w, b, fn); err != nil {
					p.fail(err)
				}
				b.buf, b.lines = b.buf[:0], b.lines[:0]
				p.free <- b
			}
		}()
	}
	return p
}

// add hands the pool line, which shows an artifact as l says, copied.
func (p *scanPool) add(l scanLine, line []byte) error {
	b := p.batch
	b.buf = append(b.buf, line...)
	l.end = len(b.buf)
	b.lines = append(b.lines, l)
	if len(b.buf) < scanBatchSize {
		return nil
	}
	p.work <- b
	select {
	case p.batch = <-p.free:
		return nil
	case <-p.failed:
		p.batch = nil
		return errScanStopped
	}
}

// decode passes fn, as worker w, the artifacts of the lines of b.
func (p *scanPool) decode(dec *decoder, w int, b *scanBatch, fn ScanFunc) error {
	select {
	case <-p.failed:
		return nil
	default:
	}
	start := 0
	for _, l := range b.lines {
		line := b.buf[start:l.end]
		start = l.end
		at := Pos{Path: l.path, Line: int(l.n) + 1, Offset: l.off}
		err := placeIn(dec, line, l.path, l.place, func(r Record) error {
			return fn(w, l.rank, r, at, l.refs)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (p *scanPool) fail(err error) {
	p.errOnce.Do(func() {
		p.err = err
		close(p.failed)
	})
}

// wait hands the workers the last batch, unless err, the reader's error,
// stopped it, and returns the first error of the scan once every worker
// is done.
func (p *scanPool) wait(err error) error {
	if err == nil && p.batch != nil && len(p.batch.lines) > 0 {
		p.work <- p.batch
	}
	close(p.work)
	p.wg.Wait()
	if p.err != nil {
		return p.err // errScanStopped is the reader's only when p.err is set
	}
	return err
}

// placeIn passes fn place number place of the record of line, a line
// of the registry file at path that a listing found to hold it; a line
// that does not fails with ErrIndexChanged.
func placeIn(dec *decoder, line []byte, path string, place int, fn func(Record) error) error {
	var r Record
	if line == nil || dec.decode(line, &r) != nil {
		return fmt.Errorf("%s: %w", path, ErrIndexChanged)
	}
	i := 0
	found := false
	err := r.places(func(p Record) error {
		i++
		if i-1 == place {
			found = true
			return fn(p)
		}
		return nil
	})
	if err == nil && !found {
		return fmt.Errorf("%s: %w", path, ErrIndexChanged)
	}
	return err
}

// badLines passes bad each line the index always returns, but the
// header of a compacted segment, a few thousand line numbers at a time.
func (l *Listing) badLines(bad func(*BadLineError)) error {
	var lineErr error // of a line, not of the index
	err := l.ix.eachAlways(func(n uint32) error {
		line, off, size, err := l.readLine(n)
		if err != nil {
			lineErr = err
			return err
		}
		if off == 0 && l.rf.header > 0 {
			return nil
		}
		at := BadLineError{Path: l.rf.path, Line: int(n) + 1, Offset: off}
		var (
			r    Record
			uerr error
		)
		if line != nil {
			uerr = l.dec.decode(line, &r)
		}
		switch {
		case line == nil:
			at.Err = &LineTooLongError{Size: size}
		case uerr != nil || r.Hash == "":
			at.Err = recordError(line, uerr)
		default:
			_, err := store.ParseDigest(r.Hash)
			if err == nil {
				lineErr = fmt.Errorf("%s: %w", l.rf.path, ErrIndexChanged)
				return lineErr
			}
			at.Err = err
		}
		bad(&at)
		return nil
	})
	switch {
	case lineErr != nil:
		return lineErr
	case err != nil:
		return fmt.Errorf("registry index %s: %w", l.s.where(indexHandle(l.rf.h)), err)
	}
	return nil
}
