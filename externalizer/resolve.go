package externalizer

import (
	"github.com/transcript-tool/transcript-tool/transcript"
)

// resolveDup returns the member dup places before the last of those
// called as p's last token in the object p's other tokens name: a
// duplicate key, which Resolve, like every reader, passes over.
func resolveDup(p Pointer, root transcript.Value, dup int) (transcript.Value, bool) {
	if len(p) == 0 || dup < 0 {
		return transcript.Value{}, false
	}
	obj, ok := p[:len(p)-1].Resolve(root)
	if !ok || obj.Kind() != transcript.Object {
		return transcript.Value{}, false
	}
	var vals []transcript.Value
	obj.Members(func(m transcript.Member) bool {
		if m.Key.IsString(p[len(p)-1]) {
			vals = append(vals, m.Value)
		}
		return true
	})
	if dup >= len(vals) {
		return transcript.Value{}, false
	}
	return vals[len(vals)-1-dup], true
}

// resolveBefore is Resolve, or resolveDup for a dup over 0, with the
// first token taken among the members of root that end by limit: the
// members an entry had before its marker.
func resolveBefore(p Pointer, root transcript.Value, limit, dup int) (transcript.Value, bool) {
	if len(p) == 0 || root.Kind() != transcript.Object {
		return transcript.Value{}, false
	}
	var vals []transcript.Value
	root.Members(func(m transcript.Member) bool {
		if m.Value.End <= limit && m.Key.IsString(p[0]) {
			vals = append(vals, m.Value)
		}
		return true
	})
	switch {
	case len(p) == 1 && dup >= 0 && dup < len(vals):
		return vals[len(vals)-1-dup], true
	case len(p) == 1 || len(vals) == 0:
		return transcript.Value{}, false
	case dup == 0:
		return p[1:].Resolve(vals[len(vals)-1])
	}
	return resolveDup(p[1:], vals[len(vals)-1], dup)
}
