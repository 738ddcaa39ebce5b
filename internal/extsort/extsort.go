// Package extsort sorts records of a fixed size by their bytes in bounded
// memory: past a given number of bytes held, a Sorter sorts them and
// spills them as a run to a temporary file, and merges the runs when it
// is read. The registry builds its indexes with it. A Table keeps records
// already sorted in a temporary file and finds one by its key reading one
// block of it.
package extsort

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
)

// Spill is a temporary file that sorters and their caller put what they
// do not hold in memory in. It is made on the first Write and unlinked at
// once, so that it is gone with its process whatever happens. Its zero
// value is ready to use; Close releases it.
type Spill struct {
	f    *os.File
	size int64
	err  error // the first failure
}

// Chunk is a part of a spill file.
type Chunk struct{ Off, N int64 }

// Write appends p to the spill file and returns where it is. A failure is
// kept, for Err.
func (s *Spill) Write(p []byte) Chunk {
	if s.Open() != nil {
		return Chunk{}
	}
	c := Chunk{s.size, int64(len(p))}
	if _, err := s.f.WriteAt(p, s.size); err != nil {
		s.err = err
	}
	s.size += int64(len(p))
	return c
}

// Open creates the spill file, which Write otherwise does when it first
// writes, so that a caller finds out that it cannot be made before it
// does what it could not undo; it returns Err.
func (s *Spill) Open() error {
	if s.err == nil && s.f == nil {
		f, err := os.CreateTemp("", ".transcript-tool-spill-*")
		if err != nil {
			s.err = fmt.Errorf("temporary file: %w", err)
			return s.err
		}
		os.Remove(f.Name())
		s.f = f
	}
	return s.err
}

// Err returns the first failure of a Write, if any: what was spilled is
// then incomplete.
func (s *Spill) Err() error { return s.err }

// Reader returns a reader of c.
func (s *Spill) Reader(c Chunk) *bufio.Reader {
	return bufio.NewReaderSize(s.Section(c), 16<<10)
}

// Section returns c, to read at any offset, from any goroutine.
func (s *Spill) Section(c Chunk) *io.SectionReader {
	return io.NewSectionReader(s.f, c.Off, c.N)
}

// Close releases the spill file.
func (s *Spill) Close() {
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
}

// Sorter sorts records of one size by their bytes, in bounded memory:
// past its limit of bytes held, it sorts what it holds and spills it as
// a run, and the runs are merged when it is read.
type Sorter struct {
	size, limit int
	sp          *Spill
	held        []byte
	runs        []Chunk
	n           int64
}

// NewSorter returns a sorter of records of size bytes that holds up to
// about limit bytes of them before it spills them to sp.
func NewSorter(size, limit int, sp *Spill) *Sorter {
	return &Sorter{size: size, limit: limit, sp: sp}
}

// Add adds a copy of rec, of the sorter's size.
func (s *Sorter) Add(rec []byte) {
	s.held = append(s.held, rec...)
	s.n++
	if len(s.held) >= s.limit {
		s.spillRun()
	}
}

// Len returns the number of records added.
func (s *Sorter) Len() int64 { return s.n }

// sortKey is a record held, to sort: its first eight bytes as a number,
// which tells most records apart without comparing their bytes, and its
// place in held.
type sortKey struct {
	prefix uint64
	i      int
}

func (s *Sorter) sortHeld() {
	n := len(s.held) / s.size
	rec := func(i int) []byte { return s.held[i*s.size : (i+1)*s.size] }
	keys := make([]sortKey, n)
	var pad [8]byte
	for i := range keys {
		r := rec(i)
		if len(r) < 8 {
			r = append(pad[:0], r...)[:8]
		}
		keys[i] = sortKey{binary.BigEndian.Uint64(r), i}
	}
	slices.SortFunc(keys, func(a, b sortKey) int {
		if a.prefix != b.prefix {
			return cmp.Compare(a.prefix, b.prefix)
		}
		return bytes.Compare(rec(a.i), rec(b.i))
	})
	sorted := make([]byte, 0, len(s.held))
	for _, k := range keys {
		sorted = append(sorted, rec(k.i)...)
	}
	s.held = sorted
}

func (s *Sorter) spillRun() {
	s.sortHeld()
	s.runs = append(s.runs, s.sp.Write(s.held))
	s.held = s.held[:0]
}

// Each calls fn with every record added, in order; the record is fn's
// only until it returns. It is called once.
func (s *Sorter) Each(fn func(rec []byte) error) error {
	if len(s.runs) == 0 {
		s.sortHeld()
		for b := s.held; len(b) > 0; b = b[s.size:] {
			if err := fn(b[:s.size]); err != nil {
				return err
			}
		}
		return nil
	}
	if len(s.held) > 0 {
		s.spillRun()
	}
	if s.sp.err != nil {
		return s.sp.err
	}
	type run struct {
		r    *bufio.Reader
		head []byte
	}
	runs := make([]*run, 0, len(s.runs))
	next := func(r *run) (bool, error) {
		_, err := io.ReadFull(r.r, r.head)
		if err == io.EOF {
			return false, nil
		}
		return err == nil, err
	}
	for _, c := range s.runs {
		r := &run{s.sp.Reader(c), make([]byte, s.size)}
		if ok, err := next(r); err != nil {
			return err
		} else if ok {
			runs = append(runs, r)
		}
	}
	// A heap of the runs by their heads: a few compares a record
	// however many runs there are.
	less := func(i, j int) bool { return bytes.Compare(runs[i].head, runs[j].head) < 0 }
	down := func(i int) {
		for {
			least := i
			if c := 2*i + 1; c < len(runs) && less(c, least) {
				least = c
			}
			if c := 2*i + 2; c < len(runs) && less(c, least) {
				least = c
			}
			if least == i {
				return
			}
			runs[i], runs[least] = runs[least], runs[i]
			i = least
		}
	}
	for i := len(runs)/2 - 1; i >= 0; i-- {
		down(i)
	}
	for len(runs) > 0 {
		if err := fn(runs[0].head); err != nil {
			return err
		}
		ok, err := next(runs[0])
		if err != nil {
			return err
		}
		if !ok {
			runs[0] = runs[len(runs)-1]
			runs = runs[:len(runs)-1]
		}
		down(0)
	}
	return nil
}
