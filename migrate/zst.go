package migrate

import (
	"bufio"
	"io"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// compressed reports whether a transcript is stored zstd-compressed, as
// Codex may store its rollouts (rollout-*.jsonl.zst). Such a transcript is
// read through a decoder and written back compressed; its exact round trip
// is that of its JSONL bytes.
func compressed(path string) bool { return strings.HasSuffix(path, ".jsonl.zst") }

// decoded returns a reader of a transcript's JSONL bytes and a function
// that releases it.
func decoded(r io.Reader, zst bool) (io.Reader, func(), error) {
	if !zst {
		return r, func() {}, nil
	}
	d, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
	if err != nil {
		return nil, nil, err
	}
	return d, d.Close, nil
}

// encoder returns a writer that stores JSONL bytes in a transcript's form,
// buffered; Close flushes it, and w then holds every byte.
func encoder(w io.Writer, zst bool) (io.WriteCloser, error) {
	if !zst {
		return flushCloser{bufio.NewWriterSize(w, 1<<20)}, nil
	}
	return zstd.NewWriter(w, zstd.WithEncoderConcurrency(1))
}

type flushCloser struct{ *bufio.Writer }

func (f flushCloser) Close() error { return f.Flush() }
