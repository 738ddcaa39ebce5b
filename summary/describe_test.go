package summary

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

	"github.com/transcript-tool/transcript-tool/transcript"
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

// TestParseJSONWindow parses starts of JSON values as the first window of
// a larger artifact: what the window holds of a member or element is kept.
func TestParseJSONWindow(t *testing.T) {
	tests := []struct {
		name, head, want string
	}{
		{"a member cut in its value", `{"a":1,"b":"tex`, `{a:1, b, …}`},
		{"a member cut after its colon", `{"a":1,"b": `, `{a:1, b, …}`},
		{"a member cut in its name", `{"a":1,"bc`, `{a:1, …}`},
		{"a cut number is shown as far as it goes", `{"a":12`, `{a:12, …}`},
		{"a nested array cut", `{"a":[1,2`, `{a[2+], …}`},
		{"an element counts once its comma is in the window", `[1,2,`, "3 values"},
		{"a window cut before a comma", `[1,2 `, "3 numbers: 1, 2, …"},
		{"deep values are checked", `{"a":{"b":{"c":[1 2`, "not JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, _, err := parseJSON([]byte(tt.head), true)
			got := "not JSON"
			switch {
			case err != transcript.ErrTruncated:
			case v.kind == '{':
				got = v.keys(shownKeys, false)
			default:
				got = v.elements(3)
			}
			assert.Equal(t, tt.want, got)
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

	// Between one and two windows long: the start is still only a part.
	mid := "[" + strings.Join(strings.Split(strings.TrimSuffix(strings.TrimPrefix(b.String(), "["), "]"), "},{")[:1500], "},{") + "}]"
	require.Greater(t, len(mid), describeWindow)
	require.Less(t, len(mid), 2*describeWindow)
	assert.Equal(t, "JSON array of 1500 objects {path, line, text}", Describe([]byte(mid), MediaJSON))

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
		{"blank", "\n  \t\n\t\n", "blank (3 lines)"},
		// Error words are counted only in the output of a failed command
		// (TestDescribeShell): a document about errors is no failure.
		{"error words are not counted", "Running tests\nok 1\nERROR: boom happened\nValueError: bad\n", "Running tests (4 lines)"},
		{"a first line with an error word is shown as it is", "Error: boom\nok\n", "Error: boom (2 lines)"},
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

func TestDescribeRead(t *testing.T) {
	spec := "---\ntitle: x\n---\n\n# Module Phi: Pipeline Orchestration\n\n## Error Handling\n\nRetries fail over.\n"
	numbered := "     1→---\n     2→title: x\n     3→\n     4→# Module Phi\n     5→## Error Handling\n"
	tests := []struct {
		name, tool, path, data, want string
	}{
		{"a Markdown file: its first heading", "Read", "/home/u/docs/spec.md", spec,
			"read /home/u/docs/spec.md (9 lines): # Module Phi: Pipeline Orchestration"},
		{"Claude Code's line numbers are stripped", "Read", "docs/spec.md", numbered, "read docs/spec.md (5 lines): # Module Phi"},
		{"tab line numbers", "read_file", "a.go", "1\tpackage main\n2\t\n3\tfunc main() {}\n", "read a.go (3 lines): package main"},
		{"other files: the first non-empty line", "read", "src/a.ts", "\n/**\n * # not a heading\n */\n", "read src/a.ts (4 lines): /**"},
		{"no path known", "view", "", "# Title\n", "read (1 line): # Title"},
		{"an empty file", "Read", "empty.txt", "\n\n", "read empty.txt (2 lines)"},
		{"a long path keeps its end", "Read", "/" + strings.Repeat("very-long-directory/", 9) + "spec.md", "# " + strings.Repeat("h", 200) + "\n",
			"read …" + strings.Repeat("very-long-directory/", 5)[16:] + "spec.md (1 line): # " + strings.Repeat("h", 89) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DescribeIn([]byte(tt.data), MediaText, Context{Tool: tt.tool, Input: tt.path, Exit: "0"})
			assert.Equal(t, tt.want, got)
			checkDescription(t, got)
		})
	}
}

func TestDescribeShell(t *testing.T) {
	tests := []struct {
		name string
		ctx  Context
		data string
		want string
	}{
		{"success: no error line, even with error words", Context{Tool: "Bash", Input: "grep -r error .", Exit: "0"},
			"src/errors.go: error handling\nFAIL is a word\n", "$ grep -r error . — exit 0 (2 lines)"},
		{"failure: the first error line", Context{Tool: "bash", Input: "npm run check", Failed: true},
			"> check\n> tsc\n\nsrc/a.ts(3,1): error TS2305: no member\nsrc/b.ts: error TS1\n\n\nCommand exited with code 2",
			`$ npm run check — exit 2: "src/a.ts(3,1): error TS2305: no member" (8 lines)`},
		{"Claude Code's exit line comes first", Context{Tool: "Bash", Input: "false", Failed: true},
			"Exit code 1\nsomething went wrong\n", `$ false — exit 1: "something went wrong" (2 lines)`},
		{"no exit status known", Context{Tool: "run_command", Input: "ls"}, "a\nb\n", "$ ls (2 lines)"},
		{"an exit status in the output of a chat tool", Context{Tool: "run_command", Input: "make"},
			"cc x.c\nx.c:1: fatal error: y.h\nExit code: 2\n", `$ make — exit 2: "x.c:1: fatal error: y.h" (3 lines)`},
		{"failed without a code, nor an error word", Context{Tool: "exec", Input: "sleep 99", Failed: true},
			"Debugger attached.\nCommand aborted\n", `$ sleep 99 — failed: "Debugger attached." (2 lines)`},
		{"the command is not known", Context{Tool: "exec_command", Exit: "0"}, "\ntotal 48\ndrwx a\n", "shell output — exit 0 (3 lines): total 48"},
		{"Codex's wrapped output", Context{Tool: "shell", Input: "go test ./..."},
			`{"output":"ok\nFAIL x\n","metadata":{"exit_code":1,"duration_seconds":0.3}}`, `$ go test ./... — exit 1: "FAIL x" (3 lines)`},
		{"Codex's wrapped output, success", Context{Tool: "shell", Input: "ls"},
			`{"output":"a\nb","metadata":{"exit_code":0}}`, `$ ls — exit 0 (2 lines)`},
		{"the exit status the transcript records wins", Context{Tool: "shell", Input: "x", Exit: "3"}, "Exit code 0\n", `$ x — exit 3 (1 line)`},
		{"a long command and error line share the room", Context{Tool: "Bash", Input: strings.Repeat("c", 300), Exit: "1"},
			strings.Repeat("e", 300) + " error\n", "$ " + strings.Repeat("c", 87) + `… — exit 1: "` + strings.Repeat("e", 87) + `…" (1 line)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DescribeIn([]byte(tt.data), MediaText, tt.ctx)
			assert.Equal(t, tt.want, got)
			checkDescription(t, got)
		})
	}
}

func TestDescribeLargeShell(t *testing.T) {
	var b strings.Builder
	b.WriteString("go test ./...\n")
	b.WriteString("--- FAIL: TestFirst (0.00s)\n")
	for i := range 40000 {
		fmt.Fprintf(&b, "line %d of the log\n", i)
	}
	b.WriteString("FAIL\tgithub.com/x/y\t0.1s\nExit code 1\n")
	data := []byte(b.String())
	require.Greater(t, len(data), 4*describeWindow)
	ctx := Context{Tool: "Bash", Input: "go test ./...", Failed: true}
	assert.Equal(t, `$ go test ./... — exit 1: "--- FAIL: TestFirst (0.00s)" (40004 lines)`, DescribeIn(data, MediaText, ctx),
		"the exit status from the last line, the error line from the first window")
}

func TestDescribeDiff(t *testing.T) {
	git := "diff --git a/a.go b/a.go\nindex 1..2 100644\n--- a/a.go\n+++ b/a.go\n@@ -1,3 +1,3 @@\n-old\n+new\n+more\n ctx\n" +
		"diff --git a/b.go b/b.go\n--- a/b.go\n+++ b/b.go\n@@ -1 +1 @@\n-x\n+y\n"
	tests := []struct {
		name string
		ctx  Context
		data string
		want string
	}{
		{"git diff", Context{}, git, "diff: +3 -2 in 2 files: a.go, b.go"},
		{"one file", Context{}, "--- x.txt\t2024-01-01\n+++ x.txt\t2024-01-02\n@@ -1 +1 @@\n-a\n+b", "diff: +1 -1 in x.txt"},
		{"many files", Context{}, strings.Repeat("--- a/f\n+++ b/f\n+x\n", 5), "diff: +5 -0 in 5 files: f, f, f, …"},
		{"a deleted file", Context{}, "--- a/gone\n+++ /dev/null\n-x\n", "diff: +0 -1 in 1 file"},
		{"pi's details.diff: the path from the call", Context{Tool: "edit", Input: "src/a.ts", Diff: true},
			"   1 import x\n-  2 old\n+  2 new\n+  3 more\n", "diff: +2 -1 in src/a.ts"},
		{"pi's details.diff, no path", Context{Diff: true}, "-  2 old\n+  2 new\n", "diff: +1 -1 (2 lines)"},
		{"not a diff: no file header", Context{}, "-a\n+b\n", "-a (2 lines)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DescribeIn([]byte(tt.data), MediaText, tt.ctx)
			assert.Equal(t, tt.want, got)
			checkDescription(t, got)
		})
	}
}

func TestToolKind(t *testing.T) {
	for name, want := range map[string]Kind{
		"Read": KindRead, "read": KindRead, "read_file": KindRead, "mcp__github__get_file_contents": KindRead,
		"Bash": KindShell, "bash": KindShell, "exec": KindShell, "exec_command": KindShell, "local_shell": KindShell,
		"shell": KindShell, "run_terminal_cmd": KindShell, "Grep": KindText, "Task": KindText, "": KindText, "mcp__": KindText,
	} {
		assert.Equal(t, want, toolKind(name), name)
	}
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
		{[]byte("--- a/x\n+++ b/x\n" + strings.Repeat("+added line\n-removed\n", 20000) + "+no newline"), MediaText},
		{[]byte(strings.Repeat("     7→text\n", 20000) + "\nCommand exited with code 3"), MediaText},
		{[]byte(`{"output":"` + strings.Repeat(`x\n`, 40000) + `","metadata":{"exit_code":2}}`), MediaText},
	}
	contexts := []Context{{}, {Tool: "Read", Input: "a.md"}, {Tool: "bash", Input: "make", Failed: true}, {Tool: "exec_command"}, {Diff: true}}
	for i, in := range inputs {
		for _, ctx := range contexts {
			want := DescribeIn(in.data, in.media, ctx)
			for range 3 {
				d := NewDescriberIn(in.media, ctx)
				rest := in.data
				for len(rest) > 0 {
					n := min(len(rest), 1+rng.IntN(3*describeWindow))
					if rng.IntN(3) == 0 {
						n = min(len(rest), 1+rng.IntN(8))
					}
					_, _ = d.Write(rest[:n])
					rest = rest[n:]
				}
				assert.Equal(t, want, d.String(), "input %d, %+v", i, ctx)
			}
		}
	}
}

// checkDescription checks what every description must be.
func checkDescription(t *testing.T, s string) {
	t.Helper()
	assert.LessOrEqual(t, utf8.RuneCountInString(s), Max, "%q", s)
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
	f.Add([]byte("--- a/x\n+++ b/x\n-a\n+b"), MediaText, 1<<8)
	f.Add([]byte("Exit code 2\nerror: x"), MediaText, 2<<8|1)
	f.Fuzz(func(t *testing.T, data []byte, media string, chunk int) {
		// The bits above the piece size choose what the call was.
		ctx := []Context{{}, {Diff: true}, {Tool: "Bash", Input: "make\x1b[31m", Failed: true}, {Tool: "Read", Input: "a.md"}}[(chunk>>8)&3]
		want := DescribeIn(data, media, ctx)
		checkDescription(t, want)
		d := NewDescriberIn(media, ctx)
		step := 1 + (chunk&0xff)%17
		for i := 0; i < len(data); i += step {
			_, _ = d.Write(data[i:min(i+step, len(data))])
		}
		assert.Equal(t, want, d.String(), "fed in pieces of %d bytes", step)
	})
}

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
		if got := LooksLikeError([]byte(line)); got != want {
			t.Fatalf("LooksLikeError(%q) = %v, want %v", line, got, want)
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
		if got, want := LooksLikeError(line), errorRegexp(line); got != want {
			t.Fatalf("LooksLikeError(%q) = %v, the regular expressions say %v", line, got, want)
		}
	})
}

// BenchmarkDescribeText describes a 64 KiB log with a few error lines,
// the output of a failed command.
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
		DescribeIn(data, MediaText, Context{Tool: "bash", Input: "npm test", Failed: true})
	}
}

// BenchmarkSummaryJSON describes a 256 KiB JSON array of objects whose
// strings hold escapes (Python's \u00e9 among them): the structure comes
// from the first 64 KiB, the element count from every byte.
func BenchmarkSummaryJSON(b *testing.B) {
	var arr strings.Builder
	arr.WriteString("[")
	for i := 0; arr.Len() < 256<<10; i++ {
		if i > 0 {
			arr.WriteString(",")
		}
		fmt.Fprintf(&arr, `{"path":"src/caf\u00e9/file%d.go","line":%d,"meta":{"tags":["a","b"],"deep":{"x":[1,2,{"y":null}]}},"text":"a \"quoted\"\n\tline \ud83d\ude80 %d"}`, i, i, i)
	}
	arr.WriteString("]")
	data := []byte(arr.String())
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		DescribeIn(data, MediaJSON, Context{})
	}
}

// BenchmarkSummaryWrapped describes a command's 128 KiB output as Codex
// wraps it, {"output": ..., "metadata": {"exit_code": ...}}.
func BenchmarkSummaryWrapped(b *testing.B) {
	data := []byte(`{"output":"` + strings.Repeat(`ok  \tgithub.com/x/y/pkg\t0.012s \"caf\u00e9\"\n`, 128<<10/48) + `","metadata":{"exit_code":1,"duration_seconds":2.5}}`)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		DescribeIn(data, MediaText, Context{Tool: "shell", Input: "go test ./...", Failed: true})
	}
}

// countJSON is jsonCounter byte by byte, as it was before it passed over
// strings with the parser's scanner: elements, "\n" escapes of a
// top-level string and of the strings of a top-level container.
func countJSON(p []byte) (elems, newlines, nested int64) {
	inString, escape, pending, depth := false, false, false, 0
	for i, c := range p {
		if inString {
			switch {
			case escape:
				escape = false
				if c == 'n' && depth == 0 {
					newlines++
				} else if c == 'n' && depth == 1 {
					nested++
				}
			case c == '\\':
				escape = true
			case c == '"':
				inString = false
			}
			continue
		}
		if c == ' ' || c == '\t' || c == '\r' || c == '\n' {
			continue
		}
		if i == len(p)-len(bytes.TrimLeft(p, " \t\r\n")) && c != '{' && c != '[' && c != '"' {
			return 0, 0, 0
		}
		if depth == 1 && pending && c != ']' && c != '}' {
			elems++
			pending = false
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			pending = depth == 1
		case '}', ']':
			depth--
		case ',':
			pending = pending || depth == 1
		}
	}
	return elems, newlines, nested
}

// TestJSONCounterPieces: the counts of JSON texts dense with escapes,
// runs of backslashes and control characters in strings, written in
// pieces of random lengths, are those of going over them byte by byte.
func TestJSONCounterPieces(t *testing.T) {
	parts := []string{`"a\nb"`, `"\\"`, `"\\\\\n"`, `"x\"y\\n"`, `"` + strings.Repeat(`text é \n\t`, 30) + `"`, "\"\x01\n\"", `1`, `{"k":["\n",2]}`, `[]`, ` `}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 3000 {
		var b []byte
		open := []byte{'[', '{', '"'}[rng.IntN(3)]
		b = append(b, open)
		if open == '{' {
			b = append(b, `"k":`...)
		}
		for k := rng.IntN(20); k >= 0; k-- {
			if len(b) > 1 && open != '"' {
				b = append(b, ',')
			}
			p := parts[rng.IntN(len(parts))]
			if open == '"' {
				p = strings.Trim(p, `"`)
			}
			b = append(b, p...)
		}
		b = append(b, map[byte]byte{'[': ']', '{': '}', '"': '"'}[open])
		var j jsonCounter
		for rest := b; len(rest) > 0; {
			n := min(len(rest), 1+rng.IntN(40))
			j.write(rest[:n])
			rest = rest[n:]
		}
		elems, newlines, nested := countJSON(b)
		if j.elems != elems || j.newlines != newlines || j.nested != nested {
			t.Fatalf("%q: %d elements, %d and %d newlines; byte by byte %d, %d, %d", b, j.elems, j.newlines, j.nested, elems, newlines, nested)
		}
	}
}
