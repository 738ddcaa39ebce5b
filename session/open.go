package session

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/transcript-tool/transcript-tool/externalizer"
	"github.com/transcript-tool/transcript-tool/format"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// Transcript is a transcript opened for reading: its JSONL bytes
// (decompressed for *.jsonl.zst), its format and its session id.
type Transcript struct {
	io.Reader
	Path string
	// Name is how the transcript is named to people (Input.Name): its
	// path, or the URL of a transcript Path is a local copy of.
	Name    string
	Format  string // "" when no format was recognised
	Session string
	Size    int64 // size of the file on disk

	file    *os.File
	zst     bool
	spool   *spool // of a compressed transcript, once NewReader is called
	lines   *transcript.Reader
	release func()
}

// Open opens the transcript at path for reading. The format is detected
// from its first lines unless format names one; a file of no known format
// opens with Format "" so that readers which need none can go on.
func Open(path, format string) (*Transcript, error) {
	return OpenInput(Input{Path: path}, format)
}

// OpenInput is Open for an input, its local copy if it has a Remote, whose
// errors name it as Input.Name does.
func OpenInput(in Input, format string) (*Transcript, error) {
	path, name := in.Path, in.Name()
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	zst := Compressed(path)
	t := &Transcript{Path: path, Name: name, Size: fi.Size(), file: f, zst: zst}
	fm, session, err := Detect(f, zst, format)
	switch {
	case err == nil:
		t.Format, t.Session = fm.Name(), session
	case format == "" && errors.Is(err, ErrUnknownFormat):
	default:
		f.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	dr, release, err := Decoded(f, zst)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	t.Reader, t.release = dr, release
	return t, nil
}

// NewReader returns a Reader of t's lines, to be called once, instead of
// reading t. The Reader returns a line longer than LongLine as Long,
// without its text, for ReadLong: memory then does not grow with the
// length of a line. Those of a compressed transcript are read back from a
// spool (see Source), which only readers of long lines need.
func (t *Transcript) NewReader() *transcript.Reader {
	if t.zst && t.spool == nil {
		t.spool = &spool{r: t.Reader}
		t.Reader = t.spool
	}
	r := transcript.NewReader(t)
	r.Limit = LongLine
	t.lines = r
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
		return nil, nil, errors.New("session: ReadLong of a line held whole")
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
	if t.lines != nil {
		t.lines.Release()
	}
	if t.spool != nil {
		t.spool.close()
	}
	t.release()
	return t.file.Close()
}

// Lines calls fn for every line of the transcript in, decompressed and
// with its format detected as Open does; an error from fn stops the
// reading and is reported at the line's place in in.
func Lines(in Input, fn func(transcript.Line) error) error {
	t, err := OpenInput(in, "")
	if err != nil {
		return err
	}
	defer t.Close()
	return EachLine(t, nil, t.Name, func(l transcript.Line, _ *io.SectionReader) error { return fn(l) })
}

// ErrUnknownFormat is the error of a file whose format is not recognised.
var ErrUnknownFormat = errors.New("unknown transcript format")

// ErrSourceChanged is the error of a file that changed while it was being
// migrated, typically because an agent is still appending to it.
var ErrSourceChanged = errors.New("the file changed while it was migrated (is an agent still writing to it?); left untouched")

// Detect reads the first entries of src to find its format and session id,
// then rewinds src.
func Detect(src *os.File, zst bool, name string) (format.Format, string, error) {
	defer src.Seek(0, io.SeekStart)
	var fm format.Format
	if name != "" {
		f, ok := format.Lookup(name)
		if !ok {
			return nil, "", fmt.Errorf("%w %q", ErrUnknownFormat, name)
		}
		fm = f
	}
	session := ""
	dr, release, err := Decoded(src, zst)
	if err != nil {
		return nil, "", err
	}
	defer release()
	r := transcript.NewReader(io.LimitReader(dr, detectBytes))
	defer r.Release()
	for n := 0; n < detectLines; n++ {
		l, err := r.Next()
		if errors.Is(err, ErrWindowTooLarge) {
			return nil, "", err
		}
		if err != nil {
			break
		}
		v, err := transcript.Parse(l.Text, transcript.JSONStart(l))
		if err != nil || v.Kind() != transcript.Object {
			continue
		}
		if fm == nil {
			fm, _ = format.Detect(v)
		}
		if fm != nil && session == "" {
			session = fm.Session(v)
		}
		if fm != nil && session != "" {
			break
		}
	}
	if fm == nil {
		return nil, "", ErrUnknownFormat
	}
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		return nil, "", err
	}
	return fm, session, nil
}

// Detection looks at most at the first detectLines lines within the first
// detectBytes bytes, so that a huge first entry is not read twice.
const (
	detectLines = 16
	detectBytes = 4 << 20
)

// LongLine is the length from which a line is streamed instead of held:
// migrate rewrites such a line from its skeleton (see
// transcript.BuildSkeleton) and reads its payloads back from the file
// (for a compressed transcript, from a spool: see Source), so that memory
// does not grow with the line.
const LongLine = 4 << 20

// maxSkeleton bounds a long line's skeleton. A line whose skeleton would
// be larger (megabytes of numbers or of short strings) is copied as it is.
const maxSkeleton = 16 << 20

// SkeletonOptions are the options of the skeletons migrate builds of long
// lines for payloads of threshold bytes: strings of 16 KiB or more are cut
// to stubs as long as the threshold (a stub must be at least that long:
// see transcript.SkeletonOptions), so that sites and their sizes come out
// of them as out of the whole line.
func SkeletonOptions(threshold int) transcript.SkeletonOptions {
	stub := max(threshold, 256)
	return transcript.SkeletonOptions{Long: max(16<<10, stub), StubLen: stub, Max: maxSkeleton}
}

// EachLine calls fn for every line of src; an error from fn is reported
// at the line's place in path. at, when not nil, reads the bytes of src
// again by offset (see Source): a line longer than LongLine without a
// marker then comes as Long, with long reading its bytes, so that memory
// does not grow with the length of a line. Every other line comes whole,
// with long nil.
func EachLine(src io.Reader, at io.ReaderAt, path string, fn func(l transcript.Line, long *io.SectionReader) error) error {
	r := transcript.NewReader(src)
	defer r.Release()
	if at != nil {
		r.Limit = LongLine
	}
	for {
		l, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
		var long *io.SectionReader
		if l.Long {
			long = io.NewSectionReader(at, l.Offset, l.Len)
			marked, err := externalizer.HasMarkerIn(long)
			if pos, _ := long.Seek(0, io.SeekCurrent); err == nil && pos != l.Len {
				err = ErrSourceChanged // it has shrunk since it was read
			}
			if err == nil && marked {
				// Restoring a marker takes the whole line.
				l.Text, l.Long, long = make([]byte, l.Len), false, nil
				_, err = io.NewSectionReader(at, l.Offset, l.Len).ReadAt(l.Text, 0)
			}
			if err != nil {
				return &transcript.InputError{Path: path, Line: l.Num, Offset: l.Offset, Err: err}
			}
			if long != nil {
				long = io.NewSectionReader(at, l.Offset, l.Len) // from its start again
			}
		}
		if err := fn(l, long); err != nil {
			return &transcript.InputError{Path: path, Line: l.Num, Offset: l.Offset, Err: err}
		}
	}
}
