package transcript

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readLines reads every line of r, copying each Text because the Reader
// reuses its buffer.
func readLines(t testing.TB, r *Reader) []Line {
	t.Helper()
	var lines []Line
	for {
		l, err := r.Next()
		if errors.Is(err, io.EOF) {
			return lines
		}
		require.NoError(t, err)
		l.Text = bytes.Clone(l.Text)
		lines = append(lines, l)
	}
}

// join writes Text and EOL of every line, which must give back the input.
func join(lines []Line) []byte {
	var b bytes.Buffer
	for _, l := range lines {
		b.Write(l.Text)
		b.Write(l.EOL)
	}
	return b.Bytes()
}

// checkLines asserts the invariants that hold for the lines of any input:
// numbers count from 1, offsets add up, EOL is one of the three forms, only
// the last line may lack a newline, and the lines join to the input.
func checkLines(t testing.TB, input []byte, lines []Line) {
	t.Helper()
	var off int64
	for i, l := range lines {
		assert.Equal(t, i+1, l.Num, "line %d: Num", i+1)
		assert.Equal(t, off, l.Offset, "line %d: Offset", i+1)
		assert.NotContains(t, string(l.Text), "\n", "line %d: Text holds a newline", i+1)
		switch string(l.EOL) {
		case "\n":
			assert.False(t, bytes.HasSuffix(l.Text, []byte("\r")), "line %d: CRLF split as Text ending in CR + LF", i+1)
		case "\r\n":
		case "":
			assert.Equal(t, len(lines)-1, i, "line %d without a newline is not the last", i+1)
			assert.NotEmpty(t, l.Text, "line %d: empty last line without newline", i+1)
		default:
			assert.Failf(t, "bad EOL", "line %d: EOL %q", i+1, l.EOL)
		}
		off += int64(len(l.Text) + len(l.EOL))
	}
	assert.Equal(t, int64(len(input)), off, "offsets do not add up to the input length")
	assert.True(t, bytes.Equal(input, join(lines)), "lines do not join to the input")
}

func TestReaderLines(t *testing.T) {
	type want struct{ text, eol string }
	bom := string(BOM)
	tests := []struct {
		name  string
		input string
		want  []want
	}{
		{"empty", "", nil},
		{"one LF line", "{}\n", []want{{"{}", "\n"}}},
		{"one CRLF line", "{}\r\n", []want{{"{}", "\r\n"}}},
		{"LF", "a\nbb\nccc\n", []want{{"a", "\n"}, {"bb", "\n"}, {"ccc", "\n"}}},
		{"CRLF", "a\r\nbb\r\n", []want{{"a", "\r\n"}, {"bb", "\r\n"}}},
		{"mixed", "a\r\nb\nc\r\nd", []want{{"a", "\r\n"}, {"b", "\n"}, {"c", "\r\n"}, {"d", ""}}},
		{"last line without newline", "{\"a\":1}\n{\"b\":", []want{{`{"a":1}`, "\n"}, {`{"b":`, ""}}},
		{"lone CR", "\r", []want{{"\r", ""}}},
		{"CRLF then lone CR", "\r\n\r", []want{{"", "\r\n"}, {"\r", ""}}},
		{"CR inside a line", "a\rb\n", []want{{"a\rb", "\n"}}},
		{"CR CR LF", "a\r\r\n", []want{{"a\r", "\r\n"}}},
		{"blank lines", "\n\n\r\n\n", []want{{"", "\n"}, {"", "\n"}, {"", "\r\n"}, {"", "\n"}}},
		{"blank line between", "{}\n\n{}\n", []want{{"{}", "\n"}, {"", "\n"}, {"{}", "\n"}}},
		{"BOM", bom + "{}\n{}\n", []want{{bom + "{}", "\n"}, {"{}", "\n"}}},
		{"BOM only", bom, []want{{bom, ""}}},
		{"non-JSON lines", "hello world\n\x00\xff\xfe\n{not json\n", []want{{"hello world", "\n"}, {"\x00\xff\xfe", "\n"}, {"{not json", "\n"}}},
		{"NUL tail", "{}\n\x00\x00\x00", []want{{"{}", "\n"}, {"\x00\x00\x00", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := readLines(t, NewReader(strings.NewReader(tt.input)))
			require.Len(t, lines, len(tt.want))
			for i, w := range tt.want {
				assert.Equal(t, w.text, string(lines[i].Text), "line %d: Text", i+1)
				assert.Equal(t, w.eol, string(lines[i].EOL), "line %d: EOL", i+1)
			}
			checkLines(t, []byte(tt.input), lines)
		})
	}
}

func TestReaderEOFIsSticky(t *testing.T) {
	r := NewReader(strings.NewReader("a"))
	_, err := r.Next()
	require.NoError(t, err)
	for range 3 {
		_, err = r.Next()
		assert.ErrorIs(t, err, io.EOF)
	}
}

func TestReaderLongLines(t *testing.T) {
	// Lines far over the 256 KiB buffer, of growing and shrinking lengths so
	// that a line outgrows the space the previous one left.
	longs := [][]byte{
		bytes.Repeat([]byte("0123456789abcdef"), 1<<20/16),
		bytes.Repeat([]byte("fedcba9876543210"), 3<<20/16),
		bytes.Repeat([]byte("\"\\x"), 2<<20/4),
	}
	eols := []string{"\r\n", "\n", ""} // the last line has no newline
	input := []byte("{}\n")
	for i, l := range longs {
		input = append(input, l...)
		input = append(input, eols[i]...)
	}

	readers := map[string]io.Reader{
		"bytes":       bytes.NewReader(input),
		"short reads": iotest.HalfReader(bytes.NewReader(input)),
		"small bufio": bufio.NewReaderSize(bytes.NewReader(input), 16),
	}
	for name, src := range readers {
		t.Run(name, func(t *testing.T) {
			lines := readLines(t, NewReader(src))
			require.Len(t, lines, 1+len(longs))
			off := int64(3)
			for i, want := range longs {
				l := lines[i+1]
				assert.True(t, bytes.Equal(want, l.Text), "line %d: long Text differs (len %d)", i+2, len(l.Text))
				assert.Equal(t, eols[i], string(l.EOL), "line %d: EOL", i+2)
				assert.Equal(t, off, l.Offset, "line %d: Offset", i+2)
				off += int64(len(want) + len(eols[i]))
			}
			checkLines(t, input, lines)
		})
	}
}

func TestReaderError(t *testing.T) {
	errBoom := errors.New("boom")
	r := NewReader(io.MultiReader(strings.NewReader("a\nb"), iotest.ErrReader(errBoom)))
	l, err := r.Next()
	require.NoError(t, err)
	assert.Equal(t, "a", string(l.Text))
	_, err = r.Next()
	assert.ErrorIs(t, err, errBoom)
}

func TestJSONStart(t *testing.T) {
	bom := string(BOM)
	tests := []struct {
		name string
		line Line
		want int
	}{
		{"BOM on line 1", Line{Num: 1, Text: []byte(bom + "{}")}, 3},
		{"BOM alone on line 1", Line{Num: 1, Text: []byte(bom)}, 3},
		{"no BOM", Line{Num: 1, Text: []byte("{}")}, 0},
		{"empty line", Line{Num: 1}, 0},
		{"BOM on line 2 is content", Line{Num: 2, Text: []byte(bom + "{}")}, 0},
		{"partial BOM", Line{Num: 1, Text: []byte("\xef\xbb{}")}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, JSONStart(tt.line))
		})
	}
}

func TestJSONStartThenParse(t *testing.T) {
	input := string(BOM) + " {\"a\":1}\r\n" + string(BOM) + "{}\n"
	lines := readLines(t, NewReader(strings.NewReader(input)))
	require.Len(t, lines, 2)

	v, err := Parse(lines[0].Text, JSONStart(lines[0]))
	require.NoError(t, err)
	assert.Equal(t, `{"a":1}`, string(v.Raw()))
	assert.Equal(t, 4, v.Start)

	_, err = Parse(lines[1].Text, JSONStart(lines[1]))
	var se *SyntaxError
	require.ErrorAs(t, err, &se, "a BOM after line 1 is not white space")
	assert.Equal(t, 0, se.Offset)
}

// randomInput builds inputs from the bytes that matter to line splitting.
func randomInput(rng *rand.Rand) []byte {
	pieces := []string{"\n", "\r", "\r\n", "\n\r", string(BOM), "{}", `{"a":"b"}`, "x", "\x00", "\xff", " ", "é"}
	n := rng.IntN(40)
	var b []byte
	for range n {
		b = append(b, pieces[rng.IntN(len(pieces))]...)
	}
	return b
}

func TestReaderRoundTripRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 5000 {
		input := randomInput(rng)
		var src io.Reader = bytes.NewReader(input)
		switch i % 3 {
		case 1:
			src = iotest.HalfReader(src)
		case 2:
			src = iotest.OneByteReader(src)
		}
		lines := readLines(t, NewReader(src))
		checkLines(t, input, lines)
		if t.Failed() {
			t.Fatalf("input %q", input)
		}
	}
}

func TestInputError(t *testing.T) {
	inner := &SyntaxError{Offset: 7, Msg: "invalid literal"}
	err := error(&InputError{Path: "s.jsonl", Line: 3, Offset: 120, Err: inner})
	assert.Equal(t, "s.jsonl:3: byte 120: invalid JSON at byte 7: invalid literal", err.Error())
	var se *SyntaxError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 7, se.Offset)

	wrapped := &InputError{Path: "s.jsonl", Line: 1, Err: ErrTooDeep}
	assert.ErrorIs(t, wrapped, ErrTooDeep)
}

// TestReaderRelease: Release gives back only the buffer NewReader took,
// never the caller's, may be called twice, and a Reader made after it
// reads its own input from the start.
func TestReaderRelease(t *testing.T) {
	own := bufio.NewReader(strings.NewReader("a\nb\n"))
	r := NewReader(own)
	l, err := r.Next()
	require.NoError(t, err)
	assert.Equal(t, "a", string(l.Text))
	r.Release()
	rest, err := own.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "b\n", rest, "the caller's buffer is still the caller's")

	for i := range 3 {
		r := NewReader(strings.NewReader(fmt.Sprintf("line %d\nnext\n", i)))
		l, err := r.Next()
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprintf("line %d", i), string(l.Text))
		r.Release()
		r.Release()
	}
}
