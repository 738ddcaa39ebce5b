// Package display renders untrusted text and byte counts for people and for
// a model's prompt: Line makes one clean line of at most n Unicode code
// points (Flat and Verbatim the same for a person at a terminal), Bytes a
// short decimal size, Plural a count of things, ID an artifact's short id.
//
// # Guarantees
//
// Line, Flat and Verbatim never return more than n code points
// (utf8.RuneCountInString), never a line break, control character (but
// Verbatim's tabs), terminal escape sequence or bidirectional override,
// and always valid UTF-8, whatever their input. Its
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
// becomes U+FFFD; terminal escape sequences (CSI, OSC and the other
// strings, charset choices) are dropped, and so are bidirectional
// formatting characters and byte order marks; control characters, line
// and paragraph separators and runs of white space become one space; the
// ends are trimmed. A cut is marked by Ellipsis, which counts. n <= 0
// gives "".
func Line(s string, n int) string { return line(s, n, hidden) }

// LineLen returns Line(s, n) and its length in code points (Len): a
// caller that lays out many lines has it without counting them again.
func LineLen(s string, n int) (string, int) {
	if n > 0 {
		if count, ok := cleanLen(s, n); ok {
			return s, count
		}
	}
	l := Line(s, n)
	return l, Len(l)
}

// Flat is Line for a person at a terminal: a control character that is
// not white space is shown as its Unicode control picture (␀ … ␟, ␡;
// U+FFFD for a C1 control) rather than as a space, so that the reader
// sees it is there.
func Flat(s string, n int) string { return line(s, n, pictured) }

// Verbatim is Flat for one line of a text whose layout matters, such as
// code or a log: white space is kept as it is (tabs and runs of spaces;
// other control characters, carriage returns included, are pictured) and
// the ends are not trimmed, but for the carriage return of a CRLF line
// end, which is dropped.
func Verbatim(s string, n int) string { return line(strings.TrimSuffix(s, "\r"), n, verbatim) }

// controls says how line shows control characters and white space.
type controls int

const (
	hidden   controls = iota // as one space, white space folded (Line)
	pictured                 // as control pictures, white space folded (Flat)
	verbatim                 // as control pictures, spaces and tabs kept (Verbatim)
)

// line is Line, Flat and Verbatim: one loop, so that the three clean
// text the same way, with the same escape parser.
func line(s string, n int, c controls) string {
	if n <= 0 {
		return ""
	}
	if c != verbatim && clean(s, n) {
		return s
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
		if ch := s[i]; ' ' < ch && ch < utf8.RuneSelf-1 {
			// Printable ASCII other than the space: nothing to decode,
			// drop or replace.
			if (space && count > 0 && !put(' ')) || !put(rune(ch)) {
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
		case c == verbatim && (r == ' ' || r == '\t'):
		case c != verbatim && (unicode.IsSpace(r) || r == '\u2028' || r == '\u2029'),
			c == hidden && unicode.IsControl(r):
			space = true
			continue
		case unicode.IsControl(r):
			r = picture(r)
		}
		if (space && count > 0 && !put(' ')) || !put(r) {
			return strings.TrimRight(b.String()[:keep], " ") + Ellipsis
		}
		space = false
	}
	return b.String()
}

// clean reports whether line would return s as it is, whatever its
// controls but verbatim: at most n code points, printable, with single
// spaces inside. It is the common case, which then costs no copy.
func clean(s string, n int) bool {
	_, ok := cleanLen(s, n)
	return ok
}

// cleanLen is clean, and the number of code points of s when it is.
func cleanLen(s string, n int) (int, bool) {
	if s == "" {
		return 0, true
	}
	if len(s) > 4*n || s[0] == ' ' || s[len(s)-1] == ' ' {
		return 0, false
	}
	count := 0
	for i := 0; i < len(s); count++ {
		ch := s[i]
		switch {
		case ch == ' ' && s[i+1] != ' ', ' ' < ch && ch < utf8.RuneSelf-1:
			i++
			continue
		case ch < utf8.RuneSelf:
			return 0, false
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || unicode.IsSpace(r) || unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || dropped(r) {
			return 0, false
		}
		i += size
	}
	return count, count <= n
}

// picture returns what stands for control character r on a terminal: its
// control picture (␀ … ␟, ␡), or U+FFFD for a C1 control, which has none.
func picture(r rune) rune {
	switch {
	case r < 0x20:
		return 0x2400 + r
	case r == 0x7f:
		return '\u2421'
	}
	return utf8.RuneError
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
// start of s (s[0] is ESC): a CSI (ESC [ parameters final), an OSC or
// other string (ESC ] P _ ^ X ... BEL or ESC \, or up to the end of the
// line when unterminated), an escape with intermediates and a final byte
// (a charset choice), or ESC and the byte after it. A broken CSI ends
// before the byte that broke it, so that the text after is kept.
func escapeLen(s string) int {
	if len(s) < 2 {
		return len(s)
	}
	switch ch := s[1]; {
	case ch == '[':
		for i := 2; i < len(s); i++ {
			if s[i] >= 0x40 && s[i] <= 0x7e {
				return i + 1
			}
			if s[i] < 0x20 || s[i] > 0x7e {
				return i
			}
		}
		return len(s)
	case ch == ']' || ch == 'P' || ch == '_' || ch == '^' || ch == 'X':
		for i := 2; i < len(s); i++ {
			switch {
			case s[i] == 0x07:
				return i + 1
			case s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\':
				return i + 2
			case s[i] == '\n':
				return i
			}
		}
		return len(s)
	case ch >= 0x20 && ch <= 0x2f: // intermediates, then one final byte
		i := 2
		for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
			i++
		}
		if i < len(s) && s[i] >= 0x30 && s[i] <= 0x7e {
			i++
		}
		return i
	case ch < utf8.RuneSelf:
		return 2
	}
	return 1
}

// Bytes formats a byte count with decimal units: "512 B", "4.1 KB",
// "17.3 MB", "2.6 GB".
func Bytes(n int64) string { return string(AppendBytes(nil, n)) }

// AppendBytes appends Bytes(n) to dst, for a caller that formats many.
func AppendBytes(dst []byte, n int64) []byte {
	switch {
	case n < 1000:
		return append(strconv.AppendInt(dst, n, 10), " B"...)
	case n < 1000*1000:
		return append(strconv.AppendFloat(dst, float64(n)/1e3, 'f', 1, 64), " KB"...)
	case n < 1000*1000*1000:
		return append(strconv.AppendFloat(dst, float64(n)/1e6, 'f', 1, 64), " MB"...)
	}
	return append(strconv.AppendFloat(dst, float64(n)/1e9, 'f', 1, 64), " GB"...)
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
