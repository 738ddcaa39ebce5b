package externalizer

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDescribeJSON(t *testing.T) {
	tests := []struct {
		name, data, media, want string
	}{
		{"codex output as text", `{"output":"total 48\ndrwx foo\n","metadata":{"exit_code":1,"duration_seconds":0.3}}`, MediaText,
			`JSON object {output, metadata{exit_code:1, duration_seconds:0.3}}; output: "total 48"`},
		{"array of objects: the union of their keys", `[{"path":"a.go","line":3},{"path":"b.go","line":4,"col":2}]`, MediaJSON,
			"JSON array of 2 objects {path, line, col}"},
		{"array of strings", `["alpha","beta"]`, MediaJSON, `JSON array of 2 strings: "alpha"`},
		{"array of numbers", `[1,2,3,4,5,6,7]`, MediaJSON, "JSON array of 7 numbers: 1, 2, 3, 4, 5, …"},
		{"array of booleans", `[true,false]`, MediaJSON, "JSON array of 2 booleans: true, false"},
		{"mixed array", `[1,"a",{}]`, MediaJSON, "JSON array of 3 values"},
		{"empty array", `[]`, MediaJSON, "JSON array of 0 elements"},
		{"empty object", `{}`, MediaJSON, "JSON object {}"},
		{"string with escapes", `"line one\nline two\/"`, MediaJSON, `JSON string: "line one" (2 lines)`},
		{"surrogate pair", `"\ud83d\ude80 launch"`, MediaJSON, `JSON string: "🚀 launch" (1 line)`},
		{"lone surrogate", `"\ud83d x"`, MediaJSON, "JSON string: \"\ufffd x\" (1 line)"},
		{"many keys", `{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10}`, MediaJSON,
			"JSON object {a:1, b:2, c:3, d:4, e:5, f:6, g:7, h:8, …} (10 members)"},
		{"nested arrays and deep objects", `{"a":[[1],[2]],"b":{"c":{"d":{"e":1}}}}`, MediaJSON, "JSON object {a[2], b{c{…}}}"},
		{"long scalar not shown", `{"n":123456789012345678901234}`, MediaJSON, "JSON object {n}"},
		{"large numbers are JSON", `{"n":1E+400,"m":-0.0}`, MediaJSON, "JSON object {n:1E+400, m:-0.0}"},
		{"deep nesting", `{"a":` + strings.Repeat(`[`, 1000) + strings.Repeat(`]`, 1000) + `}`, MediaJSON, "JSON object {a[1]}"},
		{"text that is not JSON", "{ not json", MediaText, "{ not json (1 line)"},
		{"JSON lines are text", "{\"a\":1}\n{\"a\":2}\n", MediaText, `{"a":1} (2 lines)`},
		{"a number is text", "42\n", MediaText, "42 (1 line)"},
		{"bad escape is text", `"\x"`, MediaJSON, `"\x" (1 line)`},
		{"leading zero is not JSON", `[012]`, MediaJSON, "[012] (1 line)"},
		{"media with parameters", `{"a":1}`, MediaJSON + "; charset=utf-8", "JSON object {a:1}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Describe([]byte(tt.data), tt.media))
		})
	}
}

func TestDescribeLargeJSON(t *testing.T) {
	// The structure comes from the first 64 KiB, the element count from
	// every byte.
	var b strings.Builder
	b.WriteString("[")
	for i := range 5000 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"path":"src/file%d.go","line":%d,"text":"a \"quoted\" [bracket] {brace}, comma"}`, i, i)
	}
	b.WriteString("]")
	require.Greater(t, b.Len(), 2*describeWindow)
	assert.Equal(t, "JSON array of 5000 objects {path, line, text}", Describe([]byte(b.String()), MediaJSON))

	obj := `{"output":"` + strings.Repeat(`line\n`, 40000) + `","metadata":{"exit_code":0}}`
	assert.Equal(t, `JSON object {output, …} (2 members); output: "line"`, Describe([]byte(obj), MediaText),
		"a member cut by the window is still named")
}

func TestDescribeText(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"first line and count", "hello\nworld\n", "hello (2 lines)"},
		{"no final newline", "hello\nworld", "hello (2 lines)"},
		{"leading blank lines", "\n\n   \n  first\n", "first (4 lines)"},
		{"blank", "\n  \n\t\n", "blank (3 lines)"},
		{"one error line that is the first", "Error: boom\nok\n", "Error: boom — 1 error line (2 lines)"},
		{"first and last error lines", "Running tests\nok 1\nERROR: boom happened\nok 2\nTraceback (most recent call last):\nValueError: bad\n",
			`Running tests — 3 error lines: "ERROR: boom happened" … "ValueError: bad" (6 lines)`},
		{"words, not identifiers", "fmt.Errorf(x)\nerror_code = 1\nstderr\nerrorless\n", "fmt.Errorf(x) (4 lines)"},
		{"inflections and CamelCase", "start\nTest FAILED\njava.lang.NullPointerException\npanicked at x\n",
			`start — 3 error lines: "Test FAILED" … "panicked at x" (4 lines)`},
		{"fatal and exception", "a\nfatal: not a git repository\nUnhandled exception\n", `a — 2 error lines: "fatal: not a git repository" … "Unhandled exception" (3 lines)`},
		{"terminal escapes and tabs", "\x1b[31mred\x1b[0m hello\tworld\n", "red hello world (1 line)"},
		{"CRLF", "one\r\ntwo\r\n", "one (2 lines)"},
		{"invalid UTF-8", "bad \xff byte\n", "bad \ufffd byte (1 line)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Describe([]byte(tt.data), MediaText))
		})
	}
}

func TestDescribeLargeText(t *testing.T) {
	var b strings.Builder
	b.WriteString("go test ./...\n")
	b.WriteString("--- FAIL: TestFirst (0.00s)\n")
	for i := range 20000 {
		fmt.Fprintf(&b, "line %d of the log\n", i)
	}
	b.WriteString("middle error that no window sees\n")
	for i := range 20000 {
		fmt.Fprintf(&b, "line %d of the log\n", i)
	}
	b.WriteString("FAIL\tgithub.com/x/y\t0.1s\n")
	data := []byte(b.String())
	require.Greater(t, len(data), 4*describeWindow)
	assert.Equal(t, `go test ./... — 2+ error lines: "--- FAIL: TestFirst (0.00s)" … "FAIL github.com/x/y 0.1s" (40004 lines)`,
		Describe(data, MediaText))
}

func TestDescribeImages(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 37, 21))
	img.Set(1, 1, color.RGBA{R: 255, A: 255})
	var p, j, g bytes.Buffer
	require.NoError(t, png.Encode(&p, img))
	require.NoError(t, jpeg.Encode(&j, img, nil))
	require.NoError(t, gif.Encode(&g, img, nil))
	size := func(b bytes.Buffer) string { return fmt.Sprint(b.Len()) + " B" }

	assert.Equal(t, "PNG image 37×21, "+size(p), Describe(p.Bytes(), "image/png"))
	assert.Equal(t, "JPEG image 37×21, "+size(j), Describe(j.Bytes(), "image/jpeg"))
	assert.Equal(t, "GIF image 37×21, "+size(g), Describe(g.Bytes(), "image/gif"))
	assert.Equal(t, "PNG image 37×21, "+size(p), Describe(p.Bytes(), ""), "sniffed")
	assert.Equal(t, "PNG image 37×21, "+size(p), Describe(p.Bytes(), "image/webp"), "the header wins over the declared type")
	assert.Equal(t, "WEBP image, 4 B", Describe([]byte("RIFF"), "image/webp"), "no dimensions without a header")
}

func TestDescribeBinary(t *testing.T) {
	assert.Equal(t, "binary, 5 B", Describe([]byte("\x00\x01\x02\x03\xff"), "application/octet-stream"))
	assert.Equal(t, "binary, 4 B", Describe([]byte("\x00\xff\xfe\x01"), ""))
	assert.Equal(t, "binary (application/pdf), 12 B", Describe([]byte("%PDF-1.4\x00\xff\xfe\xfd"), ""))
	assert.Equal(t, "empty", Describe(nil, MediaText))
	assert.Equal(t, "empty", Describe(nil, ""))
}

func TestDescriberMedia(t *testing.T) {
	d := NewDescriber("")
	assert.Equal(t, "", d.Media(), "nothing written, nothing guessed")
	_, _ = d.Write([]byte("plain text"))
	assert.Equal(t, MediaText, d.Media())
	d = NewDescriber(MediaJSON)
	_, _ = d.Write([]byte("\x00\x01"))
	assert.Equal(t, MediaJSON, d.Media(), "a given media type is kept")
}

// TestDescribeChunked checks that a Describer fed in pieces of any size
// says what Describe says of the whole, on artifacts around the window
// sizes.
func TestDescribeChunked(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var arr strings.Builder
	arr.WriteString("[")
	for i := range 9000 {
		if i > 0 {
			arr.WriteString(",")
		}
		fmt.Fprintf(&arr, `"s\"%d\\"`, i)
	}
	arr.WriteString("]")
	inputs := []struct {
		data  []byte
		media string
	}{
		{[]byte(strings.Repeat("some text with error\n", 9000)), MediaText},
		{[]byte(strings.Repeat("x", describeWindow-1) + "\nerror here\n" + strings.Repeat("y", describeWindow)), MediaText},
		{[]byte(strings.Repeat("é", describeWindow)), MediaText},
		{[]byte(arr.String()), MediaJSON},
		{[]byte(`"` + strings.Repeat(`a\nb`, 60000) + `"`), MediaJSON},
	}
	for i, in := range inputs {
		want := Describe(in.data, in.media)
		for range 5 {
			d := NewDescriber(in.media)
			rest := in.data
			for len(rest) > 0 {
				n := min(len(rest), 1+rng.IntN(3*describeWindow))
				if rng.IntN(3) == 0 {
					n = min(len(rest), 1+rng.IntN(8))
				}
				_, _ = d.Write(rest[:n])
				rest = rest[n:]
			}
			assert.Equal(t, want, d.String(), "input %d", i)
		}
	}
}

// checkDescription checks what every description must be.
func checkDescription(t *testing.T, s string) {
	t.Helper()
	assert.LessOrEqual(t, utf8.RuneCountInString(s), DescribeMax, "%q", s)
	assert.True(t, utf8.ValidString(s), "%q", s)
	assert.NotEmpty(t, s)
	for _, r := range s {
		if unicode.IsControl(r) {
			t.Errorf("control character %U in %q", r, s)
		}
	}
}

func TestDescribeBounds(t *testing.T) {
	long := strings.Repeat("日本語のテキスト error ", 200)
	for _, data := range []string{
		long, long + "\n" + long + "\n" + long, `{"` + long + `":1}`, `["` + long + `"]`, `"` + long + `"`,
		"\x1b[31m" + long + "\x00\n\u2028", strings.Repeat("\n", 1000),
	} {
		for _, media := range []string{MediaText, MediaJSON, "", "image/png", "application/octet-stream"} {
			checkDescription(t, Describe([]byte(data), media))
		}
	}
}

func FuzzDescribe(f *testing.F) {
	f.Add([]byte(`{"output":"x\ny","metadata":{"exit_code":1}}`), MediaText, 3)
	f.Add([]byte(`[{"a":1},{"b":"\ud83d\ude80"}]`), MediaJSON, 1)
	f.Add([]byte("line\nERROR x\n\x1b[31mred"), MediaText, 7)
	f.Add([]byte("\x89PNG\r\n\x1a\n"), "", 2)
	f.Add([]byte(`"\u00e9\/"`), MediaJSON, 0)
	f.Fuzz(func(t *testing.T, data []byte, media string, chunk int) {
		want := Describe(data, media)
		checkDescription(t, want)
		d := NewDescriber(media)
		step := 1 + (chunk&0xff)%17
		for i := 0; i < len(data); i += step {
			_, _ = d.Write(data[i:min(i+step, len(data))])
		}
		assert.Equal(t, want, d.String(), "fed in pieces of %d bytes", step)
	})
}

// looksLikeError reports whether a line holds an error-looking word, as
// Describer.text decides it: by the matcher errorMatcher picks for it.
func looksLikeError(line []byte) bool { return errorMatcher(line)(line) }

// TestLooksLikeError checks the hand-written matcher against the
// patterns it stands for, on lines built from the words, their near
// misses and separators.
func TestLooksLikeError(t *testing.T) {
	words := []string{"error", "Errors", "FAILED", "failure", "failures", "panicking", "Exception", "traceback", "tracebac\u212a", "fatal", "ERRORſ", "TypeError", "NullPointerException", "AssertionFailures", "xError", "aFailureb", "ok", "stderr", "Errorf", "error_code", "fail2", "fine", "é漢字", "E", "f", ""}
	seps := []string{" ", "_", "", ": ", "é", "\t", "9"}
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 20000; n++ {
		var b strings.Builder
		for k := rng.IntN(4); k >= 0; k-- {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteString(seps[rng.IntN(len(seps))])
		}
		line := b.String()
		want := errorWord.MatchString(line) || errorCamel.MatchString(line)
		if got := looksLikeError([]byte(line)); got != want {
			t.Fatalf("looksLikeError(%q) = %v, want %v", line, got, want)
		}
	}
}

// FuzzLooksLikeError checks the hand-written matcher against the regular
// expressions on arbitrary lines.
func FuzzLooksLikeError(f *testing.F) {
	for _, s := range []string{"error", "xError: y", "FAILED", "stderr", "panicking_", "ErrorErrors", "aFailure", "Errorf"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if got, want := looksLikeError(line), errorRegexp(line); got != want {
			t.Fatalf("looksLikeError(%q) = %v, the regular expressions say %v", line, got, want)
		}
	})
}

// BenchmarkDescribeText describes a 64 KiB log with a few error lines.
func BenchmarkDescribeText(b *testing.B) {
	var log strings.Builder
	for i := 0; log.Len() < 64<<10; i++ {
		if i%97 == 0 {
			fmt.Fprintf(&log, "step %d: TypeError: cannot read property of undefined\n", i)
		} else {
			fmt.Fprintf(&log, "    at Object.<anonymous> (/home/dev/src/project/file%d.js:%d:%d) compiled the template\n", i, i*7, i%80)
		}
	}
	data := []byte(log.String())
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		Describe(data, MediaText)
	}
}
