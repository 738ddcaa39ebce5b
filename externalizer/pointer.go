package externalizer

import (
	"strconv"
	"strings"

	"github.com/transcript-tool/transcript-tool/transcript"
)

// The escapes of RFC 6901, built once: a Replacer builds its tables on
// first use, which cost 3 % of a migration when one was made per token.
var (
	pointerEscaper   = strings.NewReplacer("~", "~0", "/", "~1")
	pointerUnescaper = strings.NewReplacer("~1", "/", "~0", "~")
)

// Pointer is a JSON pointer (RFC 6901) from an entry's root to a value.
type Pointer []string

// String returns the pointer's RFC 6901 form, "" for the root.
func (p Pointer) String() string {
	var b strings.Builder
	for _, tok := range p {
		b.WriteByte('/')
		b.WriteString(pointerEscaper.Replace(tok))
	}
	return b.String()
}

// Key returns p extended by an object key.
func (p Pointer) Key(k string) Pointer { return append(p[:len(p):len(p)], k) }

// Index returns p extended by an array index.
func (p Pointer) Index(i int) Pointer { return append(p[:len(p):len(p)], strconv.Itoa(i)) }

// ParsePointer parses an RFC 6901 pointer.
func ParsePointer(s string) (Pointer, bool) {
	if s == "" {
		return Pointer{}, true
	}
	if s[0] != '/' {
		return nil, false
	}
	toks := strings.Split(s[1:], "/")
	for i, t := range toks {
		toks[i] = pointerUnescaper.Replace(t)
	}
	return toks, true
}

// Resolve returns the value p points to inside root. Object keys resolve to
// the last member with that key, as JavaScript and Go decoders do.
func (p Pointer) Resolve(root transcript.Value) (transcript.Value, bool) {
	v := root
	for _, tok := range p {
		var ok bool
		switch v.Kind() {
		case transcript.Object:
			v, ok = v.Get(tok)
		case transcript.Array:
			n, err := strconv.Atoi(tok)
			if err != nil || n < 0 || strconv.Itoa(n) != tok {
				return transcript.Value{}, false
			}
			v, ok = v.Index(n)
		}
		if !ok {
			return transcript.Value{}, false
		}
	}
	return v, true
}

// resolveDup returns the member dup places before the last of those
// called as p's last token in the object p's other tokens name: a
// duplicate key, which Resolve, like every reader, passes over.
func (p Pointer) resolveDup(root transcript.Value, dup int) (transcript.Value, bool) {
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
func (p Pointer) resolveBefore(root transcript.Value, limit, dup int) (transcript.Value, bool) {
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
	return p[1:].resolveDup(vals[len(vals)-1], dup)
}
