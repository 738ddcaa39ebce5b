package inspect

import (
	"context"
	"errors"
	"io"

	"github.com/transcript-tool/transcript-tool/externalizer"
	"github.com/transcript-tool/transcript-tool/internal/display"
	"github.com/transcript-tool/transcript-tool/migrate"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// scan calls fn for each line of t in order and stops at the first error,
// which for a failed read names the line it was reading.
func scan(ctx context.Context, t *migrate.Transcript, fn func(l transcript.Line) error) error {
	r := transcript.NewReader(t)
	next := transcript.Line{Num: 1}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		l, err := r.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return &transcript.InputError{Path: t.Path, Line: next.Num, Offset: next.Offset, Err: err}
		}
		next.Num, next.Offset = l.Num+1, l.Offset+int64(len(l.Text)+len(l.EOL))
		if err := fn(l); err != nil {
			return err
		}
	}
}

// lineLen is the number of bytes of l in its transcript, end of line
// included.
func lineLen(l transcript.Line) int64 { return int64(len(l.Text) + len(l.EOL)) }

// open opens the transcript at path with the named format, or the one
// detected; format is nil for a file of no known format.
func open(path, name string) (*migrate.Transcript, externalizer.Format, error) {
	t, err := migrate.Open(path, name)
	if err != nil {
		return nil, nil, err
	}
	f, _ := externalizer.Lookup(t.Format)
	return t, f, nil
}

// payloads appends to dst the inline payloads of entry: its payload sites
// that reach threshold, less those that migrate would not move (no
// placeholder keeps the JSON type of a number or a literal) and those that
// are placeholders already (the entry's marker records them as replaced;
// with a store, Check proves that marker true).
func payloads(f externalizer.Format, entry transcript.Value, threshold int, dst []externalizer.Site) []externalizer.Site {
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
