package migrate

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// Compressed transcripts are read through a decoder, which cannot go
// back: a line longer than LongLine, which is not held, is read back from
// a spool instead of the file, so that memory is bounded for them as for
// plain ones. Only those lines take disk space, in the system's temporary
// directory: the alternative, decompressing the whole transcript into a
// temporary file and reading it as a plain one, would write every byte
// of every compressed transcript once more, for the few long lines. The
// checks that a transcript did not change while it was read hold for the
// compressed file itself, which is read once, in order (twice by
// RehydrateTo, each time whole).

// compressed reports whether a transcript is stored zstd-compressed, as
// Codex may store its rollouts (rollout-*.jsonl.zst). Such a transcript is
// read through a decoder and written back compressed; its exact round trip
// is that of its JSONL bytes.
func compressed(path string) bool { return strings.HasSuffix(path, ".jsonl.zst") }

// maxWindow is the largest zstd window a compressed transcript may
// declare: the decoder keeps up to a window of history, so a frame header
// must not choose how much memory it takes. It is the limit zstd itself
// decodes without --memory; zstd's levels up to 19 use at most 8 MiB.
const maxWindow = 128 << 20

// decoded returns a reader of a transcript's JSONL bytes and a function
// that releases it.
func decoded(r io.Reader, zst bool) (io.Reader, func(), error) {
	if !zst {
		return r, func() {}, nil
	}
	d, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxWindow(maxWindow))
	if err != nil {
		return nil, nil, err
	}
	return d, d.Close, nil
}

// source returns a reader of the JSONL bytes of the transcript file f,
// read in order through r (f, or f under a progressReader), and at, which
// reads a line longer than LongLine back by its offset until the Reader
// of those bytes is asked for the line after it: f itself when plain, a
// spool when compressed.
func source(f *os.File, r io.Reader, zst bool) (lines io.Reader, at io.ReaderAt, release func(), err error) {
	d, closeD, err := decoded(r, zst)
	if err != nil || !zst {
		return d, f, closeD, err
	}
	s := &spool{r: d}
	return s, s, func() { s.close(); closeD() }, nil
}

// spool passes the JSONL bytes of a compressed transcript on to the
// transcript.Reader of its lines and keeps the bytes of the line being
// read: in memory while there are at most LongLine of them, then in a
// scratch file, from which ReadAt reads them back by their offsets in the
// transcript. The file keeps the last line that passed LongLine only:
// spool starts it over once the Reader has read LongLine bytes of the
// next long line, after its caller asked for the line after the first.
type spool struct {
	r     io.Reader
	off   int64  // offset of the next byte read from r
	start int64  // offset of the line being read
	head  []byte // its bytes, while there are at most LongLine of them
	long  bool   // its bytes go to file, not to head
	file  *os.File
	base  int64 // the offset in the transcript of the file's first byte
}

// errNotKept is the error of a read back of bytes the spool no longer
// keeps, which its contract rules out.
var errNotKept = errors.New("migrate: read back of a line no longer kept")

func (s *spool) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if kerr := s.keep(p[:n]); kerr != nil {
		return n, kerr
	}
	return n, err
}

// keep keeps b, the next bytes of the transcript.
func (s *spool) keep(b []byte) error {
	for len(b) > 0 {
		piece, ends := b, false
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			piece, ends = b[:i+1], true
		}
		if !s.long && len(s.head)+len(piece) > LongLine {
			if err := s.spill(); err != nil {
				return err
			}
		}
		if s.long {
			if _, err := s.file.WriteAt(piece, s.off-s.base); err != nil {
				return fmt.Errorf("keep a long line: %w", err)
			}
		} else {
			if n := len(s.head) + len(piece); n > cap(s.head) {
				// By doubling: append's smaller steps for large slices
				// would allocate several times LongLine on the way.
				head := make([]byte, len(s.head), min(max(2*cap(s.head), n), LongLine))
				copy(head, s.head)
				s.head = head
			}
			s.head = append(s.head, piece...)
		}
		s.off += int64(len(piece))
		b = b[len(piece):]
		if ends {
			s.start, s.head, s.long = s.off, s.head[:0], false
		}
	}
	return nil
}

// spill starts the scratch file over with the line being read, whose
// bytes have just passed LongLine.
func (s *spool) spill() error {
	var err error
	if s.file == nil {
		s.file, err = scratch()
	} else {
		err = s.file.Truncate(0)
	}
	if err == nil {
		_, err = s.file.WriteAt(s.head, 0)
	}
	if err != nil {
		return fmt.Errorf("keep a long line: %w", err)
	}
	s.base, s.long, s.head = s.start, true, s.head[:0]
	return nil
}

// ReadAt reads the bytes of the transcript at off, of the last line that
// passed LongLine.
func (s *spool) ReadAt(p []byte, off int64) (int, error) {
	if s.file == nil || off < s.base {
		return 0, errNotKept
	}
	return s.file.ReadAt(p, off-s.base)
}

func (s *spool) close() {
	if s.file != nil {
		_ = s.file.Close()
	}
}

// scratch returns a new private file (0600) in the system's temporary
// directory ($TMPDIR), already unlinked, so that no run leaves it behind
// however it ends.
func scratch() (*os.File, error) {
	f, err := os.CreateTemp("", "transcript-tool-*")
	if err != nil {
		return nil, err
	}
	if err := os.Remove(f.Name()); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

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
		e, err := zstdWriter(w, zstd.SpeedDefault)
		return e, func() {}, err
	}
	f, err := scratch()
	if err != nil {
		return nil, nil, err
	}
	b := &boundedEncoder{w: w, atMost: atMost, file: f, n: &countWriter{w: f}}
	if b.Encoder, err = zstdWriter(b.n, zstd.SpeedDefault); err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	return b, func() { _ = f.Close() }, nil
}

func zstdWriter(w io.Writer, level zstd.EncoderLevel) (*zstd.Encoder, error) {
	return zstd.NewWriter(w, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(level))
}

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
	n      *countWriter // counts what goes to file
}

func (b *boundedEncoder) Close() error {
	if err := b.Encoder.Close(); err != nil {
		return err
	}
	stream := io.NewSectionReader(b.file, 0, b.n.n)
	if b.n.n <= b.atMost {
		_, err := io.Copy(b.w, stream)
		return err
	}
	return recompress(b.w, stream)
}

// recompress writes the zstd stream read from r to w again, at the best
// level.
func recompress(w io.Writer, r io.Reader) error {
	d, release, err := decoded(r, true)
	if err != nil {
		return err
	}
	defer release()
	e, err := zstdWriter(w, zstd.SpeedBestCompression)
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
