package migrate

import (
	"bufio"
	"io"
	"sync"
)

// writers are the buffers that write a transcript, reused from one file
// to the next: a run over thousands of small transcripts would otherwise
// allocate, and clear, a megabyte for each. (transcript.NewReader reuses
// the buffers that read them.)
var writers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 1<<20) }}

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
