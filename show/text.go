package show

import (
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/transcript-tool/transcript-tool/internal/display"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// How much of a long text is shown when it is shortened.
const (
	maxLines   = 5   // lines of a tool result, command output or system text
	maxCols    = 200 // runes of each of those lines
	maxOneLine = 120 // runes of thinking, tool call arguments and other one-liners
)

// cleanLine, flat and flatString are display.Verbatim and display.Flat
// with show's lengths: at most max code points of text, then "…" when some
// were left out, not counted (a column is maxCols characters wide); max <=
// 0 for the whole text.
func cleanLine(b []byte, max int) string { return display.Verbatim(string(b), budget(len(b), max)) }

func flat(b []byte, max int) string { return display.Flat(string(b), budget(len(b), max)) }

func flatString(s string, max int) string { return display.Flat(s, budget(len(s), max)) }

// budget is display's length, which counts the "…", for max of show's; a
// text of size bytes has at most size code points.
func budget(size, max int) int {
	if max <= 0 {
		return size + 1
	}
	return max + 1
}

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
