package transcript

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scanAll returns the tokens of in as strings ("k:" before a key, "/"
// before a closer) and the error that ended the scan, io.EOF for a
// complete value; err ValueCut adds "cut" to a truncated end's tokens.
func scanAll(in string, truncated bool) ([]string, error) {
	s := NewScanner([]byte(in), truncated)
	var toks []string
	for {
		tok, err := s.Next()
		if tok.Kind != Invalid {
			prefix := ""
			switch {
			case tok.Key:
				prefix = "k:"
			case tok.End:
				prefix = "/"
			}
			toks = append(toks, prefix+string(tok.Raw))
		}
		if err != nil {
			if s.ValueCut() {
				toks = append(toks, "cut")
			}
			return toks, err
		}
	}
}

func TestScanner(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"object", ` {"a" : [1, true ,null], "b":{}} `, []string{`{`, `k:"a"`, `[`, `1`, `true`, `null`, `/]`, `k:"b"`, `{`, `/}`, `/}`}},
		{"string", `"x\"y"`, []string{`"x\"y"`}},
		{"number, ended by white space", `-1.5e+3 `, []string{`-1.5e+3`}},
		{"empty array", `[ ]`, []string{`[`, `/]`}},
		{"deep nesting is not refused", nestedArrays(MaxDepth + 10), append(slicesOf("[", MaxDepth+10), slicesOf("/]", MaxDepth+10)...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, truncated := range []bool{false, true} {
				got, err := scanAll(tt.in, truncated)
				assert.Equal(t, io.EOF, err)
				assert.Equal(t, tt.want, got)
			}
		})
	}
}

func slicesOf(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func TestScannerTruncated(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string // the tokens, "cut" when ValueCut
	}{
		{"before anything", ``, []string{"cut"}},
		{"after '['", `[`, []string{`[`, "cut"}},
		{"after ',' in an array", `[1, `, []string{`[`, `1`, "cut"}},
		{"after a value", `[1 `, []string{`[`, `1`}},
		{"in a number", `[12`, []string{`[`, `12`, "cut"}},
		{"in true, unchecked", `[tr`, []string{`[`, `tr`, "cut"}},
		{"a cut literal is not checked", `[trux`, []string{`[`, `trux`, "cut"}},
		{"after '{'", `{ `, []string{`{`}},
		{"in a key", `{"ab`, []string{`{`, `k:"ab`}},
		{"before the colon", `{"a" `, []string{`{`, `k:"a"`}},
		{"after the colon", `{"a": `, []string{`{`, `k:"a"`, "cut"}},
		{"after ',' in an object", `{"a":1,`, []string{`{`, `k:"a"`, `1`}},
		{"in a string", `["abc`, []string{`[`, `"abc`, "cut"}},
		{"after a backslash", `["ab\`, []string{`[`, `"ab`, "cut"}},
		{"in a \\u escape", `["ab\u00`, []string{`[`, `"ab`, "cut"}},
		{"after a whole escape", `["ab\"`, []string{`[`, `"ab\"`, "cut"}},
		{"a high surrogate that may be paired", `["a\ud83d`, []string{`[`, `"a`, "cut"}},
		{"a high surrogate, one byte after", `["a\ud83dx`, []string{`[`, `"a`, "cut"}},
		{"a high surrogate, \\u after", `["a\ud83d\ude`, []string{`[`, `"a`, "cut"}},
		{"a high surrogate, not \\u after", `["a\ud83dxy`, []string{`[`, `"a\ud83dxy`, "cut"}},
		{"a low surrogate", `["a\ude00`, []string{`[`, `"a\ude00`, "cut"}},
		{"a whole pair", `["a\ud83d\ude00`, []string{`[`, `"a\ud83d\ude00`, "cut"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := scanAll(tt.in, true)
			assert.Equal(t, ErrTruncated, err)
			assert.Equal(t, tt.want, got)
			_, err = scanAll(tt.in, false)
			var se *SyntaxError
			assert.True(t, errors.As(err, &se), "the whole text %q is not JSON: %v", tt.in, err)
		})
	}
}

func TestScannerInvalid(t *testing.T) {
	for _, in := range []string{
		`{"a" 1}`, `{1:2}`, `[1,]`, `{"a":1,}`, `[1 2]`, `[01]`, `[1x]`, `["\x"]`, `["\u12g4"]`,
		"[\"a\x01\"]", `[tru]`, `{"a":}`, `]`, `[}`, `{]`, `{} {}`, `[1]x`,
		`["a` + "\x00",
	} {
		for _, truncated := range []bool{false, true} {
			_, err := scanAll(in, truncated)
			var se *SyntaxError
			assert.True(t, errors.As(err, &se), "%q (truncated %v): %v", in, truncated, err)
		}
	}
}

func TestScannerErrorSticks(t *testing.T) {
	s := NewScanner([]byte(`[1,`), true)
	for range 3 {
		_, _ = s.Next()
	}
	_, err := s.Next()
	require.Equal(t, ErrTruncated, err)
	_, err = s.Next()
	assert.Equal(t, ErrTruncated, err)
}

func TestScannerSkip(t *testing.T) {
	s := NewScanner([]byte(`[{"a":[1,{"b":"]"}]},2]`), false)
	_, _ = s.Next() // [
	tok, err := s.Next()
	require.NoError(t, err)
	require.Equal(t, Object, tok.Kind)
	require.NoError(t, s.Skip())
	tok, err = s.Next()
	require.NoError(t, err)
	assert.Equal(t, "2", string(tok.Raw))

	s = NewScanner([]byte(`[[1,[2`), true)
	_, _ = s.Next()
	_, _ = s.Next()
	assert.Equal(t, ErrTruncated, s.Skip())

	s = NewScanner([]byte(`[[1 2]]`), true)
	_, _ = s.Next()
	_, _ = s.Next()
	var se *SyntaxError
	assert.True(t, errors.As(s.Skip(), &se), "skipped values are checked")
}

func TestAppendLossy(t *testing.T) {
	tests := []struct {
		name, raw string
		max       int
		want      string
	}{
		{"plain", `"hello"`, -1, "hello"},
		{"escapes", `"\"\\\/\b\f\n\r\t\u00e9\u00E9"`, -1, "\"\\/\b\f\n\r\téé"},
		{"surrogate pair", `"\ud83d\ude80!"`, -1, "🚀!"},
		{"lone high surrogate", `"\ud83d x"`, -1, "\ufffd x"},
		{"lone low surrogate", `"\ude80"`, -1, "\ufffd"},
		{"high then not low", `"\ud83d\u0041"`, -1, "\ufffdA"},
		{"two highs then a low", `"\ud83d\ud83d\ude80"`, -1, "\ufffd🚀"},
		{"invalid UTF-8 copied", "\"\xff\"", -1, "\xff"},
		{"no closing quote", `"abc`, -1, "abc"},
		{"no closing quote after an escape", `"ab\"`, -1, `ab"`},
		{"only the opening quote", `"`, -1, ""},
		{"empty", ``, -1, ""},
		{"a bad escape is copied", `"a\x"`, -1, `a\x`},
		{"a backslash at the end", `"a\`, -1, `a\`},
		{"max cuts a run", `"abcdef"`, 3, "abc"},
		{"max zero", `"abc"`, 0, ""},
		{"an escape past max is not decoded", `"abc\n"`, 3, "abc"},
		{"an escape before max is whole", `"ab\u20ac"`, 3, "ab€"},
		{"a run may end inside a character", `"aé"`, 2, "a\xc3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, string(AppendLossy(nil, []byte(tt.raw), tt.max)))
			assert.Equal(t, "x"+tt.want, string(AppendLossy([]byte("x"), []byte(tt.raw), tt.max)), "max counts from the end of dst")
		})
	}
}

func TestUnescape(t *testing.T) {
	tests := []struct {
		in string
		r  rune
		n  int
	}{
		{`\n`, '\n', 2},
		{`\/x`, '/', 2},
		{`\u00e9`, 'é', 6},
		{`\u00E9`, 'é', 6},
		{`\ud83d\ude80`, '🚀', 12},
		{`\ud83d`, 0xd83d, 6},
		{`\ud83d\u0041`, 0xd83d, 6},
		{`\ude80`, 0xde80, 6},
		{`\ud83d\ude8`, 0xd83d, 6},
		{`\x`, 0, 0},
		{`\u12`, 0, 0},
		{`\u12g4`, 0, 0},
		{`\`, 0, 0},
		{`a`, 0, 0},
		{``, 0, 0},
	}
	for _, tt := range tests {
		r, n := Unescape([]byte(tt.in))
		assert.Equal(t, tt.r, r, "%q", tt.in)
		assert.Equal(t, tt.n, n, "%q", tt.in)
	}
}

// TestScanStringCutPoints cuts a literal after every byte: the truncated
// scan never fails, and its start decodes to a prefix of the whole text.
func TestScanStringCutPoints(t *testing.T) {
	lit := `"a\u00e9\ud83d\ude80\n\ud83d x\"` + strings.Repeat("é", 3) + `"`
	whole := string(AppendLossy(nil, []byte(lit), -1))
	for cut := 1; cut < len(lit); cut++ {
		end, err := scanString([]byte(lit[:cut]), 0, true)
		require.Equal(t, ErrTruncated, err, "cut at %d", cut)
		start := string(AppendLossy(nil, []byte(lit[:end]), -1))
		assert.True(t, strings.HasPrefix(whole, start), "cut at %d: %q is not a start of %q", cut, start, whole)
	}
}
