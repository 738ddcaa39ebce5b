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
// (several segments, a small one, a backend whose files have no IDs),
// made in bounded memory from two reads of its files: the first passes
// every place of every record to an external sorter, as an index is built
// (see appendPlace and newest), which gives each artifact's newest place
// and its number of distinct places; the second reads, in the files'
// order, only the lines of those newest places. Lines are numbered across
// the files in the order they are read (g), so that ties in creation
// time go to the later record, as when the registry is read whole.
type merged struct {
	s     *Store
	files []*regFile
	// starts is, for each file, the number g of its first line, less
	// its lines not read (those of a compacted segment before it).
	starts []uint32
	sp     extsort.Spill
	shown  *extsort.Sorter // of shownSize, by g
	narts  int64
}

// shownSize is the size of an artifact's newest place, as merged keeps
// them in the order of the registry's lines: the line's number g and the
// place's in it, the artifact's rank in the listing, its number of
// distinct places, and where the line is (offset in its file, length).
const shownSize = 4 + 4 + 8 + 4 + 8 + 4

// merge makes the merged listing of files, passing bad each line that
// holds no artifact's record, in registry order.
func (s *Store) merge(ctx context.Context, files []*regFile, bad func(*BadLineError)) (*merged, error) {
	m := &merged{s: s, files: files}
	places := extsort.NewSorter(placeSize, maxHeld, &m.sp)
	var (
		dec  decoder
		rec  []byte
		next uint64 // g of the next file's first line
	)
	report := func(rf *regFile, n int, off int64, err error) {
		if bad != nil {
			bad(&BadLineError{Path: rf.path, Line: n, Offset: off, Err: err})
		}
	}
	for _, rf := range files {
		if err := ctx.Err(); err != nil {
			m.close()
			return nil, err
		}
		if next > math.MaxUint32 {
			m.close()
			return nil, fmt.Errorf("registry: over %d lines, too many to list", uint64(math.MaxUint32))
		}
		start := uint32(next)
		m.starts = append(m.starts, start)
		last := rf.lines // the number of the last line read
		_, err := rf.scan(nil, func(line []byte, n int, off int64) error {
			last = n
			g := uint64(start) + uint64(n-rf.lines-1)
			if g > math.MaxUint32 {
				return fmt.Errorf("registry: over %d lines, too many to list", uint64(math.MaxUint32))
			}
			var r Record
			if uerr := dec.decode(line, &r); uerr != nil || r.Hash == "" {
				report(rf, n, off, recordError(line, uerr))
				return nil
			}
			d, err := store.ParseDigest(r.Hash)
			if err != nil {
				report(rf, n, off, err)
				return nil
			}
			i := 0
			return r.places(func(p Record) error {
				rec = appendPlace(rec[:0], d, p, uint32(g), i, off, len(line))
				places.Add(rec)
				i++
				return nil
			})
		}, func(n int, off, size int64) error {
			last = n
			report(rf, n, off, &LineTooLongError{Size: size})
			return nil
		})
		if err != nil {
			m.close()
			return nil, fmt.Errorf("read registry %s: %w", rf.path, err)
		}
		next = uint64(start) + uint64(last-rf.lines)
	}
	arts, err := newest(places, &m.sp)
	if err == nil {
		m.narts = arts.Len()
		m.shown = extsort.NewSorter(shownSize, maxHeld, &m.sp)
		var rank uint64
		err = arts.Each(func(a []byte) error {
			// a: the newest place's timeKey, every bit flipped (g at
			// 12, its place at 16), refs, offset, length.
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
		return nil, fmt.Errorf("registry: list: %w", err)
	}
	return m, nil
}

// close releases the listing's temporary file.
func (m *merged) close() { m.sp.Close() }

// scan is Listing.Scan of m: it reads, file by file in order, the lines
// of the artifacts' newest places, in 1 MiB blocks.
func (m *merged) scan(fn func(rank int64, r Record, at Pos, refs int) error) error {
	var (
		dec  decoder
		fi   = -1
		rf   *regFile
		br   *bufio.Reader
		pos  int64 // of br in rf
		last = -1  // the file of the last line
	)
	err := m.shown.Each(func(rec []byte) error {
		g := binary.BigEndian.Uint32(rec)
		place := int(binary.BigEndian.Uint32(rec[4:]))
		rank := int64(binary.BigEndian.Uint64(rec[8:]))
		refs := int(binary.BigEndian.Uint32(rec[16:]))
		off := int64(binary.BigEndian.Uint64(rec[20:]))
		size := int64(binary.BigEndian.Uint32(rec[28:]))
		for fi+1 < len(m.files) && g >= m.starts[fi+1] {
			fi++
		}
		if fi != last {
			last, rf = fi, m.files[fi]
			br = bufio.NewReaderSize(io.NewSectionReader(rf.f, off, rf.size-off), maxLine+1)
			pos = off
		}
		if off < pos || size > maxLine {
			return fmt.Errorf("%s: %w", rf.path, ErrIndexChanged)
		}
		if _, err := br.Discard(int(off - pos)); err != nil {
			return changed(rf, err)
		}
		line, err := br.Peek(int(size))
		if err != nil {
			return changed(rf, err)
		}
		var r Record
		if line[size-1] != '\n' || dec.decode(line, &r) != nil {
			return fmt.Errorf("%s: %w", rf.path, ErrIndexChanged)
		}
		at := Pos{Path: rf.path, Line: int(g-m.starts[fi]) + rf.lines + 1, Offset: off}
		i, found := 0, false
		err = r.places(func(p Record) error {
			if i == place {
				found = true
				return fn(rank, p, at, refs)
			}
			i++
			return nil
		})
		if err == nil && !found {
			return fmt.Errorf("%s: %w", rf.path, ErrIndexChanged)
		}
		pos = off
		return err
	})
	if err == nil {
		err = m.sp.Err()
	}
	return err
}

// changed is the error of reading a line of rf where the listing's first
// read found one: EOF is the file changed, anything else a failure to read.
func changed(rf *regFile, err error) error {
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: %w", rf.path, ErrIndexChanged)
	}
	return fmt.Errorf("read registry %s: %w", rf.path, err)
}
