package registry

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/transcript-tool/transcript-tool/internal/extsort"
	"github.com/transcript-tool/transcript-tool/store"
)

// merged is the listing of a registry that is not one indexed segment
// (several segments, a small one, a backend whose files have no IDs), or
// of the records a filter keeps, made in bounded memory from two reads
// of the registry's files: the first passes each place of each record
// kept to an external sorter, as an index is built (see appendPlace and
// newest), which gives each artifact's newest place and its number of
// distinct places; the second reads, in the files' order, only the lines
// of those newest places. The places are numbered in the order they are
// read (q), so that ties in creation time go to the later record, as
// when the registry is read whole.
type merged struct {
	s     *Store
	files []*regFile
	sp    extsort.Spill
	shown *extsort.Sorter // of shownSize, by q
	narts int64
}

// mergedWhere is the size of where a place's line is, after the place
// (see appendPlace): its offset, its file's number, its number in it.
const mergedWhere = 8 + 4 + 4

// shownSize is the size of an artifact's newest place as merged keeps
// them, in the order they were read: the place's q and its number in its
// line, the artifact's rank in the listing, its number of distinct
// places, and mergedWhere.
const shownSize = 4 + 4 + 8 + 4 + mergedWhere

// errTooMany is the error of a listing of more places than merged numbers.
var errTooMany = fmt.Errorf("over %d places, too many to list", uint64(math.MaxUint32))

// merge makes the merged listing of files: of the records that keep
// keeps, read through the indexes by keys (see RecordsMatching), or of
// all of them when keep is nil. It passes bad each line that holds no
// artifact's record, in registry order.
func (s *Store) merge(ctx context.Context, files []*regFile, keys []Key, keep func(Record) bool, bad func(*BadLineError)) (*merged, error) {
	m := &merged{s: s, files: files}
	places := extsort.NewSorter(placeHead+mergedWhere, maxHeld, &m.sp)
	var (
		rec  []byte
		q    uint64
		file int
		lp   = linePlaces{bad: bad}
	)
	rd := &recordReader{s: s, ctx: ctx, bad: bad, fn: func(p Record, at Pos) error {
		d, place, ok := lp.next(p, at)
		if !ok || (keep != nil && !keep(p)) {
			return nil
		}
		if q > math.MaxUint32 {
			return errTooMany
		}
		rec = appendPlace(rec[:0], d, p, uint32(q), place)
		rec = binary.BigEndian.AppendUint64(rec, uint64(at.Offset))
		rec = binary.BigEndian.AppendUint32(rec, uint32(file))
		places.Add(binary.BigEndian.AppendUint32(rec, uint32(at.Line)))
		q++
		return nil
	}}
	var err error
	for file = range files {
		lp.line = 0
		if err = rd.file(files[file], keys); err != nil {
			break
		}
	}
	var arts *extsort.Sorter
	if err == nil {
		arts, err = newest(places, &m.sp, mergedWhere)
	}
	if err == nil {
		m.narts = arts.Len()
		m.shown = extsort.NewSorter(shownSize, maxHeld, &m.sp)
		var rank uint64
		err = arts.Each(func(a []byte) error {
			// a: the newest place's timeKey, every bit flipped (q at
			// 12, its place at 16), refs, mergedWhere.
			rec = binary.BigEndian.AppendUint32(rec[:0], ^binary.BigEndian.Uint32(a[12:]))
			rec = binary.BigEndian.AppendUint32(rec, ^binary.BigEndian.Uint32(a[16:]))
			rec = binary.BigEndian.AppendUint64(rec, rank)
			m.shown.Add(append(rec, a[20:]...))
			rank++
			return nil
		})
	}
	if err == nil {
		err = m.sp.Err()
	}
	if err != nil {
		m.close()
		return nil, err
	}
	return m, nil
}

// linePlaces numbers the places of the records a recordReader passes
// on, each in its line, and parses each line's hash once, telling bad
// about one that is not an artifact id. Its line is set to 0 before
// each file.
type linePlaces struct {
	bad   func(*BadLineError)
	line  int // of the last place
	place int // the last place's number in its line
	d     store.Digest
	derr  error // of the line's hash
}

// next returns the artifact of place p, read at at, and its number in
// its line; ok is false when the line's hash is not an artifact id.
func (lp *linePlaces) next(p Record, at Pos) (d store.Digest, place int, ok bool) {
	if at.Line != lp.line {
		lp.line, lp.place = at.Line, 0
		if lp.d, lp.derr = store.ParseDigest(p.Hash); lp.derr != nil && lp.bad != nil {
			lp.bad(&BadLineError{Path: at.Path, Line: at.Line, Offset: at.Offset, Err: lp.derr})
		}
	} else {
		lp.place++
	}
	return lp.d, lp.place, lp.derr == nil
}

// close releases the listing's temporary file.
func (m *merged) close() { m.sp.Close() }

// scan is Listing.Scan of m: it reads the lines of the artifacts' newest
// places in the order the first read found them and hands them to p.
func (m *merged) scan(p *scanPool) error {
	var lr lineReader
	err := m.shown.Each(func(rec []byte) error {
		place := int(binary.BigEndian.Uint32(rec[4:]))
		rank := int64(binary.BigEndian.Uint64(rec[8:]))
		refs := int(binary.BigEndian.Uint32(rec[16:]))
		off := int64(binary.BigEndian.Uint64(rec[20:]))
		file := int(binary.BigEndian.Uint32(rec[28:]))
		at := int(binary.BigEndian.Uint32(rec[32:]))
		if file >= len(m.files) {
			return fmt.Errorf("registry: list: a bad file number %d", file)
		}
		line, err := lr.at(m.files[file], off)
		if err != nil {
			return err
		}
		return p.add(scanLine{rank: rank, place: place, refs: refs, n: int64(at) - 1, off: off, path: m.files[file].path}, line)
	})
	if err == nil {
		err = m.sp.Err()
	}
	return err
}

// lineReader reads the lines of registry files at offsets that a
// listing found lines at, in 1 MiB blocks: over what lies between two
// lines of a file read in order when it is less than a block.
type lineReader struct {
	br  *bufio.Reader
	rf  *regFile
	pos int64 // of br in rf
}

// at returns the line at off in rf, valid until the next call.
func (lr *lineReader) at(rf *regFile, off int64) ([]byte, error) {
	if lr.br == nil {
		lr.br = bufio.NewReaderSize(nil, maxLine+1)
	}
	if rf != lr.rf || off < lr.pos || off-lr.pos > maxLine {
		lr.rf, lr.pos = rf, off
		lr.br.Reset(io.NewSectionReader(rf.f, off, rf.size-off))
	} else if _, err := lr.br.Discard(int(off - lr.pos)); err != nil {
		return nil, changed(rf, err)
	}
	line, err := lr.br.ReadSlice('\n')
	if err != nil {
		return nil, changed(rf, err)
	}
	lr.pos = off + int64(len(line))
	return line, nil
}

// changed is the error of reading a line of rf where the listing's first
// read found one: EOF or a line too long is the file changed, anything
// else a failure to read.
func changed(rf *regFile, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, bufio.ErrBufferFull) {
		return fmt.Errorf("%s: %w", rf.path, ErrIndexChanged)
	}
	return fmt.Errorf("read registry %s: %w", rf.path, err)
}
