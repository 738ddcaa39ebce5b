package inspect

import (
	"bytes"
	"image"
	"image/png"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/format"
	"github.com/transcript-tool/transcript-tool/transcript"
)

func TestEntryType(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{`{"type":"session","id":"x"}`, "session"},
		{`{"type":"message","message":{"role":"toolResult"}}`, "message/toolResult"},
		{`{"type":"user","message":{"role":"user","content":"hi"}}`, "user"},
		{`{"type":"progress","data":{"type":"agent_progress"}}`, "progress/agent_progress"},
		{`{"type":"response_item","payload":{"type":"function_call_output"}}`, "response_item/function_call_output"},
		{`{"type":"session_meta","payload":{"id":"x"}}`, "session_meta"},
		{`{"role":"tool","content":"x"}`, "tool"},
		{`{"messages":[]}`, "messages"},
		{`{"id":"x","timestamp":"t","instructions":""}`, Untyped},
		{`{"type":7}`, Untyped},
		{`{"type":"a\nb"}`, "a b"},
		{`[1,2]`, NotObject},
		{`{"torn":`, NotJSON},
		{`  `, BlankLine},
		{``, BlankLine},
	} {
		text := []byte(tc.line)
		root, err := transcript.Parse(text, 0)
		assert.Equal(t, tc.want, entryType(text, root, err), tc.line)
	}
}

func TestPrintable(t *testing.T) {
	assert.Equal(t, "Read", printable("Read"))
	assert.Equal(t, "a bc", printable("a\nb\x1b[31mc"), "line breaks become spaces, terminal escapes go")
	assert.Equal(t, "bad\uFFFD", printable("bad\xff"))
	long := printable(strings.Repeat("é", 100))
	assert.Equal(t, maxName, len([]rune(long)))
	assert.True(t, strings.HasSuffix(long, "…"))
}

func TestTop(t *testing.T) {
	var list []Payload
	for i, size := range []int64{5, 9, 5, 1, 9, 7} {
		list = top(list, Payload{Line: i + 1, Size: size}, 4)
	}
	var got []string
	for _, p := range list {
		got = append(got, strconv.FormatInt(p.Size, 10)+"@"+strconv.Itoa(p.Line))
	}
	assert.Equal(t, []string{"9@2", "9@5", "7@6", "5@1"}, got, "largest first, the first found first")
	assert.Empty(t, top(nil, Payload{Size: 1}, 0))
}

func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, image.NewGray(image.Rect(0, 0, w, h))))
	return buf.Bytes()
}

func TestImageTokens(t *testing.T) {
	assert.Equal(t, int64(4), imageTokens(bytes.NewReader(pngOf(t, 60, 50))), "3000 pixels / 750")
	assert.Equal(t, int64(2), imageTokens(bytes.NewReader(pngOf(t, 1, 751))), "rounded up")
	assert.Equal(t, int64(1046), imageTokens(bytes.NewReader(pngOf(t, 3136, 1000))), "scaled to 1568 x 500 first: 784000 / 750, rounded up")
	assert.Equal(t, int64(maxImageTokens), imageTokens(bytes.NewReader(pngOf(t, 1500, 1500))), "at most")
	assert.Equal(t, int64(maxImageTokens), imageTokens(strings.NewReader("RIFF....WEBPVP8 ")), "an unreadable size counts as the most")
}

// Distinct names past maxGroups are counted together, so a hostile file
// cannot make the report grow without end.
func TestTallyBounded(t *testing.T) {
	ta := newTally()
	for i := 0; i < maxGroups+50; i++ {
		ta.get("pi", strconv.Itoa(i)).add(Counts{Lines: 1})
	}
	assert.Len(t, ta.m, maxGroups+1)
	assert.Equal(t, int64(50), ta.get("pi", OtherGroup).Lines)
	assert.Equal(t, int64(1), ta.get("pi", "7").Lines, "names seen before still count for themselves")
}

// TestToolNamesBounded: past the call table's bound the oldest calls are
// forgotten, and their results counted as of an unknown tool.
func TestToolNamesBounded(t *testing.T) {
	n := newToolNames()
	var b strings.Builder
	b.WriteString(`{"type":"assistant","message":{"content":[`)
	for i := 0; i < format.MaxCalls+10; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"type":"tool_use","id":"t` + strconv.Itoa(i) + `","name":"Bash"}`)
	}
	b.WriteString(`]}}`)
	root, err := transcript.Parse([]byte(b.String()), 0)
	require.NoError(t, err)
	claude, ok := format.Lookup("claude-code")
	require.True(t, ok)
	n.see(claude, root)
	assert.Equal(t, format.MaxCalls, n.calls.Len())
	assert.Equal(t, UnknownTool, n.of(format.Site{ToolCallID: "t0"}))
	assert.Equal(t, "Bash", n.of(format.Site{ToolCallID: "t" + strconv.Itoa(format.MaxCalls+5)}))
	assert.Equal(t, "", n.of(format.Site{}))
}

// payloads leaves out the sites migrate would not move and those the
// entry's marker records as placeholders.
func TestPayloads(t *testing.T) {
	chat, ok := format.Lookup("chat")
	require.True(t, ok)
	big := strings.Repeat("x", 300)
	for _, tc := range []struct {
		line string
		want []string
	}{
		{`{"role":"tool","content":"` + big + `"}`, []string{"/content"}},
		{`{"role":"tool","content":` + strings.Repeat("1", 300) + `}`, nil},
		{`{"messages":[{"role":"tool","content":"` + big + `"},{"role":"tool","content":"` + big + `"}],"transcriptTool":{"v":1,"sha256":"` + strings.Repeat("0", 64) + `","edits":[{"at":"/messages/1/content","parts":[{"lit":"x"}]},{"at":"/messages/0","added":["x"]}]}}`, []string{"/messages/0/content"}},
	} {
		root, err := transcript.Parse([]byte(tc.line), 0)
		require.NoError(t, err)
		var got []string
		for _, s := range payloads(chat, root, 200, nil) {
			got = append(got, s.Path.String())
		}
		assert.Equal(t, tc.want, got, tc.line)
	}
}

func TestOneLine(t *testing.T) {
	assert.Equal(t, "/toolUseResult/a b", oneLine("/toolUseResult/a\nb"))
	assert.Equal(t, strings.Repeat("x", 100), oneLine(strings.Repeat("x", 100)), "not cut")
}
