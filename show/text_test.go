package show

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/transcript"
)

// TestBudgets: show's lengths count the text, not the "…" of a cut
// (display's tests say how text is cleaned).
func TestBudgets(t *testing.T) {
	assert.Equal(t, "héllo…", cleanLine([]byte("héllo wörld"), 5))
	assert.Equal(t, "short", cleanLine([]byte("short"), 5))
	assert.Equal(t, "plain\ttab␀", cleanLine([]byte("plain\ttab\x00\r"), 0))
	assert.Equal(t, "a b c", flat([]byte("  a\n\n b\t\tc \r\n"), 0))
	assert.Equal(t, "abc…", flat([]byte("abcdef"), 3))
	assert.Equal(t, "abc", flat([]byte("abc   "), 3), "trailing space is no cut")
	assert.Equal(t, "x␀y", flatString("x\x00y", 0))
	assert.Equal(t, "red", flat([]byte("\x1b[31mred\x1b[0m"), 0))
}

func TestCompactJSON(t *testing.T) {
	cases := []struct {
		in   string
		max  int
		want string
	}{
		{`{ "a" : [1, 2],  "b":"x  y\n" }`, 0, `{"a":[1,2],"b":"x  y\n"}`},
		{`{"p":"caf\u00e9 \ud83d\ude00 \u0007 \u00a0"}`, 0, `{"p":"café 😀 \u0007 \u00a0"}`},
		{`{"p":"\ud800 lone"}`, 0, `{"p":"\ud800 lone"}`},
		{`{"q":"\"quoted\" \\"}`, 0, `{"q":"\"quoted\" \\"}`},
		{`["héllo"]`, 4, `["hé…`},
	}
	for _, tc := range cases {
		v, err := transcript.Parse([]byte(tc.in), 0)
		require.NoError(t, err)
		assert.Equal(t, tc.want, compactJSON(v.Raw(), tc.max), tc.in)
	}
}

func TestArgs(t *testing.T) {
	parse := func(s string) transcript.Value {
		v, err := transcript.Parse([]byte(s), 0)
		require.NoError(t, err)
		return v
	}
	assert.Equal(t, `{"a":1}`, args(parse(`"{\"a\": 1}"`), 0), "JSON inside a string")
	assert.Equal(t, "ls -la", args(parse(`"ls  -la"`), 0), "a string that is no JSON")
	assert.Equal(t, `[1,2]`, args(parse(`[1, 2]`), 0))
	assert.Equal(t, "", args(transcript.Value{}, 0))
}

func TestDecode(t *testing.T) {
	cases := []struct{ in, want string }{
		{`"plain"`, "plain"},
		{`"esc\n\t\"\\\/"`, "esc\n\t\"\\/"},
		{`"pair \ud83d\ude00"`, "pair 😀"},
		{`"lone \ud800 high"`, "lone \uFFFD high"},
		{`"lone \udc00\ud800 both"`, "lone \uFFFD\uFFFD both"},
		{`"\\ud800 is text"`, `\ud800 is text`},
		{`"end \ud83d"`, "end \uFFFD"},
	}
	for _, tc := range cases {
		v, err := transcript.Parse([]byte(tc.in), 0)
		require.NoError(t, err)
		got, ok := decode(nil, v)
		assert.True(t, ok)
		assert.Equal(t, tc.want, string(got), tc.in)
	}
	_, ok := decode(nil, transcript.Value{})
	assert.False(t, ok)
}

func TestWhen(t *testing.T) {
	cases := []struct{ in, want string }{
		{`"2025-06-01T10:30:10.599Z"`, "2025-06-01 10:30:10"},
		{`"2025-06-01T12:30:10+02:00"`, "2025-06-01 10:30:10"},
		{`1735689600500`, "2025-01-01 00:00:00"},
		{`1717236000`, "2024-06-01 10:00:00"},
		{`"yesterday\nnoon"`, "yesterday noon"},
		{`-1`, "-1"},
		{`null`, ""},
	}
	for _, tc := range cases {
		v, err := transcript.Parse([]byte(tc.in), 0)
		require.NoError(t, err)
		assert.Equal(t, tc.want, when(v), tc.in)
	}
}

func TestBase64Size(t *testing.T) {
	cases := []struct {
		inner string
		want  int
	}{
		{"", 0},
		{"QQ==", 1},
		{"QUI=", 2},
		{"QUJD", 3},
		{"QUJD\\nRA==", 4},
		{"QUJD\\/A", 4},
		{strings.Repeat("QUJD", 1000), 3000},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, base64Size([]byte(tc.inner)), tc.inner)
	}
}
