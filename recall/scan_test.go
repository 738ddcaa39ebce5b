package recall

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/store"
)

func scan(t *testing.T, format, text string) *Session {
	t.Helper()
	s, err := Scan(strings.NewReader(text), format, nil)
	require.NoError(t, err)
	return s
}

func TestScanEveryFormat(t *testing.T) {
	a, b, c := store.Sum([]byte("a")), store.Sum([]byte("b")), store.Sum([]byte("c"))
	for _, format := range formats {
		t.Run(format, func(t *testing.T) {
			l := lines{format: format}
			l.header("sess-1")
			l.user("first request", 5)
			l.call("read", "c1")
			l.result("c1", a, b)
			l.add("not JSON at all")
			l.add(`["an array line"]`)
			l.call("bash", "c2")
			l.call("read", "c3")
			l.result("c2", c)
			l.result("c3", a) // a is referenced again: it is now the most recent
			l.user("  second\nrequest  ", 17)
			s := scan(t, format, l.b.String())

			assert.Equal(t, format, s.Format)
			assert.Empty(t, s.ID, "the id comes from session.Open")
			assert.Equal(t, l.n-2, s.Entries, "lines that are not JSON objects are not entries")
			assert.Equal(t, []ToolCount{{"read", 2}, {"bash", 1}}, s.Tools)
			assert.Equal(t, 3, s.Calls.Len())
			for id, name := range map[string]string{"c1": "read", "c2": "bash", "c3": "read"} {
				c, _ := s.Calls.Get(id)
				assert.Equal(t, name, c.Name, id)
			}
			assert.Equal(t, "  second\nrequest  ", s.LastRequest)
			require.Len(t, s.Refs, 3, "one per distinct artifact")
			assert.Equal(t, []store.Digest{a, c, b}, []store.Digest{s.Refs[0].ID, s.Refs[1].ID, s.Refs[2].ID})
			assert.Equal(t, l.n-1, s.Refs[0].Line, "the line of the last reference")
			assert.Less(t, s.Refs[2].Line, s.Refs[1].Line)
			if format != "chat" {
				assert.Equal(t, time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), s.First)
				assert.Equal(t, time.Date(2025, 1, 1, 0, 0, 17, 0, time.UTC), s.Last)
			} else {
				assert.True(t, s.First.IsZero(), "chat messages carry no time")
			}
		})
	}
}

func TestScanRequests(t *testing.T) {
	tests := []struct {
		name, format, text, want string
	}{
		{"pi text blocks", "pi", `{"type":"message","message":{"role":"user","content":[{"type":"text","text":"one"},{"type":"image","data":"x"},{"type":"text","text":"two"}]}}`, "one\ntwo"},
		{"pi tool results are not requests", "pi", `{"type":"message","message":{"role":"user","content":"ask"}}` + "\n" + `{"type":"message","message":{"role":"toolResult","content":"out"}}`, "ask"},
		{"claude tool_result blocks are not requests", "claude-code",
			`{"type":"user","message":{"role":"user","content":"ask"}}` + "\n" +
				`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"out"}]}}`, "ask"},
		{"claude meta messages are not requests", "claude-code",
			`{"type":"user","message":{"role":"user","content":"ask"}}` + "\n" +
				`{"type":"user","isMeta":true,"message":{"role":"user","content":"caveat"}}`, "ask"},
		{"codex events win over items", "codex",
			`{"type":"event_msg","payload":{"type":"user_message","message":"from event"}}` + "\n" +
				`{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"from item"}]}}`, "from event"},
		{"codex items without events, environment skipped", "codex",
			`{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"do it"}]}}` + "\n" +
				`{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>x</environment_context>"}]}}`, "do it"},
		{"codex legacy items", "codex", `{"type":"message","role":"user","content":[{"type":"input_text","text":"legacy"}]}`, "legacy"},
		{"chat conversation", "chat", `{"id":"x","messages":[{"role":"user","content":"first"},{"role":"assistant","content":"ok"},{"role":"user","content":[{"type":"text","text":"last"}]}]}`, "last"},
		{"chat nested arrays", "chat", `{"messages":[[{"role":"user","content":"nested"}]]}`, "nested"},
		{"blank requests are skipped", "chat", `{"role":"user","content":"real"}` + "\n" + `{"role":"user","content":"  \n "}`, "real"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, scan(t, tt.format, tt.text+"\n").LastRequest)
		})
	}
}

func TestScanBounds(t *testing.T) {
	huge := strings.Repeat("日本語", maxRequest)
	s := scan(t, "chat", `{"role":"user","content":`+quote(huge)+`}`+"\n"+
		`{"role":"assistant","tool_calls":[{"id":"1","function":{"name":`+quote(strings.Repeat("é", 100))+`}}]}`)
	assert.LessOrEqual(t, len(s.LastRequest), maxRequest)
	assert.True(t, strings.HasPrefix(huge, s.LastRequest), "cut at a character boundary")
	require.Len(t, s.Tools, 1)
	assert.LessOrEqual(t, len(s.Tools[0].Name), maxToolName)
	assert.Equal(t, strings.Repeat("é", maxToolName/2), s.Tools[0].Name)

	var b strings.Builder
	for i := range maxTools + 10 {
		b.WriteString(`{"role":"assistant","tool_calls":[{"function":{"name":"t` + strconv.Itoa(i) + `"}}]}` + "\n")
	}
	s = scan(t, "chat", b.String())
	assert.Len(t, s.Tools, maxTools+1, "tool names past the bound count as other")
	assert.Equal(t, ToolCount{"other", 10}, s.Tools[0])
}

func TestScanIgnoresForgedMarkers(t *testing.T) {
	d := store.Sum([]byte("x"))
	good := `{"role":"tool","content":"x",` + marker("/content", d) + `}`
	tests := map[string]string{
		"not the last member":    `{"role":"tool",` + marker("/content", d) + `,"content":"x"}`,
		"another version":        strings.Replace(good, `"v":1`, `"v":2`, 1),
		"no sha256":              strings.Replace(good, strings.Repeat("ab", 32), "zz", 1),
		"not an id":              strings.Replace(good, d.String(), "../../etc/passwd", 1),
		"at names nothing":       strings.Replace(good, `"/content"`, `"/nowhere"`, 1),
		"marker in a string":     `{"role":"tool","content":` + quote(marker("/content", d)) + `}`,
		"marker in a sub-object": `{"role":"tool","content":"x","meta":{` + marker("/content", d) + `}}`,
	}
	require.Len(t, scan(t, "chat", good).Refs, 1, "the good marker is read")
	for name, line := range tests {
		t.Run(name, func(t *testing.T) {
			s := scan(t, "chat", line+"\n")
			assert.Empty(t, s.Refs)
			assert.Equal(t, 1, s.Entries)
		})
	}
}

func TestScanReadError(t *testing.T) {
	boom := errors.New("disk on fire")
	_, err := Scan(iotest.ErrReader(boom), "pi", nil)
	assert.ErrorIs(t, err, boom)
}
