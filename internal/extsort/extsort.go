// Package extsort sorts records of a fixed size by their bytes in bounded
// memory: past a given number of bytes held, a Sorter sorts them and
// spills them as a run to a temporary file, and merges the runs when it
// is read. The registry builds its indexes with it.
package extsort

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"sort"
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
	if s.err != nil {
		return Chunk{}
	}
	if s.f == nil {
		f, err := os.CreateTemp("", ".transcript-tool-index-*")
		if err != nil {
			s.err = err
			return Chunk{}
		}
		os.Remove(f.Name())
		s.f = f
	}
	c := Chunk{s.size, int64(len(p))}
	if _, err := s.f.WriteAt(p, s.size); err != nil {
		s.err = err
	}
	s.size += int64(len(p))
	return c
}

// Err returns the first failure of a Write, if any: what was spilled is
// then incomplete.
func (s *Spill) Err() error { return s.err }

// Reader returns a reader of c.
func (s *Spill) Reader(c Chunk) *bufio.Reader {
	return bufio.NewReaderSize(io.NewSectionReader(s.f, c.Off, c.N), 16<<10)
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

// flat is records of one size in a byte slice, to sort.
type flat struct {
	b    []byte
	size int
	tmp  []byte
}

func (f *flat) Len() int { return len(f.b) / f.size }
func (f *flat) Less(i, j int) bool {
	return bytes.Compare(f.b[i*f.size:(i+1)*f.size], f.b[j*f.size:(j+1)*f.size]) < 0
}
func (f *flat) Swap(i, j int) {
	a, b := f.b[i*f.size:(i+1)*f.size], f.b[j*f.size:(j+1)*f.size]
	copy(f.tmp, a)
	copy(a, b)
	copy(b, f.tmp)
}

func (s *Sorter) sortHeld() {
	sort.Sort(&flat{s.held, s.size, make([]byte, s.size)})
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
	for len(runs) > 0 {
		// Runs of the limit's bytes each, a few dozen for millions of
		// records: a linear look for the least head costs less than a
		// heap.
		least := 0
		for i, r := range runs {
			if bytes.Compare(r.head, runs[least].head) < 0 {
				least = i
			}
		}
		r := runs[least]
		if err := fn(r.head); err != nil {
			return err
		}
		ok, err := next(r)
		if err != nil {
			return err
		}
		if !ok {
			runs = append(runs[:least], runs[least+1:]...)
		}
	}
	return nil
}
