package migrate

import (
	"bufio"
	"context"
	"io"
	"os"

	"github.com/klauspost/compress/zstd"
	"golang.org/x/sync/semaphore"

	"github.com/transcript-tool/transcript-tool/internal/count"
	"github.com/transcript-tool/transcript-tool/session"
)

// encoder returns a writer that stores JSONL bytes in a transcript's form,
// buffered, and a function that releases it: Close flushes it, and w then
// holds every byte. A compressed transcript is written at zstd's default
// level, which is fast; with atMost positive, one that comes out larger
// than atMost bytes (the size of the original, compressed harder than
// that, as zstd -19 does) is compressed again at the best level, so that
// migrating a rollout does not grow it for want of effort.
func encoder(w io.Writer, zst bool, atMost int64) (io.WriteCloser, func(), error) {
	if !zst {
		bw, release := pooledWriter(w)
		return flushCloser{bw}, release, nil
	}
	if atMost <= 0 {
		e, err := session.Encoder(w, zstd.SpeedDefault)
		return e, func() {}, err
	}
	f, err := session.Scratch()
	if err != nil {
		return nil, nil, err
	}
	b := &boundedEncoder{w: w, atMost: atMost, file: f, n: &count.Writer{W: f}}
	if b.Encoder, err = session.Encoder(b.n, zstd.SpeedDefault); err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	return b, func() { _ = f.Close() }, nil
}

// recompressions bounds the outputs compressed again at the best level
// at once, by every job of the run together: each takes some 50 MiB, its
// encoder's tables and a decoder, which at --jobs 8 would be 400 MiB.
// A job takes its turn with no decoder of its own transcript held (see
// job.run), so that it never waits for the budget of windows while
// holding a share of it.
var recompressions = semaphore.NewWeighted(2)

// boundedEncoder compresses into a scratch file first: the level is
// chosen once the size at the default one is known, and what was written
// to the output could not be taken back. The scratch file holds the
// compressed bytes only, and is then copied, or decompressed and
// compressed again, which costs the best level's time only for the
// rollouts that need it.
type boundedEncoder struct {
	*zstd.Encoder
	w      io.Writer
	atMost int64
	file   *os.File
	n      *count.Writer // counts what goes to file
}

func (b *boundedEncoder) Close() error {
	if err := b.Encoder.Close(); err != nil {
		return err
	}
	stream := io.NewSectionReader(b.file, 0, b.n.N)
	if b.n.N <= b.atMost {
		_, err := io.Copy(b.w, stream)
		return err
	}
	return recompress(b.w, stream)
}

// recompress writes the zstd stream read from r to w again, at the best
// level.
func recompress(w io.Writer, r io.Reader) error {
	if err := recompressions.Acquire(context.Background(), 1); err != nil {
		return err
	}
	defer recompressions.Release(1)
	d, release, err := session.Decoded(r, true)
	if err != nil {
		return err
	}
	defer release()
	e, err := session.Encoder(w, zstd.SpeedBestCompression)
	if err != nil {
		return err
	}
	if _, err := io.Copy(e, d); err != nil {
		return err
	}
	return e.Close()
}

type flushCloser struct{ *bufio.Writer }

func (f flushCloser) Close() error { return f.Flush() }
