package display

import (
	"math"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestLine(t *testing.T) {
	tests := []struct {
		name string
		in   string
		n    int
		want string
	}{
		{"plain", "hello", 10, "hello"},
		{"exactly n", "hello", 5, "hello"},
		{"cut", "hello world", 8, "hello w…"},
		{"cut drops the space before the ellipsis", "hello world", 7, "hello…"},
		{"n of 1", "hello", 1, "…"},
		{"n of 0", "hello", 0, ""},
		{"negative n", "hello", -3, ""},
		{"empty", "", 5, ""},
		{"newlines and tabs become one space", "a\n\n\tb\r\nc", 10, "a b c"},
		{"ends trimmed", "  \n a b \t\n", 10, "a b"},
		{"only white space", " \n\t ", 10, ""},
		{"trailing white space does not force a cut", "abc   ", 3, "abc"},
		{"colour codes dropped", "\x1b[31mred\x1b[0m text", 20, "red text"},
		{"OSC title dropped", "\x1b]0;title\x07after", 20, "after"},
		{"OSC with ST dropped", "\x1b]8;;http://x\x1b\\link", 20, "link"},
		{"lone escape at the end", "abc\x1b", 20, "abc"},
		{"other control characters", "a\x00b\x07c\x7fd\u0085e", 20, "a b c d e"},
		{"line and paragraph separators", "a\u2028b\u2029c", 20, "a b c"},
		{"bidi overrides dropped", "abc\u202edcba\u202c", 20, "abcdcba"},
		{"byte order mark dropped", "\ufeffhead", 20, "head"},
		{"invalid UTF-8", "a\xffb\xc3", 20, "a\ufffdb\ufffd"},
		{"code points, not bytes", "日本語テキスト", 4, "日本語…"},
		{"emoji are code points", "👩‍💻👩‍💻", 3, "👩‍…"},
		{"combining marks count", "e\u0301e\u0301", 3, "e\u0301…"},
		{"the largest n", "abc", math.MaxInt, "abc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Line(tt.in, tt.n)
			assert.Equal(t, tt.want, got)
			assert.LessOrEqual(t, Len(got), max(tt.n, 0))
			l, n := LineLen(tt.in, tt.n)
			assert.Equal(t, got, l, "LineLen")
			assert.Equal(t, Len(got), n, "LineLen's length")
		})
	}
}

func TestLineProperties(t *testing.T) {
	inputs := []string{
		"", "x", strings.Repeat("ab ", 1000), strings.Repeat("\n", 50) + "tail", "\x1b[", "\x1b]",
		"mixed é 日本 \x1b[1m\t\x00 \u2028 \xff\xfe", strings.Repeat("日", 300),
	}
	for _, in := range inputs {
		for n := 0; n < 40; n++ {
			got := Line(in, n)
			assert.LessOrEqual(t, Len(got), n, "%q %d", in, n)
			assert.True(t, utf8.ValidString(got), "%q %d", in, n)
			assert.Equal(t, strings.TrimSpace(got), got)
			for _, r := range got {
				assert.False(t, unicode.IsControl(r), "%q %d: control %U", in, n, r)
			}
			assert.Equal(t, got, Line(got, n), "clean text is kept as it is")
			l, w := LineLen(in, n)
			assert.Equal(t, got, l, "LineLen %q %d", in, n)
			assert.Equal(t, Len(got), w, "LineLen's length %q %d", in, n)
			for _, got := range []string{Flat(in, n), Verbatim(in, n)} {
				assert.LessOrEqual(t, Len(got), n, "%q %d", in, n)
				assert.True(t, utf8.ValidString(got), "%q %d", in, n)
				for _, r := range got {
					assert.True(t, r == '\t' || !unicode.IsControl(r), "%q %d: control %U", in, n, r)
				}
			}
		}
	}
}

// TestTerminal: Flat and Verbatim show control characters as pictures,
// and Verbatim keeps white space as it is.
func TestTerminal(t *testing.T) {
	cases := []struct {
		in             string
		n              int
		flat, verbatim string
	}{
		{"plain\ttab", 20, "plain tab", "plain\ttab"},
		{"  a\n\n b\t\tc \r\n", 20, "a b c", "  a␊␊ b\t\tc ␍␊"},
		{"crlf\r", 20, "crlf", "crlf"},
		{"\x1b[1;31mred\x1b[0m", 20, "red", "red"},
		{"\x1b]0;title\x07after", 20, "after", "after"},
		{"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", 20, "link", "link"},
		{"\x1b(Bcharset", 20, "charset", "charset"},
		{"\x1b7saved\x1b8", 20, "saved", "saved"},
		{"bell\x07nul\x00del\x7f", 20, "bell␇nul␀del␡", "bell␇nul␀del␡"},
		{"c1 \u009b31m", 20, "c1 \uFFFD31m", "c1 \uFFFD31m"},
		{"bad \xff utf8", 20, "bad \uFFFD utf8", "bad \uFFFD utf8"},
		{"mid\rline", 20, "mid line", "mid␍line"},
		{"trailing esc \x1b", 20, "trailing esc", "trailing esc "},
		{"héllo wörld", 6, "héllo…", "héllo…"},
		{"abc   ", 4, "abc", "abc…"},
		{"short", 6, "short", "short"},
		{"x\u202ey", 6, "xy", "xy"},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.flat, Flat(tc.in, tc.n), "Flat(%q, %d)", tc.in, tc.n)
		assert.Equal(t, tc.verbatim, Verbatim(tc.in, tc.n), "Verbatim(%q, %d)", tc.in, tc.n)
	}
}

// lineByRunes is Line without its ASCII fast path: every code point
// decoded and classified.
func lineByRunes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	var b strings.Builder
	count, keep := 0, 0
	put := func(r rune) bool {
		if count == n {
			return false
		}
		if count == n-1 {
			keep = b.Len()
		}
		b.WriteRune(r)
		count++
		return true
	}
	space := false
	for i := 0; i < len(s); {
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

// FuzzLine checks Line against lineByRunes and its guarantees.
func FuzzLine(f *testing.F) {
	for _, s := range []string{"hello world", "a\n\tb ", "\x1b[31mred\x1b[0m ~\x7f|", "日本 x\u202e", "\xff !"} {
		f.Add(s, 5)
		f.Add(s, 150)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		n %= 200
		got := Line(s, n)
		if want := lineByRunes(s, n); got != want {
			t.Fatalf("Line(%q, %d) = %q, want %q", s, n, got, want)
		}
		if Len(got) > max(n, 0) || !utf8.ValidString(got) {
			t.Fatalf("Line(%q, %d) = %q: too long or invalid", s, n, got)
		}
	})
}

func TestCut(t *testing.T) {
	assert.Equal(t, "abc", Cut("abc", 3))
	assert.Equal(t, "ab…", Cut("abcd", 3))
	assert.Equal(t, "…", Cut("abcd", 1))
	assert.Equal(t, "", Cut("abcd", 0))
	assert.Equal(t, "日本…", Cut("日本語テ", 3))
	assert.Equal(t, "a…", Cut("a bcd", 3), "a space before the ellipsis is dropped")
	assert.Equal(t, "a\nb", Cut("a\nb", 3), "Cut does not clean")
}

func TestLen(t *testing.T) {
	assert.Equal(t, 0, Len(""))
	assert.Equal(t, 3, Len("日本語"))
	assert.Equal(t, 2, Len("\xff\xfe"), "an invalid byte counts as one")
}

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 B", 999: "999 B", 1000: "1.0 KB", 4096: "4.1 KB", 999_949: "999.9 KB",
		1_000_000: "1.0 MB", 17_300_000: "17.3 MB", 2_600_000_000: "2.6 GB",
	} {
		assert.Equal(t, want, Bytes(n), "%d", n)
		assert.Equal(t, "x"+want, string(AppendBytes([]byte("x"), n)), "%d appended", n)
	}
}

func TestPlural(t *testing.T) {
	assert.Equal(t, "0 lines", Plural(0, "line"))
	assert.Equal(t, "1 line", Plural(1, "line"))
	assert.Equal(t, "2 lines", Plural(2, "line"))
}

// BenchmarkLine cleans and cuts a typical first line of tool output.
func BenchmarkLine(b *testing.B) {
	s := "2025-06-01T09:27:23.550Z INFO  [index] parser retry: src/config/stream_parser.rs:553:2: error: test payload test result payload " + strings.Repeat("x", 900)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		Line(s, 120)
	}
}
