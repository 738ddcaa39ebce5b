package externalizer

import (
	"errors"
	"fmt"

	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// Replacement is a value of a migrated entry that a placeholder stands in
// for, as the entry's marker records it.
type Replacement struct {
	At    string           // JSON pointer of the placeholder
	Value transcript.Value // the placeholder in the migrated line
	Parts []Ref            // the artifacts it is rebuilt from, in order
}

// Ref is one artifact a replaced value is rebuilt from, and its form.
type Ref struct {
	Digest store.Digest
	Form   Form
}

// Replacements returns the values that the marker of a migrated entry
// records as replaced, in the marker's order, without reading any
// artifact. Members the migration only added (pi's artifactRef) are not
// replacements. An entry without a marker has none, nor has one whose
// member called like the marker is not shaped like one (its own
// content); a marker that cannot be read, or names a value that is not
// there, is an error wrapping ErrBadMarker. Whether the marker is true,
// only restoring the line tells.
func Replacements(root transcript.Value) ([]Replacement, error) {
	mk, at, err := readMarker(root)
	if errors.Is(err, errNoMarker) || errors.Is(err, errForeignMarker) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var reps []Replacement
	for _, e := range mk.Edits {
		if len(e.Parts) == 0 {
			continue
		}
		u, err := at.locate(root, e)
		if err != nil {
			return nil, err
		}
		r := Replacement{At: e.At, Value: transcript.Value{Buf: root.Buf, Start: u.start, End: u.end}}
		for _, p := range e.Parts {
			if p.ID == "" {
				continue
			}
			d, err := store.ParseDigest(p.ID)
			if err != nil {
				return nil, fmt.Errorf("%w: %v", ErrBadMarker, err)
			}
			r.Parts = append(r.Parts, Ref{Digest: d, Form: p.Form})
		}
		reps = append(reps, r)
	}
	return reps, nil
}

// References returns the artifacts a line's marker names, in order,
// without reading them. A line without a marker has none; a marker that
// cannot be read is an error wrapping ErrBadMarker.
func References(text []byte, start int) ([]store.Digest, error) {
	if !HasMarker(text) {
		return nil, nil
	}
	root, err := transcript.Parse(text, start)
	if err != nil || root.Kind() != transcript.Object {
		return nil, nil
	}
	reps, err := Replacements(root)
	if err != nil {
		return nil, err
	}
	var ids []store.Digest
	for _, r := range reps {
		for _, p := range r.Parts {
			ids = append(ids, p.Digest)
		}
	}
	return ids, nil
}
