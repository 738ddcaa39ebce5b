package transcript

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want string
		err  error
	}{
		{"empty", `""`, "", nil},
		{"plain", `"hello"`, "hello", nil},
		{"short escapes", `"\"\\\/\b\f\n\r\t"`, "\"\\/\b\f\n\r\t", nil},
		{"lower-case hex", `"caf\u00e9"`, "café", nil},
		{"upper-case hex", `"caf\u00E9"`, "café", nil},
		{"escaped ASCII", `"\u0041\u0062"`, "Ab", nil},
		{"escaped NUL", `"a\u0000b"`, "a\x00b", nil},
		{"escaped DEL", `"\u007f"`, "\x7f", nil},
		{"three-byte rune", `"\u20ac"`, "€", nil},
		{"U+FFFD itself", `"\ufffd"`, "\ufffd", nil},
		{"surrogate pair", `"\ud83d\ude00"`, "😀", nil},
		{"surrogate pair upper-case", `"\uD83D\uDE00"`, "😀", nil},
		{"surrogate pair mixed case", `"\ud83D\uDe00"`, "😀", nil},
		{"surrogate pairs in a row", `"\ud83d\ude00\ud83d\ude01x"`, "😀😁x", nil},
		{"highest pair", `"\udbff\udfff"`, "\U0010ffff", nil},
		{"raw UTF-8", `"é😀"`, "é😀", nil},
		{"invalid UTF-8 copied through", "\"\xff\xc3\"", "\xff\xc3", nil},
		{"text around escapes", `"a\nb\tc"`, "a\nb\tc", nil},
		{"lone high surrogate", `"\ud800"`, "", ErrNotText},
		{"lone low surrogate", `"\udc00"`, "", ErrNotText},
		{"high surrogate then text", `"\ud800abcdef"`, "", ErrNotText},
		{"high surrogate then BMP escape", `"\ud800\u0041"`, "", ErrNotText},
		{"two high surrogates", `"\ud800\ud800"`, "", ErrNotText},
		{"pair in wrong order", `"\udc00\ud800"`, "", ErrNotText},
		{"high surrogate then short escape", `"\ud83d\n"`, "", ErrNotText},
		{"lone surrogate after text", `"ok \udfff"`, "", ErrNotText},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Decode([]byte(tt.raw))
			if tt.err != nil {
				assert.ErrorIs(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
			if utf8.ValidString(tt.want) {
				var std string
				require.NoError(t, json.Unmarshal([]byte(tt.raw), &std))
				assert.Equal(t, std, string(got), "encoding/json decodes differently")
			}
		})
	}
}

func TestAppendDecodedKeepsPrefix(t *testing.T) {
	got, err := AppendDecoded([]byte("pre:"), []byte(`"a\u00e9"`))
	require.NoError(t, err)
	assert.Equal(t, "pre:aé", string(got))
}

func TestAppendEncoded(t *testing.T) {
	// mixed holds every character class the styles treat differently.
	const mixed = "a\"b\\c\n\t\r\b\f\x01\x1f\x7f é 😀 </script> \u2028 /"
	tests := []struct {
		name  string
		text  string
		style Style
		want  string
	}{
		{"empty js", "", StyleJS, `""`},
		{"empty ascii", "", StyleASCII, `""`},
		// node -e 'console.log(JSON.stringify(mixed))'
		{"mixed js", mixed, StyleJS, "\"a\\\"b\\\\c\\n\\t\\r\\b\\f\\u0001\\u001f\x7f é 😀 </script> \u2028 /\""},
		// python3 -c 'import json; print(json.dumps(mixed))'
		{"mixed ascii", mixed, StyleASCII, `"a\"b\\c\n\t\r\b\f\u0001\u001f\u007f \u00e9 \ud83d\ude00 </script> \u2028 /"`},
		{"all controls js", "\x00\x07\x0b\x0e\x1b", StyleJS, `"\u0000\u0007\u000b\u000e\u001b"`},
		{"all controls ascii", "\x00\x07\x0b\x0e\x1b", StyleASCII, `"\u0000\u0007\u000b\u000e\u001b"`},
		{"lower-case hex js", "\x1a", StyleJS, `"\u001a"`},
		{"lower-case hex ascii", "\u00ff\uabcd", StyleASCII, `"\u00ff\uabcd"`},
		{"astral ascii", "\U0010ffff", StyleASCII, `"\udbff\udfff"`},
		{"astral js", "\U0010ffff", StyleJS, "\"\U0010ffff\""},
		{"U+FFFD ascii", "\ufffd", StyleASCII, `"\ufffd"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AppendEncoded([]byte("pre:"), []byte(tt.text), tt.style)
			assert.Equal(t, "pre:"+tt.want, string(got))
			var std string
			require.NoError(t, json.Unmarshal(got[len("pre:"):], &std))
			assert.Equal(t, tt.text, std, "encoding/json reads back other text")
		})
	}
}

func TestAppendEscapedInPieces(t *testing.T) {
	text := "é\"a\n😀\x7fb\\"
	for _, s := range Styles {
		whole := AppendEscaped(nil, []byte(text), s)
		var pieces []byte
		for i := 0; i < len(text); {
			_, n := utf8.DecodeRuneInString(text[i:])
			pieces = AppendEscaped(pieces, []byte(text[i:i+n]), s)
			i += n
		}
		assert.Equal(t, string(whole), string(pieces), "style %v", s)
	}
}

func TestTextForm(t *testing.T) {
	tests := []struct {
		name  string
		raw   string
		ok    bool
		style Style
		text  string
	}{
		{"empty", `""`, true, StyleJS, ""},
		{"plain ASCII is js first", `"plain text"`, true, StyleJS, "plain text"},
		{"raw UTF-8 (JSON.stringify)", `"café 😀"`, true, StyleJS, "café 😀"},
		{"short escapes", `"a\nb\t\"c\\"`, true, StyleJS, "a\nb\t\"c\\"},
		{"control as lower-case hex", `"\u0001"`, true, StyleJS, "\x01"},
		{"raw DEL (JSON.stringify)", "\"\x7f\"", true, StyleJS, "\x7f"},
		{"raw U+2028 (JSON.stringify)", "\"\u2028\"", true, StyleJS, "\u2028"},
		{"slash unescaped", `"a/b"`, true, StyleJS, "a/b"},
		{"escaped non-ASCII (ensure_ascii)", `"caf\u00e9"`, true, StyleASCII, "café"},
		{"escaped pair (ensure_ascii)", `"\ud83d\ude00"`, true, StyleASCII, "😀"},
		{"escaped DEL (ensure_ascii)", `"\u007f"`, true, StyleASCII, "\x7f"},
		{"escaped U+2028 (ensure_ascii)", `"\u2028"`, true, StyleASCII, "\u2028"},
		{"ensure_ascii with escapes", `"a\n\u00e9\"\u0001"`, true, StyleASCII, "a\né\"\x01"},
		{"escaped solidus", `"\/"`, false, 0, ""},
		{"upper-case hex", `"\u00E9"`, false, 0, ""},
		{"upper-case hex control", `"\u001F"`, false, 0, ""},
		{"escaped plain character", `"\u0041"`, false, 0, ""},
		{"escaped newline as hex", `"\u000a"`, false, 0, ""},
		{"escaped quote as hex", `"\u0022"`, false, 0, ""},
		{"mixed styles", `"é\u00e9"`, false, 0, ""},
		{"pair with upper-case hex", `"\ud83D\ude00"`, false, 0, ""},
		{"invalid UTF-8", "\"\xff\"", false, 0, ""},
		{"truncated UTF-8", "\"\xc3\"", false, 0, ""},
		{"overlong UTF-8", "\"\xc0\xaf\"", false, 0, ""},
		{"UTF-8 encoded surrogate", "\"\xed\xa0\x80\"", false, 0, ""},
		{"lone surrogate", `"\ud800"`, false, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, style, ok := TextForm([]byte(tt.raw))
			require.Equal(t, tt.ok, ok)
			if !ok {
				assert.Zero(t, style)
				return
			}
			assert.Equal(t, tt.style, style)
			assert.Equal(t, tt.text, string(text))
			assert.Equal(t, tt.raw, string(AppendEncoded(nil, text, style)))
		})
	}
}

func TestStyleNames(t *testing.T) {
	for _, s := range Styles {
		got, ok := ParseStyle(s.String())
		assert.True(t, ok, "%v", s)
		assert.Equal(t, s, got)
	}
	assert.Equal(t, "js", StyleJS.String())
	assert.Equal(t, "ascii", StyleASCII.String())
	assert.Equal(t, "unknown", Style(0).String())
	for _, name := range []string{"", "unknown", "JS", "python"} {
		_, ok := ParseStyle(name)
		assert.False(t, ok, "ParseStyle(%q)", name)
	}
}

// randomText returns up to maxRunes runes of valid UTF-8, biased towards the
// characters that escaping styles treat differently.
func randomText(rng *rand.Rand, maxRunes int) []byte {
	classes := [][2]rune{
		{0x00, 0x1f}, {0x20, 0x7e}, {0x7f, 0x7f}, {0x80, 0x7ff},
		{0x800, 0xd7ff}, {0xe000, 0xffff}, {0x10000, 0x10ffff},
	}
	special := []rune{'"', '\\', '/', '\n', '\r', '\t', '\b', '\f', 0x2028, 0x2029, 0xfeff, 0xfffd}
	n := rng.IntN(maxRunes + 1)
	var b []byte
	for range n {
		var r rune
		if rng.IntN(4) == 0 {
			r = special[rng.IntN(len(special))]
		} else {
			c := classes[rng.IntN(len(classes))]
			r = c[0] + rng.Int32N(c[1]-c[0]+1)
		}
		b = utf8.AppendRune(b, r)
	}
	return b
}

func TestTextFormRoundTripRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 20000 {
		maxRunes := 24
		if i%100 == 0 {
			maxRunes = 6000 // long texts cross any internal chunking
		}
		text := randomText(rng, maxRunes)
		require.True(t, utf8.Valid(text))
		for _, s := range Styles {
			raw := AppendEncoded(nil, text, s)
			v, err := Parse(raw, 0)
			require.NoError(t, err, "style %v: %q", s, raw)
			require.Equal(t, String, v.Kind())

			got, style, ok := TextForm(raw)
			require.True(t, ok, "style %v: %q", s, raw)
			require.Equal(t, string(text), string(got), "style %v: %q", s, raw)
			require.Equal(t, string(raw), string(AppendEncoded(nil, got, style)), "style %v: %q", s, raw)
			if style != s {
				// Only a text both styles write alike may be reported as
				// the style tried first.
				require.Equal(t, StyleJS, style)
				require.Equal(t, string(raw), string(AppendEncoded(nil, text, StyleJS)))
			}

			var std string
			require.NoError(t, json.Unmarshal(raw, &std))
			require.Equal(t, string(text), std, "encoding/json reads back other text: %q", raw)
		}
	}
}

func TestAppendTextForm(t *testing.T) {
	roomy := make([]byte, 0, 64)
	tests := []struct {
		name  string
		dst   []byte
		raw   string
		ok    bool
		style Style
	}{
		{"nil dst", nil, `"caf\u00e9"`, true, StyleASCII},
		{"short dst", []byte("pre:"), `"café"`, true, StyleJS},
		{"roomy dst", append(roomy, "pre:"...), `"a\nb"`, true, StyleJS},
		{"refused keeps dst", []byte("pre:"), `"\/"`, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefix := string(tt.dst)
			got, style, ok := AppendTextForm(tt.dst, []byte(tt.raw))
			require.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.style, style)
			require.GreaterOrEqual(t, len(got), len(prefix))
			assert.Equal(t, prefix, string(got[:len(prefix)]), "dst prefix changed")
			if ok {
				want, err := Decode([]byte(tt.raw))
				require.NoError(t, err)
				assert.Equal(t, string(want), string(got[len(prefix):]))
			}
		})
	}
}

func TestRuneCut(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		b := randomText(rng, 40)
		max := utf8.UTFMax + rng.IntN(40)
		n := RuneCut(b, max)
		if len(b) <= max {
			require.Equal(t, len(b), n)
			continue
		}
		require.LessOrEqual(t, n, max)
		require.Greater(t, n, max-utf8.UTFMax, "cut further back than one rune")
		require.True(t, utf8.RuneStart(b[n]), "RuneCut(%q, %d) = %d cuts inside a rune", b, max, n)
		require.True(t, utf8.Valid(b[:n]))
	}
}

func TestRuneCutSmallMax(t *testing.T) {
	b := []byte("😀x")
	for max := 0; max < 4; max++ {
		assert.Equal(t, 0, RuneCut(b, max), "max %d must not cut inside the emoji", max)
	}
	assert.Equal(t, 4, RuneCut(b, 4))
}

// textFormReference is TextForm as the definition says: decode, then
// encode back in each style and compare.
func textFormReference(raw []byte) (text []byte, style Style, ok bool) {
	text, err := Decode(raw)
	if err != nil || !utf8.Valid(text) {
		return nil, 0, false
	}
	for _, s := range Styles {
		if bytes.Equal(AppendEncoded(nil, text, s), raw) {
			return text, s, true
		}
	}
	return nil, 0, false
}

// checkTextForm compares TextForm, which checks each escape as it decodes,
// with textFormReference on the string literal raw.
func checkTextForm(t *testing.T, raw []byte) {
	t.Helper()
	want, wantStyle, wantOK := textFormReference(raw)
	got, style, ok := TextForm(raw)
	if ok != wantOK || style != wantStyle || ok && !bytes.Equal(got, want) {
		t.Fatalf("TextForm(%q) = %q, %v, %v; by decoding and encoding back: %q, %v, %v", raw, got, style, ok, want, wantStyle, wantOK)
	}
}

// TestTextFormEscapes: every escape and literal byte that one style writes
// and the other does not, or that neither writes, next to text of either
// kind.
func TestTextFormEscapes(t *testing.T) {
	pieces := []string{"a", "é", "\U0001F600", "\x7f", `\u007f`, `\u00e9`, `\u00E9`, `\ud83d\ude00`, `\uD83D\uDE00`, `\ud83d`, `\ude00`, `\ud83d\u0041`,
		`\n`, `\u000a`, `\u001f`, `\u001F`, `\u0022`, `\"`, `\\`, `\/`, `\u002f`, `\u0041`, `\u2028`, "\u2028", "\xff", "\xe2\x82", `\t`, `\u0000`, "\x01"}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 20000 {
		raw := []byte{'"'}
		for k := rng.IntN(4); k >= 0; k-- {
			raw = append(raw, pieces[rng.IntN(len(pieces))]...)
		}
		raw = append(raw, '"')
		checkTextForm(t, raw)
	}
}

func FuzzTextForm(f *testing.F) {
	for _, s := range []string{`"a"`, `"\u00e9"`, `"é\n"`, `"\ud83d\ude00"`, `"\/"`, `"\u007f"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if v, err := Parse(raw, 0); err != nil || v.Kind() != String || v.End != len(raw) {
			return
		}
		checkTextForm(t, raw)
	})
}

// TestTextCut: a piece is never cut inside a UTF-8 sequence, also one
// the end of the piece cuts short, nor inside an escape.
func TestTextCut(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int
	}{
		{"ab", 2}, {"ab日", 5}, {"ab\xe6", 2}, {"ab\xe6\x97", 2}, {`ab\n`, 4}, {`ab\`, 2},
		{`ab\u00e9`, 8}, {`ab\u00e`, 2}, {`ab\ud83d\ude80`, 14}, {`ab\ud83d`, 2}, {"ab\xff", 3},
	} {
		assert.Equal(t, tt.want, TextCut([]byte(tt.in)), "%q", tt.in)
	}
}

// textPieces are the parts TestTextCutFast and FuzzTextCut build strings
// of: every kind of escape, whole, cut and wrong, surrogates alone and in
// pairs, UTF-8 sequences whole, cut and invalid, runs of backslashes.
var textPieces = []string{"a", "plain text ", "é", "漢字", "\U0001F600", "\xe6\x97", "\xff", "\x80\x80\x80\x80", `\n`, `\"`, `\\`, `\\\\\\`, `\/`, `\t`,
	`\u00e9`, `\u00E9`, `\ud83d\ude00`, `\ud83d`, `\ude00`, `\ud83d\u0041`, `\u12G4`, `\u00`, `\x`, "\\\xe6", `\`, `"`, "\x01"}

// TestTextCutFast: TextCut, which passes over most of a piece sixteen
// bytes at a time, cuts where going over the whole piece one character
// or escape at a time cuts.
func TestTextCutFast(t *testing.T) {
	// Half the strings end in pieces at which the scan does not stop, so
	// that it runs to the end and must find where to go on one by one.
	noStop := []string{"a", "é", "\xe6\x97", "\x80", `\n`, `\\`, `\\\\\\`, `\"`}
	var cases [][]byte
	for n := range 80 {
		// Where a run of escaped backslashes leaves the scan, its
		// parity tells an escape's start from its letter.
		for _, end := range []string{"", "x", `\n`, "é", "u", "u00"} {
			cases = append(cases, []byte(strings.Repeat("a", n)+strings.Repeat(`\\`, 80-n)+end))
		}
	}
	for _, b := range cases {
		if got, want := TextCut(b), textCutFrom(b, 0); got != want {
			t.Fatalf("TextCut(%q) = %d, one by one %d", b, got, want)
		}
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for range 40000 {
		var b []byte
		for k := rng.IntN(40); k >= 0; k-- {
			b = append(b, textPieces[rng.IntN(len(textPieces))]...)
		}
		for k := rng.IntN(2) * rng.IntN(60); k > 0; k-- {
			b = append(b, noStop[rng.IntN(len(noStop))]...)
		}
		if got, want := TextCut(b), textCutFrom(b, 0); got != want {
			t.Fatalf("TextCut(%q) = %d, one by one %d", b, got, want)
		}
	}
}

func FuzzTextCut(f *testing.F) {
	for _, s := range textPieces {
		f.Add([]byte(strings.Repeat("abcdefgh", 5) + s + strings.Repeat(s, 10)))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := TextCut(b), textCutFrom(b, 0); got != want {
			t.Fatalf("TextCut(%q) = %d, one by one %d", b, got, want)
		}
	})
}

// TestTextStylesLong: AppendTextStyles gives every style that encodes
// its text back to the literal, not only the first, for literals long
// enough that its scanner passes over blocks of them with special bytes
// at any place, after a prefix of dst kept as it is and into a dst of no
// room to spare.
func TestTextStylesLong(t *testing.T) {
	pieces := []string{"a", "plain text ", "0123456789abcdef", "é", "漢字", "\U0001F600", "\x7f", "\xff", "\xe2\x82",
		`\n`, `\"`, `\\`, `\t`, `\/`, `\u00e9`, `\u00E9`, `\u0001`, `\u000a`, `\u0041`, `\ud83d\ude00`, `\ud83d`, "\x01", `"`}
	rng := rand.New(rand.NewPCG(11, 12))
	for range 20000 {
		var inner []byte
		for k := rng.IntN(12); k >= 0; k-- {
			// Mostly plain text, so that most strings decode.
			if p := pieces[rng.IntN(len(pieces))]; rng.IntN(3) == 0 || len(p) > 1 && p[0] != '\\' && p != "0123456789abcdef" {
				inner = append(inner, p...)
			} else {
				inner = append(inner, strings.Repeat("x", rng.IntN(20))...)
			}
		}
		prefix := []byte("kept")[:rng.IntN(5)]
		dst := append(make([]byte, 0, len(prefix)+len(inner)), prefix...)
		got, set := AppendTextStyles(dst, inner)
		require.Equal(t, prefix, got[:len(prefix)], "%q", inner)
		raw := append(append([]byte{'"'}, inner...), '"')
		text, err := Decode(raw)
		var want StyleSet
		if err == nil && utf8.Valid(text) {
			for _, st := range Styles {
				if bytes.Equal(AppendEncoded(nil, text, st), raw) {
					want |= 1 << st
				}
			}
		}
		require.Equal(t, want, set, "styles of %q", inner)
		if set != 0 {
			require.Equal(t, string(text), string(got[len(prefix):]), "text of %q", inner)
		}
	}
}
