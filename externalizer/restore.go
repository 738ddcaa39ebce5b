package externalizer

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"

	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// ErrBadMarker reports a marker that cannot be followed: malformed, not
// the entry's last member, pointing at values that are not there, or
// rebuilding a line whose hash is not the recorded one.
var ErrBadMarker = errors.New("bad transcript-tool marker")

// Getter returns the verified bytes of an artifact.
type Getter func(registry.Digest) ([]byte, error)

// Restore returns the original line of a migrated one. changed is false,
// and out nil, for a line without a marker. The rebuilt line is checked
// against the SHA-256 recorded in the marker: Restore returns the exact
// original or an error.
func Restore(text []byte, start int, get Getter) (out []byte, changed bool, err error) {
	if !HasMarker(text) {
		return nil, false, nil
	}
	root, err := transcript.Parse(text, start)
	if err != nil || root.Kind() != transcript.Object {
		return nil, false, nil
	}
	mem, prevEnd, last, ok := findMarker(root)
	if !ok {
		return nil, false, nil
	}
	if !last {
		return nil, false, fmt.Errorf("%w: %s is not the entry's last member", ErrBadMarker, MarkerKey)
	}
	var mk marker
	if err := markerAPI.Unmarshal(mem.Value.Raw(), &mk); err != nil {
		return nil, false, fmt.Errorf("%w: %v", ErrBadMarker, err)
	}
	if mk.V != MarkerVersion {
		return nil, false, fmt.Errorf("%w: version %d, this tool reads %d", ErrBadMarker, mk.V, MarkerVersion)
	}
	want, err := hex.DecodeString(mk.SHA256)
	if err != nil || len(want) != sha256.Size {
		return nil, false, fmt.Errorf("%w: bad sha256 %q", ErrBadMarker, mk.SHA256)
	}
	splices := []splice{{prevEnd, mem.Value.End, nil}}
	for _, e := range mk.Edits {
		sp, err := undo(root, e, get)
		if err != nil {
			return nil, false, err
		}
		splices = append(splices, sp)
	}
	sort.SliceStable(splices, func(i, j int) bool { return splices[i].start < splices[j].start })
	for i := 1; i < len(splices); i++ {
		if splices[i].start < splices[i-1].end {
			return nil, false, fmt.Errorf("%w: edits overlap", ErrBadMarker)
		}
	}
	out = apply(text, splices)
	if got := sha256.Sum256(out); string(got[:]) != string(want) {
		return nil, false, fmt.Errorf("%w: the rebuilt line does not match its recorded SHA-256", ErrBadMarker)
	}
	return out, true, nil
}

// undo returns the splice that reverses one edit.
func undo(root transcript.Value, e edit, get Getter) (splice, error) {
	ptr, ok := ParsePointer(e.At)
	if !ok {
		return splice{}, fmt.Errorf("%w: bad pointer %q", ErrBadMarker, e.At)
	}
	v, ok := ptr.Resolve(root)
	if !ok {
		return splice{}, fmt.Errorf("%w: nothing at %q", ErrBadMarker, e.At)
	}
	if len(e.Added) > 0 {
		return removeAdded(v, e)
	}
	var buf []byte
	for _, p := range e.Parts {
		if p.ID == "" {
			buf = append(buf, p.Lit...)
			continue
		}
		d, err := registry.ParseDigest(p.ID)
		if err != nil {
			return splice{}, fmt.Errorf("%w: %v", ErrBadMarker, err)
		}
		data, err := get(d)
		if err != nil {
			return splice{}, fmt.Errorf("artifact for %s: %w", e.At, err)
		}
		if buf, ok = decodePiece(buf, data, p.Form); !ok {
			return splice{}, fmt.Errorf("%w: artifact %s cannot be put back in form %q", ErrBadMarker, d, p.Form)
		}
	}
	return splice{v.Start, v.End, buf}, nil
}

// removeAdded returns the splice that removes the members an edit added at
// the end of object v.
func removeAdded(v transcript.Value, e edit) (splice, error) {
	var members []transcript.Member
	v.Members(func(m transcript.Member) bool {
		members = append(members, m)
		return true
	})
	n := len(e.Added)
	if v.Kind() != transcript.Object || len(members) < n {
		return splice{}, fmt.Errorf("%w: %q lacks the members it gained", ErrBadMarker, e.At)
	}
	tail := members[len(members)-n:]
	for i, m := range tail {
		if !m.Key.IsString(e.Added[i]) {
			return splice{}, fmt.Errorf("%w: %q lacks member %q", ErrBadMarker, e.At, e.Added[i])
		}
	}
	from := v.Start + 1
	if len(members) > n {
		from = members[len(members)-n-1].Value.End
	}
	return splice{from, tail[n-1].Value.End, nil}, nil
}
