package migrate

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/transcript-tool/transcript-tool/transcript"
)

// Transcript is a transcript opened for reading: its JSONL bytes
// (decompressed for *.jsonl.zst), its format and its session id.
type Transcript struct {
	io.Reader
	Path    string
	Format  string // "" when no format was recognised
	Session string
	Size    int64 // size of the file on disk

	file    *os.File
	zst     bool
	spool   *spool // of a compressed transcript, once NewReader is called
	release func()
}

// Open opens the transcript at path for reading. The format is detected
// from its first lines unless format names one; a file of no known format
// opens with Format "" so that readers which need none can go on.
func Open(path, format string) (*Transcript, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	zst := compressed(path)
	t := &Transcript{Path: path, Size: fi.Size(), file: f, zst: zst}
	fm, session, err := detect(f, zst, format)
	switch {
	case err == nil:
		t.Format, t.Session = fm.Name(), session
	case format == "" && errors.Is(err, ErrUnknownFormat):
	default:
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	dr, release, err := decoded(f, zst)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	t.Reader, t.release = dr, release
	return t, nil
}

// NewReader returns a Reader of t's lines, to be called once, instead of
// reading t. The Reader returns a line longer than LongLine as Long,
// without its text, for ReadLong: memory then does not grow with the
// length of a line. Those of a compressed transcript are read back from a
// spool (see source), which only readers of long lines need.
func (t *Transcript) NewReader() *transcript.Reader {
	if t.zst && t.spool == nil {
		t.spool = &spool{r: t.Reader}
		t.Reader = t.spool
	}
	r := transcript.NewReader(t)
	r.Limit = LongLine
	return r
}

// ReadLong returns the skeleton of the Long line l of t, built with
// options o (SkeletonOptions gives migrate's), and a reader of the line's
// bytes (offset 0 its first byte) for what the skeleton cut. A line whose
// skeleton would not fit in bounded memory fails with
// transcript.ErrSkeletonTooLarge, the reader still returned. Like the
// line's text, the reader is valid until the next line is read.
func (t *Transcript) ReadLong(l transcript.Line, o transcript.SkeletonOptions) (*transcript.Skeleton, *io.SectionReader, error) {
	if !l.Long {
		return nil, nil, errors.New("migrate: ReadLong of a line held whole")
	}
	var at io.ReaderAt = t.file
	if t.zst {
		at = t.spool
	}
	line := io.NewSectionReader(at, l.Offset, l.Len)
	sk, err := transcript.BuildSkeleton(line, o)
	return sk, line, err
}

// Close releases the transcript.
func (t *Transcript) Close() error {
	if t.spool != nil {
		t.spool.close()
	}
	t.release()
	return t.file.Close()
}

// Lines calls fn for every line of the transcript at path, decompressed
// and with its format detected as Open does; an error from fn stops the
// reading and is reported at the line's place in path.
func Lines(path string, fn func(transcript.Line) error) error {
	t, err := Open(path, "")
	if err != nil {
		return err
	}
	defer t.Close()
	return eachLine(t, nil, path, func(l transcript.Line, _ *io.SectionReader) error { return fn(l) })
}
