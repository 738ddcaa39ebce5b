package migrate

import (
	"bufio"
	"io"
	"sync"
)

// writers are the buffers that write a transcript, reused from one file
// to the next: a run over thousands of small transcripts would otherwise
// allocate, and clear, a buffer for each. (transcript.NewReader reuses
// the buffers that read them.) A buffer of 256 KiB writes in as few
// system calls as one of a megabyte, to within a few per cent, and holds
// 1.5 MB less of a two-worker run's live heap.
var writers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 256<<10) }}

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
