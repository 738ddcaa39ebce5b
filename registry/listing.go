package registry

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/transcript-tool/transcript-tool/store"
)

// Listing is the artifacts of a registry that is one indexed segment,
// newest first, read through the segment's index (see docs/registry-index.md,
// # Indexes), which keeps each artifact's newest record and the number
// of places that refer to it: a listing of millions of records holds a
// few of them at a time.
type Listing struct {
	s     *Store
	files []*regFile
	rf    *regFile
	ix    *index
	dec   decoder
	line  []byte // the lines of a page of artifacts, or a bad line
	one   []byte // a line of a page whose lines are far apart
	arts  []byte
}

// ErrIndexChanged is the error of Listing.Each when the segment no longer
// has the lines its index names: it was changed in place.
var ErrIndexChanged = errors.New("the registry changed under its index")

// Listing returns the listing of the registry, or nil when it has none:
// when it is not one segment of at least 1 MiB of a backend whose files
// have IDs (a local folder), or
// that segment's index cannot be written. It writes the index of a
// segment that has none, or one that does not cover every whole line of
// it. The caller closes it.
func (s *Store) Listing(ctx context.Context) (*Listing, error) {
	files, err := s.openRegistry(ctx)
	if err != nil {
		return nil, err
	}
	if len(files) != 1 || files[0].from > 0 {
		closeAll(files)
		return nil, nil
	}
	rf := files[0]
	ix := s.loadIndex(ctx, rf)
	if ix == nil || !coversAll(rf, ix) {
		if ix != nil {
			ix.close()
		}
		rd := &recordReader{s: s, ctx: ctx, fn: func(Record, Pos) error { return nil }}
		if err := rd.whole(rf, []Key{}, nil); err != nil {
			closeAll(files)
			return nil, err
		}
		if ix = s.loadIndex(ctx, rf); ix == nil || !coversAll(rf, ix) {
			if ix != nil {
				ix.close()
			}
			closeAll(files)
			return nil, nil
		}
	}
	return &Listing{s: s, files: files, rf: rf, ix: ix}, nil
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
	l.ix.close()
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

// Each calls fn for each artifact of the registry, newest first (by the
// creation time of its newest record, then by that record's place in
// the registry, later first), with that record, where its line is, and
// the number of distinct places (source, entry, site) its records name.
// Records that differ only in their creation time count once. With bad,
// it first passes it each line that holds no artifact's record: one that
// does not parse, is too long, or whose hash is not an artifact id.
func (l *Listing) Each(fn func(r Record, at Pos, refs int) error, bad func(*BadLineError)) error {
	if bad != nil {
		if err := l.badLines(bad); err != nil {
			return err
		}
	}
	const perRead = 16 << 10 / artSize
	for i := int64(0); i < l.ix.narts; i += perRead {
		b, err := l.ix.read(l.ix.artsAt()+artSize*i, artSize*int(min(perRead, l.ix.narts-i)))
		if err != nil {
			return fmt.Errorf("registry index %s: %w", l.s.where(indexHandle(l.rf.h)), err)
		}
		l.arts = append(l.arts[:0], b...)
		if err := l.page(fn); err != nil {
			return err
		}
	}
	return nil
}

// maxSpread bounds the bytes a listing reads at once for the lines of a
// page of artifacts: rows newest first are mostly lines near one
// another, read with one pread rather than one a line.
const maxSpread = 1 << 20

// page passes fn the artifacts of l.arts.
func (l *Listing) page(fn func(Record, Pos, int) error) error {
	lo, hi := int64(math.MaxInt64), int64(0)
	for b := l.arts; len(b) > 0; b = b[artSize:] {
		off, size := int64(binary.BigEndian.Uint64(b[24:])), int64(binary.BigEndian.Uint32(b[32:]))
		lo, hi = min(lo, max(off-1, 0)), max(hi, off+size)
	}
	near := hi-lo <= maxSpread && hi <= l.ix.covered
	if near {
		l.line = slices.Grow(l.line[:0], int(hi-lo))[:hi-lo]
		if _, err := l.rf.f.ReadAt(l.line, lo); err != nil {
			return fmt.Errorf("read registry %s: %w", l.rf.path, err)
		}
	}
	for b := l.arts; len(b) > 0; b = b[artSize:] {
		// The timeKey's bits are flipped: the line and the place are
		// at its end.
		n, place := ^binary.BigEndian.Uint32(b[12:]), int(^binary.BigEndian.Uint32(b[16:]))
		refs := int(binary.BigEndian.Uint32(b[20:]))
		off, size := int64(binary.BigEndian.Uint64(b[24:])), int64(binary.BigEndian.Uint32(b[32:]))
		from := max(off-1, 0)
		if off+size > l.ix.covered || size > maxLine {
			return fmt.Errorf("registry index %s: %w", l.s.where(indexHandle(l.rf.h)), errors.New("a bad line offset"))
		}
		var buf []byte
		if near {
			buf = l.line[from-lo : off+size-lo]
		} else {
			l.one = slices.Grow(l.one[:0], int(off+size-from))[:off+size-from]
			if _, err := l.rf.f.ReadAt(l.one, from); err != nil {
				return fmt.Errorf("read registry %s: %w", l.rf.path, err)
			}
			buf = l.one
		}
		line := buf[off-from:]
		if (off > 0 && buf[0] != '\n') || bytes.IndexByte(line, '\n') != len(line)-1 {
			return fmt.Errorf("%s: %w", l.rf.path, ErrIndexChanged)
		}
		if err := l.artifact(line, n, off, place, refs, fn); err != nil {
			return err
		}
	}
	return nil
}

// artifact passes fn the record of place number place of line, line n
// at off.
func (l *Listing) artifact(line []byte, n uint32, off int64, place, refs int, fn func(Record, Pos, int) error) error {
	var r Record
	if line == nil || l.dec.decode(line, &r) != nil {
		return fmt.Errorf("%s: %w", l.rf.path, ErrIndexChanged)
	}
	i := 0
	found := false
	err := r.places(func(p Record) error {
		if i == place {
			found = true
			return fn(p, Pos{Path: l.rf.path, Line: int(n) + 1, Offset: off}, refs)
		}
		i++
		return nil
	})
	if err == nil && !found {
		return fmt.Errorf("%s: %w", l.rf.path, ErrIndexChanged)
	}
	return err
}

// badLines passes bad each line the index always returns, but the
// header of a compacted segment.
func (l *Listing) badLines(bad func(*BadLineError)) error {
	lines, err := l.ix.lines(nil)
	if err != nil {
		return fmt.Errorf("registry index %s: %w", l.s.where(indexHandle(l.rf.h)), err)
	}
	for _, n := range lines {
		line, off, size, err := l.readLine(n)
		if err != nil {
			return err
		}
		if off == 0 && l.rf.header > 0 {
			continue
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
				return fmt.Errorf("%s: %w", l.rf.path, ErrIndexChanged)
			}
			at.Err = err
		}
		bad(&at)
	}
	return nil
}
