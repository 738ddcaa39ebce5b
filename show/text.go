package show

import (
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/transcript-tool/transcript-tool/transcript"
)

// How much of a long text is shown when it is shortened.
const (
	maxLines   = 5   // lines of a tool result, command output or system text
	maxCols    = 200 // runes of each of those lines
	maxOneLine = 120 // runes of thinking, tool call arguments and other one-liners
)

// cleanLine returns one line of text as it may be written to a terminal:
// escape sequences (colours, cursor moves, titles) are dropped, other
// control characters but the tab are shown as their Unicode control
// pictures, invalid UTF-8 becomes U+FFFD, and a final carriage return
// (of a CRLF line end) is removed. At most max runes are kept (max <= 0:
// all), followed by "…" when some were left out.
func cleanLine(b []byte, max int) string {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	var sb strings.Builder
	runes := 0
	for i := 0; i < len(b); {
		if b[i] == 0x1b {
			i = skipEscape(b, i)
			continue
		}
		if max > 0 && runes == max {
			sb.WriteString("…")
			break
		}
		r, size := utf8.DecodeRune(b[i:])
		i += size
		runes++
		writeVisible(&sb, r)
	}
	return sb.String()
}

// writeVisible writes r, or what stands for it when it is a control
// character: its control picture (␀ … ␟, ␡), or U+FFFD for a C1 control.
func writeVisible(sb *strings.Builder, r rune) {
	switch {
	case r == '\t':
		sb.WriteByte('\t')
	case r < 0x20:
		sb.WriteRune(0x2400 + r)
	case r == 0x7f:
		sb.WriteRune('\u2421')
	case r >= 0x80 && r < 0xa0: // C1 controls, CSI among them
		sb.WriteRune(utf8.RuneError)
	default:
		sb.WriteRune(r)
	}
}

// skipEscape returns the offset just past the escape sequence starting at
// b[i] == ESC: a CSI (ESC [ ... final), an OSC or other string (ESC ] ...
// BEL or ESC \), or a two- or three-byte escape such as a charset choice.
func skipEscape(b []byte, i int) int {
	i++
	if i >= len(b) {
		return i
	}
	switch c := b[i]; {
	case c == '[':
		for i++; i < len(b); i++ {
			if b[i] >= 0x40 && b[i] <= 0x7e {
				return i + 1
			}
			if b[i] < 0x20 || b[i] > 0x7e {
				return i // broken sequence: leave what follows
			}
		}
		return i
	case c == ']' || c == 'P' || c == '_' || c == '^' || c == 'X':
		for i++; i < len(b); i++ {
			switch {
			case b[i] == 0x07:
				return i + 1
			case b[i] == 0x1b && i+1 < len(b) && b[i+1] == '\\':
				return i + 2
			case b[i] == '\n':
				return i // an unterminated string ends with the line
			}
		}
		return i
	case c >= 0x20 && c <= 0x2f: // intermediates, then one final byte
		for i < len(b) && b[i] >= 0x20 && b[i] <= 0x2f {
			i++
		}
		if i < len(b) && b[i] >= 0x30 && b[i] <= 0x7e {
			i++
		}
		return i
	case c >= 0x30 && c <= 0x7e:
		return i + 1
	}
	return i
}

// flat returns text as one line: clean, with every run of white space
// (newlines included) as one space and surrounding space trimmed, cut to
// max runes with "…" (max <= 0: not cut).
func flat(b []byte, max int) string {
	var sb strings.Builder
	runes, space := 0, false
	for i := 0; i < len(b); {
		c := b[i]
		if c == 0x1b {
			i = skipEscape(b, i)
			continue
		}
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' {
			space = sb.Len() > 0
			i++
			continue
		}
		if max > 0 && runes >= max {
			sb.WriteString("…")
			break
		}
		if space {
			sb.WriteByte(' ')
			runes++
			space = false
		}
		r, size := utf8.DecodeRune(b[i:])
		writeVisible(&sb, r)
		i += size
		runes++
	}
	return sb.String()
}

// flatString is flat for a string.
func flatString(s string, max int) string { return flat([]byte(s), max) }

// compactJSON returns the JSON text raw on one line without the white space
// between tokens, cut to max runes with "…" (max <= 0: whole). raw must be
// valid JSON. Strings keep their escapes, so the result is one line, but
// for \uXXXX escapes of printable non-ASCII characters, which are shown as
// the characters (Python writes every é as \u00e9).
func compactJSON(raw []byte, max int) string {
	var out []byte
	in := false
	runes := 0
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if !in && (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			continue
		}
		if max > 0 && runes >= max && utf8.RuneStart(c) {
			out = append(out, "…"...)
			break
		}
		runes++
		switch {
		case in && c == '\\' && i+1 < len(raw):
			if r, n := transcript.Unescape(raw[i:]); r >= 0xa0 && r != utf8.RuneError && unicode.IsPrint(r) {
				out = utf8.AppendRune(out, r)
				i += n - 1
				continue
			}
			out = append(out, c, raw[i+1])
			i++
			runes++
			continue
		case c == '"':
			in = !in
		case !utf8.RuneStart(c):
			runes--
		}
		out = append(out, c)
	}
	return cleanLine(out, 0)
}

// args returns a tool call's arguments on one line: JSON compacted, and a
// string that holds JSON (Codex and chat completions encode arguments so)
// compacted as the JSON it holds.
func args(v transcript.Value, max int) string {
	if v.Kind() == transcript.String {
		text, _ := decode(nil, v)
		if inner, err := transcript.Parse(text, 0); err == nil {
			return compactJSON(inner.Raw(), max)
		}
		return flat(text, max)
	}
	if v.Kind() == transcript.Invalid {
		return ""
	}
	return compactJSON(v.Raw(), max)
}

// decode appends the text of the JSON string v to dst. Unpaired surrogate
// escapes, which have no UTF-8 form, become U+FFFD.
func decode(dst []byte, v transcript.Value) ([]byte, bool) {
	if v.Kind() != transcript.String {
		return dst, false
	}
	return transcript.AppendLossy(dst, v.Raw(), -1), true
}

// when formats an entry's time for people, in UTC: an RFC 3339 string, or
// a number of seconds or milliseconds since 1970. Other strings are shown
// as they are, shortened.
func when(v transcript.Value) string {
	switch v.Kind() {
	case transcript.String:
		s := v.Text()
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return t.UTC().Format(time.DateTime)
		}
		return flatString(s, 40)
	case transcript.Number:
		f, err := strconv.ParseFloat(string(v.Raw()), 64)
		if err != nil || f < 0 || f > 1e15 {
			return flatString(string(v.Raw()), 40)
		}
		if f >= 1e11 { // milliseconds: 1e11 seconds is the year 5138
			f /= 1000
		}
		sec := int64(f)
		return time.Unix(sec, 0).UTC().Format(time.DateTime)
	}
	return ""
}

// base64Size returns the number of bytes that the base64 text inner, the
// inside of a JSON string, decodes to, without decoding it. Escapes (\n in
// wrapped base64, \/ for a slash) are allowed for.
func base64Size(inner []byte) int {
	n, pad := 0, 0
	for i := 0; i < len(inner); i++ {
		c := inner[i]
		switch {
		case c == '\\':
			if i+1 < len(inner) && inner[i+1] == '/' {
				n++
			}
			i++
		case c == '=':
			n++
			pad++
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '+', c == '/', c == '-', c == '_':
			n++
		}
	}
	return max(n*3/4-pad, 0)
}

// plural returns "1 line", "2 lines".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
