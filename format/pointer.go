package format

import (
	"slices"
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

// copyMembers are the members under which a format keeps a second copy of
// a tool's output beside the content the agent's model saw: pi's details,
// Claude Code's toolUseResult.
var copyMembers = []string{"details", "toolUseResult"}

// ContentSite reports whether site, a payload site's pointer as the
// registry records it, is a tool result's content, what the agent saw in
// its place (pi's message.content, the content of a Claude Code
// tool_result block, Codex's payload.output, a chat tool message's
// content), rather than a copy beside it (see copyMembers).
func ContentSite(site string) bool {
	p, ok := ParsePointer(site)
	if !ok || len(p) == 0 {
		return false
	}
	for _, k := range p {
		if slices.Contains(copyMembers, k) {
			return false
		}
	}
	last := p[len(p)-1]
	return last == "content" || last == "output"
}
