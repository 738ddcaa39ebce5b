package transcript

import (
	"bytes"
	"errors"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrNotText is returned by Decode for a string that has no UTF-8 form: it
// holds an unpaired surrogate escape such as \ud800.
var ErrNotText = errors.New("string holds an unpaired surrogate")

// Decode returns the text of the JSON string literal raw (quotes included).
// raw must be a valid literal, as Parse guarantees. Invalid UTF-8 in raw is
// copied through; callers that need text check utf8.Valid.
func Decode(raw []byte) ([]byte, error) {
	return AppendDecoded(nil, raw)
}

// AppendDecoded appends the text of the JSON string literal raw to dst.
func AppendDecoded(dst, raw []byte) ([]byte, error) {
	return appendText(dst, raw, -1, false)
}

// AppendLossy appends the text of the JSON string literal raw to dst, as
// a reader that wants text whatever the bytes does: an unpaired surrogate
// escape, which has no UTF-8 form, becomes U+FFFD (as encoding/json
// decodes it); invalid UTF-8 and a backslash that begins no escape are
// copied as they are. raw may be only the start of a literal, without
// its closing quote, as a Scanner returns a literal a truncated input
// cuts.
//
// With max >= 0 it stops once it has appended max bytes or more: a byte
// of raw is appended on its own, so the text may end inside a UTF-8
// sequence, and an escape's character whole, so it may end up to three
// bytes past max. Summaries look at the start of strings of any length
// so.
func AppendLossy(dst, raw []byte, max int) []byte {
	dst, _ = appendText(dst, raw, max, true)
	return dst
}

// appendText is AppendDecoded, or AppendLossy when lossy is set.
func appendText(dst, raw []byte, max int, lossy bool) ([]byte, error) {
	if len(raw) == 0 {
		return dst, nil
	}
	s := raw[1:]
	limit := len(dst) + max
	for len(s) > 0 && (max < 0 || len(dst) < limit) {
		if s[0] == '\\' {
			r, n := Unescape(s)
			switch {
			case n == 0:
				dst, s = append(dst, '\\'), s[1:]
				continue
			case !utf16.IsSurrogate(r):
			case lossy:
				r = utf8.RuneError
			default:
				return dst, ErrNotText
			}
			dst, s = utf8.AppendRune(dst, r), s[n:]
			continue
		}
		i := bytes.IndexByte(s, '\\')
		last := i < 0
		if last {
			// Only the closing quote can follow the last escape as
			// it is.
			i = len(s)
			if s[i-1] == '"' {
				i--
			}
		}
		run := s[:i]
		if max >= 0 {
			run = run[:min(len(run), limit-len(dst))]
		}
		dst = append(dst, run...)
		if last {
			break
		}
		s = s[i:]
	}
	return dst, nil
}

// Unescape decodes the escape at the start of s, the part of a string
// literal from a backslash on, and returns the character it stands for
// and its length, or n = 0 when s does not begin with a whole valid
// escape. A \u escape of a high surrogate followed by one of a low
// surrogate is one escape of 12 bytes, of the character the pair
// encodes; a surrogate escape alone decodes to the surrogate, which has
// no UTF-8 form: callers make it an error or U+FFFD. Every decoder of
// JSON strings in the tool reads escapes through it.
func Unescape(s []byte) (r rune, n int) {
	if len(s) < 2 || s[0] != '\\' {
		return 0, 0
	}
	if s[1] != 'u' {
		if c := unescaped[s[1]]; c != 0 {
			return rune(c), 2
		}
		return 0, 0
	}
	r, ok := hex4(s[2:])
	if !ok {
		return 0, 0
	}
	if isHigh(r) && len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
		if r2, ok := hex4(s[8:]); ok && utf16.IsSurrogate(r2) && !isHigh(r2) {
			return utf16.DecodeRune(r, r2), 12
		}
	}
	return r, 6
}

// unescaped maps the letter of a two-character escape to what it stands
// for.
var unescaped = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// isHigh reports whether r is a high surrogate, the first of a pair.
func isHigh(r rune) bool { return 0xd800 <= r && r < 0xdc00 }

// hex4 decodes the four hexadecimal digits, of either case, that begin b.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var v rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			v = v<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			v = v<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			v = v<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

// Style is a way of escaping text in a JSON string, matching what common
// writers produce.
type Style uint8

const (
	// StyleJS escapes only what JSON requires, as JavaScript's
	// JSON.stringify does: quote, backslash, \b \f \n \r \t and other
	// control characters as lower-case \u00XX.
	StyleJS Style = iota + 1
	// StyleASCII also escapes DEL and every non-ASCII character as
	// lower-case \uXXXX (surrogate pairs above U+FFFF), as Python's
	// json.dumps does by default.
	StyleASCII
)

// Styles lists the escaping styles in the order they are tried.
var Styles = []Style{StyleJS, StyleASCII}

func (s Style) String() string {
	switch s {
	case StyleJS:
		return "js"
	case StyleASCII:
		return "ascii"
	}
	return "unknown"
}

// ParseStyle returns the Style named name.
func ParseStyle(name string) (Style, bool) {
	for _, s := range Styles {
		if s.String() == name {
			return s, true
		}
	}
	return 0, false
}

const hexDigits = "0123456789abcdef"

// AppendEncoded appends text as a quoted JSON string in style s. text must
// be valid UTF-8.
func AppendEncoded(dst, text []byte, s Style) []byte {
	dst = append(dst, '"')
	dst = AppendEscaped(dst, text, s)
	return append(dst, '"')
}

// plain[s][c] is true for the bytes that style s writes as they are.
var plain = func() (t [StyleASCII + 1][256]bool) {
	for c := 0x20; c < 0x100; c++ {
		t[StyleJS][c] = c != '"' && c != '\\'
		t[StyleASCII][c] = c != '"' && c != '\\' && c < 0x7f
	}
	return t
}()

// AppendEscaped appends text escaped in style s, without quotes. It may be
// called on consecutive pieces of a text as long as no piece ends inside a
// UTF-8 sequence.
func AppendEscaped(dst, text []byte, s Style) []byte {
	ok := &plain[s]
	start := 0
	for i := 0; i < len(text); {
		for i+4 <= len(text) && ok[text[i]] && ok[text[i+1]] && ok[text[i+2]] && ok[text[i+3]] {
			i += 4
		}
		for i < len(text) && ok[text[i]] {
			i++
		}
		if i >= len(text) {
			break
		}
		c := text[i]
		dst = append(dst, text[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			if c < 0x80 {
				dst = appendU(dst, rune(c))
				break
			}
			r, size := utf8.DecodeRune(text[i:])
			if r >= 0x10000 {
				r1, r2 := utf16.EncodeRune(r)
				dst = appendU(appendU(dst, r1), r2)
			} else {
				dst = appendU(dst, r)
			}
			i += size
			start = i
			continue
		}
		i++
		start = i
	}
	return append(dst, text[start:]...)
}

func appendU(dst []byte, r rune) []byte {
	return append(dst, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}

// TextForm returns the decoded text of the string literal raw and the style
// that encodes it back to exactly raw. ok is false when no style does, or
// when the text is not valid UTF-8; the caller then keeps raw as it is.
func TextForm(raw []byte) (text []byte, style Style, ok bool) {
	return AppendTextForm(nil, raw)
}

// AppendTextForm is TextForm appending the text to dst, so that a caller
// can reuse one buffer for many strings.
//
// It decodes raw in one pass, checking as it goes that each literal byte
// and each escape is the one a style would write for what it decodes to:
// escaping is done rune by rune, so the decoded text encodes back to raw in
// a style exactly when every piece of raw does.
func AppendTextForm(dst, raw []byte) (text []byte, style Style, ok bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return dst, 0, false
	}
	return AppendTextFormBare(dst, raw[1:len(raw)-1])
}

// AppendTextFormBare is AppendTextForm for the inside of a string literal,
// without its quotes: a part of one that starts and ends between escapes,
// such as the output after a command's header.
func AppendTextFormBare(dst, s []byte) (text []byte, style Style, ok bool) {
	text, set := AppendTextStyles(dst, s)
	for _, st := range Styles {
		if set.Has(st) {
			return text, st, true
		}
	}
	return text, 0, false
}

// StyleSet is a set of Styles.
type StyleSet uint8

// Has reports whether st is in the set.
func (set StyleSet) Has(st Style) bool { return set&(1<<st) != 0 }

// AppendTextStyles is AppendTextFormBare giving every style that encodes
// the text back to s, none when no style does or the text is not UTF-8.
// A literal read in pieces cut where TextCut says encodes back in a
// style exactly when every piece does.
func AppendTextStyles(dst, s []byte) (text []byte, styles StyleSet) {
	if need := len(dst) + len(s); need > cap(dst) {
		// The text is never longer than its literal: grow once.
		dst = append(make([]byte, 0, need), dst...)
	}
	const js, ascii = 1 << StyleJS, 1 << StyleASCII
	styles = js | ascii // the styles that still encode to s
	high := false       // whether a literal byte is not ASCII
	from := len(dst)
	for len(s) > 0 {
		// A run of literal bytes.
		i := plainLen(s)
		if !high && hasHigh(s[:i]) {
			// DEL or non-ASCII, which only StyleJS writes as they are.
			styles &^= ascii
			high = true
		}
		dst = append(dst, s[:i]...)
		s = s[i:]
		if len(s) == 0 {
			break
		}
		if s[0] != '\\' || len(s) < 2 {
			return dst, 0 // a quote or control character no style writes as it is
		}
		switch s[1] {
		case '"', '\\', 'b', 'f', 'n', 'r', 't':
			dst = append(dst, unescaped[s[1]])
		case 'u':
			// Every style writes lower-case hexadecimal digits, and a
			// surrogate only in a pair.
			r, n := Unescape(s)
			if n == 0 || utf16.IsSurrogate(r) || hasUpperHex(s[2:n]) {
				return dst, 0
			}
			s = s[n:]
			switch {
			case r < 0x20:
				switch r {
				case '\b', '\f', '\n', '\r', '\t':
					return dst, 0 // written as \b and so on
				}
				dst = append(dst, byte(r))
			case r < 0x7f:
				return dst, 0 // written as it is
			default:
				// Only StyleASCII writes other characters escaped.
				styles &^= js
				dst = utf8.AppendRune(dst, r)
			}
			if styles == 0 {
				return dst, 0
			}
			continue
		default: // '/', which no style escapes
			return dst, 0
		}
		s = s[2:]
		if styles == 0 {
			return dst, 0
		}
	}
	// The text must be UTF-8. An escape decodes to a whole character,
	// which cannot complete a sequence a literal run left open: the text
	// is valid when each run is, which one pass over it checks.
	if high && !utf8.Valid(dst[from:]) {
		return dst, 0
	}
	return dst, styles
}

// hasUpperHex reports whether b holds an upper-case hexadecimal letter.
func hasUpperHex(b []byte) bool {
	for _, c := range b {
		if 'A' <= c && c <= 'F' {
			return true
		}
	}
	return false
}

// TextCut returns where the inside of a string literal may be cut so that
// both pieces decode on their own as the whole does: not inside an escape
// or a UTF-8 sequence, and not between the two escapes of a surrogate
// pair. Some cut is always found in a piece longer than 12 bytes.
func TextCut(b []byte) int {
	// Plain bytes and escapes far from the end are passed over as the
	// parser passes over them, sixteen bytes at a time where it can;
	// each stop is the start of a character or escape. The last bytes go
	// one by one.
	i := 0
	for {
		from := i
		i += skipEscaped(b[i:])
		switch {
		case i == len(b):
			return textCutFrom(b, startBefore(b, from, max(from, len(b)-32)))
		case len(b)-i <= 32:
			return textCutFrom(b, i)
		case b[i] != '\\':
			i++ // a quote or control character
		case b[i+1] != 'u':
			i += 2 // a backslash and what follows, as textCutFrom takes them
		default:
			// A \u escape, or the first of a pair: far from the end, the
			// second starts an escape as well as any.
			i += 6
		}
	}
}

// startBefore returns a start of a character or escape in b[from:j+1],
// which from on holds only plain bytes and two-byte escapes, from being
// such a start. A byte that is no UTF-8 continuation byte starts a
// character, unless an odd run of backslashes before it makes it an
// escape's letter: then the backslash before it starts the escape.
func startBefore(b []byte, from, j int) int {
	for ; j > from; j-- {
		if b[j]&0xc0 == 0x80 {
			continue
		}
		k := j
		for k > from && b[k-1] == '\\' {
			k--
		}
		return j - (j-k)%2
	}
	return from
}

// textCutFrom is TextCut going over b one character or escape at a time
// from i, where one starts, the bytes before it known to be whole.
func textCutFrom(b []byte, i int) int {
	cut := i
	for i < len(b) {
		c := b[i]
		w := 1
		pair := false
		switch {
		case c == '\\':
			w = 2
			if i+1 < len(b) && b[i+1] == 'u' {
				w = 6
				// A surrogate pair is one escape; a high surrogate at
				// the end of b stays with what may be its low one.
				switch r, n := Unescape(b[i:]); {
				case n == 12:
					w = n
				case n == 6 && 0xd800 <= r && r < 0xdc00:
					pair = len(b)-i-n < 6
				}
			}
		case c >= utf8.RuneSelf:
			if utf8.FullRune(b[i:]) {
				_, w = utf8.DecodeRune(b[i:])
			} else {
				w = len(b) - i + 1 // a sequence cut by the end of b: cut before it
			}
		}
		if i+w > len(b) {
			break
		}
		i += w
		if !pair {
			cut = i
		}
	}
	return cut
}

// CompleteRunes returns the length of the longest prefix of b that does
// not end inside a UTF-8 sequence: all of b unless its last bytes start a
// sequence they do not finish, as a piece of a stream cut anywhere may.
func CompleteRunes(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if utf8.FullRune(b[i:]) {
				return len(b)
			}
			return i
		}
	}
	return len(b)
}

// RuneCut returns the largest n <= max such that b[:n] does not end inside
// a UTF-8 sequence; it returns len(b) when b is shorter than max.
func RuneCut(b []byte, max int) int {
	if len(b) <= max {
		return len(b)
	}
	for i := max; i >= 0 && i > max-utf8.UTFMax; i-- {
		if i == 0 || utf8.RuneStart(b[i]) {
			return i
		}
	}
	return max // not UTF-8 here: any cut will do
}
