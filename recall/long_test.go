package recall

import (
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/transcript"
)

// TestScanLongLines: a line the reader returns as Long is scanned from
// its skeleton: its entry counts, its tool calls are named, and a user
// request cut to its start is kept without the stub's padding.
func TestScanLongLines(t *testing.T) {
	request := "please look at this log\n" + strings.Repeat("log line of the pasted build output\n", 30000)
	input := `{"role":"user","content":` + string(transcript.AppendEncoded(nil, []byte(request), transcript.StyleJS)) + "}\n" +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"grep","arguments":"{}"}}]}` + "\n"
	src := strings.NewReader(input)
	tr := transcript.NewReader(strings.NewReader(input))
	tr.Limit = 64 << 10
	longs := 0
	s, err := ScanLines(tr, "chat", nil, func(l transcript.Line) (*transcript.Skeleton, error) {
		longs++
		return transcript.BuildSkeleton(io.NewSectionReader(src, l.Offset, l.Len), transcript.SkeletonOptions{Long: 64 << 10, StubLen: 4 << 10, Max: 1 << 20})
	})
	require.NoError(t, err)
	assert.Equal(t, 1, longs)
	assert.Equal(t, 2, s.Entries)
	assert.Equal(t, []ToolCount{{"grep", 1}}, s.Tools)
	assert.True(t, strings.HasPrefix(s.LastRequest, "please look at this log\nlog line of"), s.LastRequest[:40])
	assert.True(t, strings.HasSuffix(s.LastRequest, "…"), "the request says it was cut")
	assert.NotContains(t, s.LastRequest, transcript.StubMark)
	assert.NotContains(t, s.LastRequest, "....")
}
