package migrate

import (
	"bufio"
	"io"
	"sync"
)

// The buffers that read and write a transcript, reused from one file to
// the next: a run over thousands of small transcripts would otherwise
// allocate, and clear, more than a megabyte for each.
var (
	writers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 1<<20) }}
	readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 256<<10) }}
)

// pooledWriter returns a buffered writer to w and the function that gives
// it back, to be called once it is flushed and no longer used.
func pooledWriter(w io.Writer) (*bufio.Writer, func()) {
	bw := writers.Get().(*bufio.Writer)
	bw.Reset(w)
	return bw, func() {
		bw.Reset(nil)
		writers.Put(bw)
	}
}

// pooledReader returns a buffered reader of r and the function that gives
// it back, to be called once nothing it returned is used.
func pooledReader(r io.Reader) (*bufio.Reader, func()) {
	br := readers.Get().(*bufio.Reader)
	br.Reset(r)
	return br, func() {
		br.Reset(nil)
		readers.Put(br)
	}
}
