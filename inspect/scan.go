package inspect

import (
	"context"
	"errors"
	"io"

	"github.com/transcript-tool/transcript-tool/externalizer"
	"github.com/transcript-tool/transcript-tool/format"
	"github.com/transcript-tool/transcript-tool/internal/display"
	"github.com/transcript-tool/transcript-tool/session"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// line is a line as scan gives it: whole, or for a line longer than
// session.LongLine, its skeleton in Text, so that memory does not grow
// with the length of a line.
type line struct {
	transcript.Line
	// sk is the skeleton of a long line, and src reads a long line's
	// bytes (offset 0 its first byte), whatever its skeleton.
	sk  *transcript.Skeleton
	src *io.SectionReader
	// tooLarge is set, and Text nil, for a long line whose skeleton
	// would not fit in bounded memory either: only its size is known.
	tooLarge bool
	// tooDeep is set, and Text nil, for a long line nested deeper than
	// Parse accepts: it is not JSON, as it would be read whole.
	tooDeep bool
}

// size returns the length in the line of v, a value parsed from l.Text.
func (l *line) size(v transcript.Value) int64 {
	if l.sk == nil {
		return int64(v.Len())
	}
	from, to := l.sk.Span(v.Start, v.End)
	return to - from
}

// errCutNotJSON stands for the parse error of a long line whose skeleton
// parses but whose cut strings hold what JSON forbids.
var errCutNotJSON = errors.New("a cut string is not valid JSON")

// parse parses l.Text from start, as a line that is not JSON if its
// skeleton says so, or if it is too deep.
func (l *line) parse(start int) (transcript.Value, error) {
	switch {
	case l.tooDeep:
		return transcript.Value{}, transcript.ErrTooDeep
	case l.sk != nil && l.sk.Invalid:
		return transcript.Value{}, errCutNotJSON
	}
	return transcript.Parse(l.Text, start)
}

// scan calls fn for each line of t in order and stops at the first error,
// which for a failed read names the line it was reading. A long line comes
// as its skeleton, built with migrate's options for threshold (see
// session.SkeletonOptions), unless it carries a marker: reading a marker
// takes the whole line, as migrate does. With small set, a line whose
// skeleton is too large is tried again with every string of threshold
// bytes or more cut, enough to find and size its payloads, though not to
// rewrite it as migrate would.
func scan(ctx context.Context, t *session.Transcript, threshold int, small bool, fn func(l *line) error) error {
	r := t.NewReader()
	if holdLong {
		r.Limit = 0
	}
	next := transcript.Line{Num: 1}
	var l line
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		tl, err := r.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return &transcript.InputError{Path: t.Name, Line: next.Num, Offset: next.Offset, Err: err}
		}
		l = line{Line: tl}
		next.Num, next.Offset = tl.Num+1, tl.Offset+lineLen(&l)
		if tl.Long {
			if err := readLong(t, &l, threshold, small); err != nil {
				return &transcript.InputError{Path: t.Name, Line: tl.Num, Offset: tl.Offset, Err: err}
			}
		}
		if err := fn(&l); err != nil {
			return err
		}
	}
}

// holdLong makes scan read every line whole, for tests that compare what
// it finds from skeletons with what it finds in whole lines.
var holdLong = false

// readLong reads the long line l of t: its skeleton, or the whole line if
// it carries a marker.
func readLong(t *session.Transcript, l *line, threshold int, small bool) error {
	o := session.SkeletonOptions(threshold)
	sk, src, err := t.ReadLong(l.Line, o)
	l.src = src
	if errors.Is(err, transcript.ErrSkeletonTooLarge) {
		marked, merr := externalizer.HasMarkerIn(io.NewSectionReader(src, 0, l.Len))
		if merr != nil {
			return merr
		}
		if marked {
			return readWhole(l, src)
		}
		deep, derr := transcript.TooDeep(io.NewSectionReader(src, 0, l.Len))
		switch {
		case derr != nil:
			return derr
		case deep:
			l.tooDeep = true
			return nil
		case !small:
			l.tooLarge = true
			return nil
		}
		o.Long = o.StubLen
		sk, src, err = t.ReadLong(l.Line, o)
		if errors.Is(err, transcript.ErrSkeletonTooLarge) {
			l.tooLarge = true
			return nil
		}
	}
	switch {
	case err != nil:
		return err
	case externalizer.HasMarker(sk.Text):
		return readWhole(l, src)
	}
	l.Text, l.sk, l.src = sk.Text, sk, src
	return nil
}

// readWhole reads the long line l whole from src.
func readWhole(l *line, src io.ReaderAt) error {
	l.Text = make([]byte, l.Len)
	if _, err := src.ReadAt(l.Text, 0); err != nil {
		return err
	}
	l.Long = false
	return nil
}

// writeOriginal writes l as it is in its transcript, end of line
// included.
func writeOriginal(w io.Writer, l *line) error {
	if l.Long {
		if _, err := io.Copy(w, io.NewSectionReader(l.src, 0, l.Len)); err != nil {
			return err
		}
	} else if _, err := w.Write(l.Text); err != nil {
		return err
	}
	_, err := w.Write(l.EOL)
	return err
}

// lineLen is the number of bytes of l in its transcript, end of line
// included.
func lineLen(l *line) int64 {
	if l.Long {
		return l.Len + int64(len(l.EOL))
	}
	return int64(len(l.Text) + len(l.EOL))
}

// textLen is the number of bytes of l in its transcript, end of line
// excluded.
func textLen(l *line) int64 { return lineLen(l) - int64(len(l.EOL)) }

// open opens the transcript in with the named format, or the one
// detected; format is nil for a file of no known format.
func open(in session.Input, name string) (*session.Transcript, format.Format, error) {
	t, err := session.OpenInput(in, name)
	if err != nil {
		return nil, nil, err
	}
	f, _ := format.Lookup(t.Format)
	return t, f, nil
}

// payloads appends to dst the inline payloads of entry: its payload sites
// that reach threshold, less those that migrate would not move (no
// placeholder keeps the JSON type of a number or a literal) and those that
// are placeholders already (the entry's marker records them as replaced;
// with a store, Check proves that marker true).
func payloads(f format.Format, entry transcript.Value, threshold int, dst []format.Site) []format.Site {
	all := f.Sites(entry, threshold, dst)
	kept := all[:len(dst)]
	var replaced []string
	if externalizer.HasMarker(entry.Raw()) {
		replaced = replacedAt(entry)
	}
next:
	for _, s := range all[len(dst):] {
		switch s.Value.Kind() {
		case transcript.String, transcript.Array, transcript.Object:
		default:
			continue
		}
		at := s.Path.String()
		for _, r := range replaced {
			if r == at {
				continue next
			}
		}
		kept = append(kept, s)
	}
	return kept
}

// replacedAt returns the pointers of the values that the marker of a
// migrated entry says were replaced by placeholders.
func replacedAt(entry transcript.Value) []string {
	reps, _ := externalizer.Replacements(entry)
	at := make([]string, len(reps))
	for i, r := range reps {
		at[i] = r.At
	}
	return at
}

// maxName is the most code points of a name taken from a transcript (a
// tool, an entry type) that a report shows.
const maxName = 64

// printable returns a name taken from a transcript fit for a one-line
// report: one clean line of at most maxName code points.
func printable(s string) string { return display.Line(s, maxName) }

// oneLine returns s as one clean line, not cut, so that text taken from a
// transcript cannot break the lines of a report.
func oneLine(s string) string { return display.Line(s, len(s)+1) }
