package show

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/transcript"
)

// TestLongLineFromSkeleton: a line the reader returns as Long is shown
// from its skeleton, the long string from its first bytes: the same first
// lines as the line held whole, then a note that it was cut; with --full,
// all of its start. Nothing of the string past its stub is read.
func TestLongLineFromSkeleton(t *testing.T) {
	var out strings.Builder
	for i := 0; out.Len() < 1<<20; i++ {
		out.WriteString("output line of a long run of a command ")
		out.WriteString(strings.Repeat("x", i%50))
		out.WriteString("\n")
	}
	quoted := transcript.AppendEncoded(nil, []byte(out.String()), transcript.StyleJS)
	input := `{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00Z","cwd":"/w"}` + "\n" +
		`{"type":"message","id":"r1","timestamp":"2025-01-01T00:00:01Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":` +
		string(quoted) + `}]}}` + "\n"

	for _, full := range []bool{false, true} {
		whole := render(t, []byte(input), Options{Format: "pi", Full: full})
		src := strings.NewReader(input)
		lines := transcript.NewReader(strings.NewReader(input))
		lines.Limit = 256 << 10
		var got bytes.Buffer
		longs := 0
		require.NoError(t, RenderLines(&got, lines, Options{Format: "pi", Full: full,
			Long: func(l transcript.Line) (*transcript.Skeleton, error) {
				longs++
				return transcript.BuildSkeleton(io.NewSectionReader(src, l.Offset, l.Len), LongOptions)
			}}))
		require.Equal(t, 1, longs, "the tool result's line is long")
		shown := got.String()
		cut := strings.Index(shown, "  … (cut: a line too long to hold; rehydrate or cat prints it whole)\n")
		require.Positive(t, cut, "%s", shown)
		start := shown[:cut]
		if full {
			// The string's start ends inside a line: that line is shown
			// as far as it goes.
			start = start[:strings.LastIndex(start[:len(start)-1], "\n")+1]
		}
		assert.True(t, strings.HasPrefix(whole, start), "the start is shown as when held whole:\n%s", shown)
		assert.Less(t, len(shown), 8<<10, "only the string's start is shown")
		if !full {
			assert.Equal(t, 5+2, strings.Count(shown, "\n")-1, "five lines, a header each, and the note:\n%s", shown)
		}
	}
}
