package externalizer

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"sort"

	"github.com/transcript-tool/transcript-tool/format"
	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// ErrBadMarker reports a marker that cannot be followed: malformed, not
// the entry's last member, pointing at values that are not there, or
// rebuilding a line whose hash is not the recorded one.
var ErrBadMarker = errors.New("bad transcript-tool marker")

// Opener opens an artifact for reading. The reader must fail at its end
// when the bytes do not hash to d, as registry.Store.Open does.
type Opener func(d store.Digest) (io.ReadCloser, error)

// RestoreTo writes the original of a migrated line to w and reports
// whether the line had a marker; a line without one is not written. The
// bytes are streamed, artifacts included, and checked against the SHA-256
// recorded in the marker only at the end: on error, w has received wrong
// or partial bytes, and a caller that must not emit them restores into
// io.Discard first, or into a temporary file it then discards.
func RestoreTo(w io.Writer, text []byte, start int, open Opener) (changed bool, err error) {
	return restoreTo(w, text, start, nil, func(w io.Writer, p part, at string) error {
		d, err := store.ParseDigest(p.ID)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrBadMarker, err)
		}
		r, err := open(d)
		if err != nil {
			return fmt.Errorf("artifact for %s: %w", at, err)
		}
		err = writePiece(w, r, p.Form)
		r.Close()
		if err != nil {
			return fmt.Errorf("artifact for %s: %w", at, err)
		}
		return nil
	})
}

// restoreTo is RestoreTo with the writing of the artifact parts left to
// writePart. When want is not nil, the rebuilt line is compared with want,
// which the caller knows to hash to the recorded SHA-256, instead of being
// hashed.
func restoreTo(w io.Writer, text []byte, start int, want []byte, writePart func(w io.Writer, p part, at string) error) (changed bool, err error) {
	if !HasMarker(text) {
		return false, nil
	}
	root, err := transcript.Parse(text, start)
	if err != nil || root.Kind() != transcript.Object {
		return false, nil
	}
	mk, at, err := readMarker(root)
	if errors.Is(err, errNoMarker) || errors.Is(err, errForeignMarker) {
		// Not migrated: whatever its own members are called, the line
		// is its original.
		return false, nil
	}
	if err != nil {
		return false, err
	}
	sum, _ := hex.DecodeString(mk.SHA256) // readMarker checked it
	undos := []undo{{start: at.prevEnd, end: at.mem.Value.End}}
	// Members the agent added after the marker are its own: they stay,
	// after the original's members, and are not part of the original's
	// hash.
	added := undo{start: at.mem.Value.End, end: at.end}
	if added.end > added.start && at.prevEnd == root.Start+1 {
		// The marker was the first member: the comma after it goes too.
		added.start += bytes.IndexByte(text[added.start:added.end], ',') + 1
		undos[0].end = added.start
	}
	for _, e := range mk.Edits {
		u, err := at.locate(root, e)
		if err != nil {
			return false, err
		}
		undos = append(undos, u)
	}
	sort.SliceStable(undos, func(i, j int) bool { return undos[i].start < undos[j].start })
	for i := 1; i < len(undos); i++ {
		if undos[i].start < undos[i-1].end {
			return false, fmt.Errorf("%w: edits overlap", ErrBadMarker)
		}
	}
	var (
		h    hash.Hash
		same *sameAs
		mw   io.Writer
	)
	if want != nil {
		same = &sameAs{rest: want}
		mw = io.MultiWriter(w, same)
	} else {
		h = sha256.New()
		mw = io.MultiWriter(w, h)
	}
	pos := 0
	for _, u := range undos {
		if _, err := mw.Write(text[pos:u.start]); err != nil {
			return false, err
		}
		if err := u.write(mw, writePart); err != nil {
			return false, err
		}
		pos = u.end
	}
	if added.end > added.start {
		if _, err := mw.Write(text[pos:added.start]); err != nil {
			return false, err
		}
		if _, err := w.Write(text[added.start:added.end]); err != nil {
			return false, err
		}
		pos = added.end
	}
	if _, err := mw.Write(text[pos:]); err != nil {
		return false, err
	}
	if same != nil && (same.differ || len(same.rest) > 0) || same == nil && !bytes.Equal(h.Sum(nil), sum) {
		return false, fmt.Errorf("%w: the rebuilt line does not match its recorded SHA-256", ErrBadMarker)
	}
	return true, nil
}

// sameAs compares the bytes written to it with rest, a piece at a time.
type sameAs struct {
	rest   []byte // what is still to come
	differ bool
}

func (c *sameAs) Write(p []byte) (int, error) {
	if !c.differ && len(p) <= len(c.rest) && bytes.Equal(p, c.rest[:len(p)]) {
		c.rest = c.rest[len(p):]
	} else {
		c.differ = true
	}
	return len(p), nil
}

// Restore returns the original of a migrated line, or nil and false for a
// line without a marker. It holds the whole line in memory and returns
// nothing on error.
func Restore(text []byte, start int, open Opener) ([]byte, bool, error) {
	var buf bytes.Buffer
	changed, err := RestoreTo(&buf, text, start, open)
	if err != nil || !changed {
		return nil, false, err
	}
	return buf.Bytes(), true, nil
}

// undo replaces text[start:end] of a migrated line with the original
// parts.
type undo struct {
	start, end int
	at         string
	parts      []part
}

func (u undo) write(w io.Writer, writePart func(io.Writer, part, string) error) error {
	for _, p := range u.parts {
		if p.ID == "" {
			if _, err := io.WriteString(w, p.Lit); err != nil {
				return err
			}
			continue
		}
		if err := writePart(w, p, u.at); err != nil {
			return err
		}
	}
	return nil
}

// locate finds the span of the migrated line that an edit changed.
func locate(root transcript.Value, e edit, limit int) (undo, error) {
	ptr, ok := format.ParsePointer(e.At)
	if !ok {
		return undo{}, fmt.Errorf("%w: bad pointer %q", ErrBadMarker, e.At)
	}
	v, ok := resolveBefore(ptr, root, limit, e.Dup)
	if !ok {
		return undo{}, fmt.Errorf("%w: nothing at %q", ErrBadMarker, e.At)
	}
	if len(e.Added) > 0 {
		return removeAdded(v, e)
	}
	return undo{start: v.Start, end: v.End, at: e.At, parts: e.Parts}, nil
}

// removeAdded returns the undo that removes the members an edit added at
// the end of object v.
func removeAdded(v transcript.Value, e edit) (undo, error) {
	var members []transcript.Member
	v.Members(func(m transcript.Member) bool {
		members = append(members, m)
		return true
	})
	n := len(e.Added)
	if v.Kind() != transcript.Object || len(members) < n {
		return undo{}, fmt.Errorf("%w: %q lacks the members it gained", ErrBadMarker, e.At)
	}
	tail := members[len(members)-n:]
	for i, m := range tail {
		if !m.Key.IsString(e.Added[i]) {
			return undo{}, fmt.Errorf("%w: %q lacks member %q", ErrBadMarker, e.At, e.Added[i])
		}
	}
	from := v.Start + 1
	if len(members) > n {
		from = members[len(members)-n-1].Value.End
	}
	return undo{start: from, end: tail[n-1].Value.End, at: e.At}, nil
}
