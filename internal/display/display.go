// Package display renders untrusted text and byte counts for people and for
// a model's prompt: Line makes one clean line of at most n Unicode code
// points, Bytes a short decimal size.
//
// # Guarantees
//
// Line never returns more than n code points (utf8.RuneCountInString),
// never a line break, control character, terminal escape sequence or
// bidirectional override, and always valid UTF-8, whatever its input. Its
// work is bounded by the input it reads, and it stops reading once it
// knows the line must be cut. All functions are pure and safe for
// concurrent use.
package display

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Ellipsis marks a cut; it is one code point.
const Ellipsis = "…"

// Len returns the length of s in Unicode code points, the unit of every
// budget in this project. An invalid UTF-8 byte counts as one.
func Len(s string) int { return utf8.RuneCountInString(s) }

// Cut returns s if it has at most n code points, else its first n-1 code
// points followed by Ellipsis (trailing spaces before the Ellipsis are
// dropped). n <= 0 gives "". Cut does not clean s.
func Cut(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n || Len(s) <= n {
		return s
	}
	i, count := 0, 0
	for count < n-1 {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		count++
	}
	return strings.TrimRight(s[:i], " ") + Ellipsis
}

// Line returns s as one line of at most n code points: invalid UTF-8
// becomes U+FFFD; terminal escape sequences (CSI, OSC) are dropped, and so
// are bidirectional formatting characters and byte order marks; control
// characters, line and paragraph separators and runs of white space
// become one space; the ends are trimmed. A cut is marked by Ellipsis,
// which counts. n <= 0 gives "".
func Line(s string, n int) string {
	if n <= 0 {
		return ""
	}
	var b strings.Builder
	b.Grow(min(len(s), n) + 8) // enough for printable ASCII, the common case
	count := 0                 // code points written to b
	keep := 0                  // length of b when it held n-1 code points
	put := func(r rune) bool {
		if count == n {
			return false
		}
		if count == n-1 {
			keep = b.Len()
		}
		b.WriteRune(r) // U+FFFD for an invalid byte
		count++
		return true
	}
	space := false // white space seen since the last code point written
	for i := 0; i < len(s); {
		if c := s[i]; ' ' < c && c < utf8.RuneSelf-1 {
			// Printable ASCII other than the space: nothing to decode,
			// drop or replace.
			if (space && count > 0 && !put(' ')) || !put(rune(c)) {
				return strings.TrimRight(b.String()[:keep], " ") + Ellipsis
			}
			space = false
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == 0x1b {
			i += escapeLen(s[i:])
			continue
		}
		i += size
		switch {
		case dropped(r):
			continue
		case unicode.IsSpace(r) || unicode.IsControl(r) || r == '\u2028' || r == '\u2029':
			space = true
			continue
		}
		if (space && count > 0 && !put(' ')) || !put(r) {
			return strings.TrimRight(b.String()[:keep], " ") + Ellipsis
		}
		space = false
	}
	return b.String()
}

// dropped reports whether r is removed rather than shown: bidirectional
// formatting characters, which can make text read differently from what
// it is, and byte order marks.
func dropped(r rune) bool {
	switch {
	case r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069', r == '\u200e', r == '\u200f', r == '\u061c', r == '\ufeff':
		return true
	}
	return false
}

// escapeLen returns the length of the terminal escape sequence at the
// start of s (s[0] is ESC): a CSI sequence (ESC [ parameters final), an
// OSC sequence (ESC ] ... BEL or ESC \), or ESC and the byte after it.
func escapeLen(s string) int {
	if len(s) < 2 {
		return len(s)
	}
	switch s[1] {
	case '[':
		i := 2
		for i < len(s) && s[i] >= 0x20 && s[i] <= 0x3f {
			i++
		}
		if i < len(s) && s[i] >= 0x40 && s[i] <= 0x7e {
			i++
		}
		return i
	case ']':
		for i := 2; i < len(s); i++ {
			if s[i] == 0x07 {
				return i + 1
			}
			if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
		}
		return len(s)
	}
	if s[1] < utf8.RuneSelf {
		return 2
	}
	return 1
}

// Bytes formats a byte count with decimal units: "512 B", "4.1 KB",
// "17.3 MB", "2.6 GB".
func Bytes(n int64) string {
	switch {
	case n < 1000:
		return strconv.FormatInt(n, 10) + " B"
	case n < 1000*1000:
		return strconv.FormatFloat(float64(n)/1e3, 'f', 1, 64) + " KB"
	case n < 1000*1000*1000:
		return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + " MB"
	}
	return strconv.FormatFloat(float64(n)/1e9, 'f', 1, 64) + " GB"
}

// IDLen is the length of the prefix of an artifact's id shown to people
// and in prompts: long enough to be unique in any store, and cat takes it.
const IDLen = 12

// ID returns the prefix of id that is shown, its first IDLen characters.
func ID(id string) string { return id[:min(len(id), IDLen)] }

// Plural returns "1 line", "2 lines": n and word, with an s unless n is 1.
func Plural[N int | int64](n N, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.FormatInt(int64(n), 10) + " " + word + "s"
}
