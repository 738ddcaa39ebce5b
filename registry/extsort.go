package registry

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"sort"
)

// maxHeld bounds the bytes each part of an index being built holds in
// memory (its line offsets, its keys, the places and the artifacts of
// its listing) before it spills them to a temporary file: an index of a
// registry of any size is built in a few MiB. A variable for tests.
var maxHeld = 2 << 20

// spill is a temporary file an index being built puts what it does not
// hold in memory in. It is unlinked as soon as it is made, so that it is
// gone with its process whatever happens.
type spill struct {
	f    *os.File
	size int64
	err  error // the first failure: no index is written
}

// chunk is a part of a spill file.
type chunk struct{ off, n int64 }

// write appends p to the spill file and returns where it is.
func (s *spill) write(p []byte) chunk {
	if s.err != nil {
		return chunk{}
	}
	if s.f == nil {
		f, err := os.CreateTemp("", ".transcript-tool-index-*")
		if err != nil {
			s.err = err
			return chunk{}
		}
		os.Remove(f.Name())
		s.f = f
	}
	c := chunk{s.size, int64(len(p))}
	if _, err := s.f.WriteAt(p, s.size); err != nil {
		s.err = err
	}
	s.size += int64(len(p))
	return c
}

// reader returns a reader of c.
func (s *spill) reader(c chunk) *bufio.Reader {
	return bufio.NewReaderSize(io.NewSectionReader(s.f, c.off, c.n), 16<<10)
}

func (s *spill) close() {
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
}

// sorter sorts records of size bytes each by their bytes, in bounded
// memory: past maxHeld bytes, it sorts what it holds and spills it as a
// run, and the runs are merged when it is read.
type sorter struct {
	size int
	sp   *spill
	held []byte
	runs []chunk
	n    int64 // records added
}

func (s *sorter) add(rec []byte) {
	s.held = append(s.held, rec...)
	s.n++
	if len(s.held) >= maxHeld {
		s.spillRun()
	}
}

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

func (s *sorter) sortHeld() {
	sort.Sort(&flat{s.held, s.size, make([]byte, s.size)})
}

func (s *sorter) spillRun() {
	s.sortHeld()
	s.runs = append(s.runs, s.sp.write(s.held))
	s.held = s.held[:0]
}

// each calls fn with every record added, in order; the record is fn's
// only until it returns. It is called once.
func (s *sorter) each(fn func(rec []byte) error) error {
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
		r := &run{s.sp.reader(c), make([]byte, s.size)}
		if ok, err := next(r); err != nil {
			return err
		} else if ok {
			runs = append(runs, r)
		}
	}
	for len(runs) > 0 {
		// Runs of maxHeld bytes each, a few dozen for millions of
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
