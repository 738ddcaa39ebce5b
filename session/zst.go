package session

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"
	"golang.org/x/sync/semaphore"
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
// migrate.RehydrateTo, each time whole).

// Compressed reports whether a transcript is stored zstd-compressed, as
// Codex may store its rollouts (rollout-*.jsonl.zst). Such a transcript is
// read through a decoder and written back compressed; its exact round trip
// is that of its JSONL bytes.
func Compressed(path string) bool { return strings.HasSuffix(path, ".jsonl.zst") }

// maxWindow is the largest zstd window a compressed transcript may
// declare: the decoder keeps up to a window of history, so a frame header
// must not choose how much memory it takes. It is the limit zstd itself
// decodes without --memory; zstd's levels up to 19 use at most 8 MiB.
const maxWindow = 128 << 20

// windowBudget bounds the sum of the windows of the frames being decoded
// at once, by every job of the run together: the decoder allocates its
// window whole, however short the stream (a 16 KB rollout that declares
// 128 MiB takes 128 MiB), so that --jobs 8 over such files took 1.5 GB.
// It is maxWindow: the run decodes in the memory one file at the largest
// window takes, and sixteen files at zstd -19's 8 MiB at once.
const windowBudget = maxWindow

// windows is the run's budget of windows (see windowBudget). A decoder
// takes a frame's window from it before the decoder reads the frame's
// first block, waiting while other decoders hold it.
var windows = semaphore.NewWeighted(windowBudget)

// collectAfter is the window from which a decoder that is released has
// the collector run before its budget goes to the next: the window's
// memory is then reused by the next decoder instead of being added to
// it, for the collector would let the heap grow to twice its live data
// before it ran (see cmd/transcript-tool/memory.go).
const collectAfter = 16 << 20

// ErrWindowTooLarge is the error of a compressed transcript whose zstd
// frame declares a window over what this tool decodes.
var ErrWindowTooLarge = fmt.Errorf("over the %s this tool decodes", binarySize(maxWindow))

// Decoded returns a reader of a transcript's JSONL bytes and a function
// that releases it. A compressed transcript is decoded within the run's
// budget of windows, waiting for its share, and a frame that declares a
// window over 128 MiB fails with ErrWindowTooLarge.
func Decoded(r io.Reader, zst bool) (io.Reader, func(), error) {
	if !zst {
		return r, func() {}, nil
	}
	f := &frames{r: r}
	d, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxWindow(maxWindow))
	if err != nil {
		f.release()
		return nil, nil, err
	}
	z := &zstdReader{d: d, f: f}
	return z, z.release, nil
}

// zstdReader is a decoder of a compressed transcript that holds its
// share of the budget of windows until it is released.
type zstdReader struct {
	d *zstd.Decoder // nil once released
	f *frames
}

func (z *zstdReader) Read(p []byte) (int, error) {
	if z.d == nil {
		return 0, zstd.ErrDecoderClosed
	}
	n, err := z.d.Read(p)
	if err != nil && z.f.err != nil {
		// The decoder's own error for the frame would not say why.
		err = z.f.err
	}
	return n, err
}

func (z *zstdReader) release() {
	if z.d == nil {
		return
	}
	// The decoder keeps its window after Close: the window is garbage
	// only once nothing refers to the decoder.
	z.d.Close()
	z.d = nil
	if z.f.held >= collectAfter {
		runtime.GC()
	}
	z.f.release()
}

// frames passes a zstd stream on to the decoder, following its frames
// (RFC 8878, section 3.1): it takes each frame's window from the budget
// before the decoder is given the frame's first block. It does not check
// the stream: once it meets what is not a frame it passes the bytes on
// unlooked at, for the decoder to refuse.
type frames struct {
	r    io.Reader
	off  int64 // offset in the stream of the next byte read from r
	held int64 // what it holds of the budget
	err  error // the error of a window over maxWindow

	step  frameStep
	frame int64    // offset of the frame being read
	buf   [14]byte // the bytes of the header being read
	have  int      // how many of them
	need  int      // how many the header takes, or how many bytes to skip
	check bool     // the frame ends with a checksum
}

// frameStep is what frames reads next.
type frameStep int

const (
	stepMagic     frameStep = iota // a frame's magic number
	stepSkippable                  // a skippable frame's length
	stepHeader                     // a frame's header, past its magic number
	stepBlock                      // a block's header
	stepData                       // a block's bytes, then the next block
	stepLastData                   // the last block's bytes, then the checksum
	stepSkip                       // bytes that end a frame, then the next frame
	stepUnknown                    // not a frame: the rest is the decoder's
)

// headerStart is how many bytes of each header frames reads first.
var headerStart = [...]int{stepMagic: 4, stepSkippable: 4, stepHeader: 1, stepBlock: 3}

func (f *frames) Read(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	n, err := f.r.Read(p)
	if ferr := f.follow(p[:n]); ferr != nil {
		// No byte of a frame that is not decoded reaches the decoder.
		f.err = ferr
		return 0, ferr
	}
	return n, err
}

// follow follows the frames through b, the next bytes of the stream.
func (f *frames) follow(b []byte) error {
	for len(b) > 0 {
		switch f.step {
		case stepUnknown:
			f.off += int64(len(b))
			return nil
		case stepData, stepLastData, stepSkip:
			k := min(len(b), f.need)
			f.need -= k
			f.off += int64(k)
			b = b[k:]
			if f.need == 0 {
				f.skipped()
			}
			continue
		}
		if f.have == 0 {
			f.need = headerStart[f.step]
		}
		k := min(len(b), f.need-f.have)
		copy(f.buf[f.have:], b[:k])
		f.have += k
		f.off += int64(k)
		b = b[k:]
		if f.have == f.need {
			if err := f.header(); err != nil {
				return err
			}
		}
	}
	return nil
}

// skipped moves on past the bytes skipped.
func (f *frames) skipped() {
	switch {
	case f.step == stepData:
		f.step = stepBlock
	case f.step == stepLastData && f.check:
		f.step, f.need = stepSkip, 4
	default:
		f.step = stepMagic
	}
}

// header acts on the header read, f.buf[:f.have].
func (f *frames) header() error {
	b := f.buf[:f.have]
	switch f.step {
	case stepMagic:
		f.frame = f.off - 4
		switch m := binary.LittleEndian.Uint32(b); {
		case m == zstdMagic:
			f.step = stepHeader
		case m&^0xF == skippableMagic:
			f.step = stepSkippable
		default:
			f.step = stepUnknown
		}
	case stepSkippable:
		f.step, f.need = stepSkip, int(binary.LittleEndian.Uint32(b))
	case stepHeader:
		if f.have == 1 {
			f.need = 1 + headerLen(b[0])
			if f.need > 1 {
				return nil // the rest of the header
			}
		}
		f.check = b[0]&(1<<2) != 0
		f.step = stepBlock
		if err := f.take(windowOf(b[0], b[1:])); err != nil {
			return err
		}
	case stepBlock:
		h := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16
		f.step, f.need = stepData, int(h>>3)
		if h&1 != 0 {
			f.step = stepLastData
		}
		switch (h >> 1) & 3 {
		case 1: // RLE: one byte, repeated
			f.need = 1
		case 3: // reserved: the decoder's to refuse
			f.step = stepUnknown
		}
	}
	f.have = 0
	if f.need == 0 && f.step != stepUnknown {
		f.skipped()
	}
	return nil
}

// The magic numbers of a zstd frame and of a skippable frame (the last
// four bits of which are free).
const (
	zstdMagic      = 0xFD2FB528
	skippableMagic = 0x184D2A50
)

// headerLen returns the length of a frame header after its descriptor
// fhd: the window descriptor, unless the frame is a single segment, the
// dictionary id, and the frame's content size.
func headerLen(fhd byte) int {
	single := fhd&(1<<5) != 0
	n := [4]int{0, 1, 2, 4}[fhd&3]
	if !single {
		n++
	}
	return n + contentSizeLen(fhd)
}

func contentSizeLen(fhd byte) int {
	if fhd>>6 == 0 && fhd&(1<<5) != 0 {
		return 1
	}
	return [4]int{0, 2, 4, 8}[fhd>>6]
}

// windowOf returns the window a frame declares, of its header's
// descriptor fhd and the header's bytes after it: that of its window
// descriptor, or the frame's content size for a single segment, which
// the decoder takes as its window (but 1 KiB at least).
func windowOf(fhd byte, rest []byte) int64 {
	if fhd&(1<<5) == 0 {
		exp, mantissa := rest[0]>>3, int64(rest[0]&7)
		base := int64(1) << (10 + exp)
		return base + base/8*mantissa
	}
	fcs := rest[len(rest)-contentSizeLen(fhd):]
	var size uint64
	switch len(fcs) {
	case 1:
		size = uint64(fcs[0])
	case 2:
		size = uint64(binary.LittleEndian.Uint16(fcs)) + 256
	case 4:
		size = uint64(binary.LittleEndian.Uint32(fcs))
	case 8:
		size = binary.LittleEndian.Uint64(fcs)
	}
	return int64(max(min(size, math.MaxInt64), 1<<10))
}

// take takes window from the budget for the frame being read, waiting
// for it, unless it holds that much already. A window larger than the
// whole budget takes the whole budget.
func (f *frames) take(window int64) error {
	if window > maxWindow {
		return fmt.Errorf("zstd frame at byte %d declares a window of %s, %w", f.frame, binarySize(window), ErrWindowTooLarge)
	}
	if window <= f.held {
		return nil
	}
	// What it holds is given back first: a decoder that held part and
	// waited for more could wait for another that does the same.
	f.release()
	want := min(window, windowBudget)
	if err := windows.Acquire(context.Background(), want); err != nil {
		return err
	}
	f.held = want
	return nil
}

// release gives back what f holds of the budget.
func (f *frames) release() {
	if f.held > 0 {
		windows.Release(f.held)
		f.held = 0
	}
}

// binarySize formats a window: "128 MiB", "2 GiB", or bytes when it is
// not a whole number of KiB.
func binarySize(n int64) string {
	for _, u := range []struct {
		unit string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + " " + u.unit
		}
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// Source returns a reader of the JSONL bytes of the transcript file f,
// read in order through r (f, or a reader of f that reports progress),
// and at, which reads a line longer than LongLine back by its offset
// until the Reader of those bytes is asked for the line after it: f
// itself when plain, a spool when compressed.
func Source(f *os.File, r io.Reader, zst bool) (lines io.Reader, at io.ReaderAt, release func(), err error) {
	d, closeD, err := Decoded(r, zst)
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
var errNotKept = errors.New("session: read back of a line no longer kept")

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
		s.file, err = Scratch()
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

// Scratch returns a new private file (0600) in the system's temporary
// directory ($TMPDIR), already unlinked, so that no run leaves it behind
// however it ends.
func Scratch() (*os.File, error) {
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

// Encoder returns a zstd encoder at level, as migrate writes a compressed
// transcript and stats predicts its size. Its memory is its window's
// (8 MiB at every level) and tables, which zstd.WithLowerEncoderMem
// allocates as they are used, for the same output: 9 MiB at the default
// level instead of 17.
func Encoder(w io.Writer, level zstd.EncoderLevel) (*zstd.Encoder, error) {
	return zstd.NewWriter(w, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(level), zstd.WithLowerEncoderMem(true))
}
