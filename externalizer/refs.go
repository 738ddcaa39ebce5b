package externalizer

import (
	"errors"

	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// References returns the artifacts a line's marker names, in order,
// without reading them. A line without a marker has none; a marker that
// cannot be read is an error wrapping ErrBadMarker.
func References(text []byte, start int) ([]registry.Digest, error) {
	if !HasMarker(text) {
		return nil, nil
	}
	root, err := transcript.Parse(text, start)
	if err != nil || root.Kind() != transcript.Object {
		return nil, nil
	}
	mk, _, _, err := readMarker(root)
	if errors.Is(err, errNoMarker) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []registry.Digest
	for _, e := range mk.Edits {
		for _, p := range e.Parts {
			if p.ID == "" {
				continue
			}
			d, err := registry.ParseDigest(p.ID)
			if err != nil {
				return nil, errors.Join(ErrBadMarker, err)
			}
			ids = append(ids, d)
		}
	}
	return ids, nil
}
