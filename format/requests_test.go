package format

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/transcript"
)

// TestRequests: where each format keeps its users' messages, and what is
// not one.
func TestRequests(t *testing.T) {
	for _, tt := range []struct {
		name, format, entry string
		want                []Request
	}{
		{"pi user", Pi, `{"type":"message","message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"image"},{"type":"text","text":"b"}]}}`, []Request{{Text: "a\nb"}}},
		{"pi assistant", Pi, `{"type":"message","message":{"role":"assistant","content":"no"}}`, nil},
		{"claude user", ClaudeCode, `{"type":"user","message":{"role":"user","content":"fix it"}}`, []Request{{Text: "fix it"}}},
		{"claude meta", ClaudeCode, `{"type":"user","isMeta":true,"message":{"role":"user","content":"caveat"}}`, nil},
		{"claude tool results only", ClaudeCode, `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"x"}]}}`, nil},
		{"codex event", Codex, `{"type":"event_msg","payload":{"type":"user_message","message":"run it"}}`, []Request{{Text: "run it"}}},
		{"codex item", Codex, `{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"run it"}]}}`, []Request{{Text: "run it", Fallback: true}}},
		{"codex legacy item", Codex, `{"type":"message","role":"user","content":[{"type":"input_text","text":"old"}]}`, []Request{{Text: "old", Fallback: true}}},
		{"codex environment", Codex, `{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>cwd</environment_context>"}]}}`, nil},
		{"codex instructions", Codex, `{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<user_instructions>be brief</user_instructions>"}]}}`, nil},
		{"chat nested", Chat, `{"role":"user","content":"one","messages":[{"role":"user","content":"two"},[{"role":"user","content":[{"type":"text","text":"three"}]}]]}`, []Request{{Text: "one"}, {Text: "two"}, {Text: "three"}}},
		{"chat blank", Chat, `{"role":"user","content":" \n "}`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, v := entryOf(t, tt.format, tt.entry)
			var got []Request
			f.Requests(v, func(r Request) { got = append(got, r) })
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestRelayedCalls: the calls an entry passes on from elsewhere are told
// from those it makes.
func TestRelayedCalls(t *testing.T) {
	for _, tt := range []struct {
		name, format, entry string
		want                []bool
	}{
		{"claude assistant", ClaudeCode, `{"type":"assistant","message":{"content":[{"type":"tool_use","id":"a","name":"Bash"}]}}`, []bool{false}},
		{"claude subagent", ClaudeCode, `{"type":"progress","data":{"type":"agent_progress","message":{"message":{"content":[{"type":"tool_use","id":"b","name":"Read"}]}}}}`, []bool{true}},
		{"codex call", Codex, `{"type":"response_item","payload":{"type":"function_call","call_id":"c","name":"shell"}}`, []bool{false}},
		{"codex compacted", Codex, `{"type":"compacted","payload":{"replacement_history":[{"type":"function_call","call_id":"c","name":"shell"},{"type":"local_shell_call","call_id":"d"}]}}`, []bool{true, true}},
		{"chat function_call", Chat, `{"role":"assistant","function_call":{"name":"f","arguments":"{}"}}`, []bool{false}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, v := entryOf(t, tt.format, tt.entry)
			var got []bool
			f.Calls(v, func(c Call) { got = append(got, c.Relayed) })
			assert.Equal(t, tt.want, got)
		})
	}
}

// entryOf returns the format called name and entry parsed.
func entryOf(t *testing.T, name, entry string) (Format, transcript.Value) {
	t.Helper()
	f, ok := Lookup(name)
	require.True(t, ok, name)
	v, err := transcript.Parse([]byte(entry), 0)
	require.NoError(t, err)
	return f, v
}
