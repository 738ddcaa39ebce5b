package show

import (
	"github.com/transcript-tool/transcript-tool/internal/display"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// chat shows chat-completions style transcripts: one message per line, or
// lines holding a conversation's "messages" array, each message shown in
// turn.
type chat struct{}

func (chat) entry(e *entry) bool {
	ts := get(e.root, "timestamp")
	for _, k := range []string{"created_at", "created"} {
		if ts.Kind() == transcript.Invalid {
			ts = get(e.root, k)
		}
	}
	if _, ok := e.root.Get("role"); ok {
		e.chatMessage(ts, e.root, str(e.root, "model", 60))
		return true
	}
	msgs, ok := e.root.Get("messages")
	if !ok || msgs.Kind() != transcript.Array {
		return false
	}
	n := 0
	msgs.Elems(func(int, transcript.Value) bool { n++; return true })
	model := str(e.root, "model", 60)
	e.header(ts, "conversation", meta, "", str(e.root, "id", 80), model, display.Plural(n, "message"))
	msgs.Elems(func(_ int, m transcript.Value) bool {
		e.chatMessage(transcript.Value{}, m, model)
		return true
	})
	return true
}

// chatMessage shows one message by its role.
func (e *entry) chatMessage(ts, msg transcript.Value, model string) {
	role := str(msg, "role", 40)
	content := get(msg, "content")
	switch role {
	case "user":
		e.header(ts, "user", user, "")
		e.content(content, false)
	case "assistant":
		e.header(ts, "assistant", agent, "", model)
		e.content(content, false)
		get(msg, "tool_calls").Elems(func(_ int, c transcript.Value) bool {
			fn := get(c, "function")
			e.call(get(fn, "name"), get(fn, "arguments"))
			return true
		})
		if fn, ok := msg.Get("function_call"); ok {
			e.call(get(fn, "name"), get(fn, "arguments"))
		}
	case "tool", "function":
		name := str(msg, "name", 60)
		if name == "" {
			name = flatString(e.toolOf(get(msg, "tool_call_id").Text()), 60)
		}
		e.header(ts, "tool result", result, "", name)
		e.content(content, true)
	default: // system and developer instructions, and roles to come
		if role == "" {
			role = "message"
		}
		e.header(ts, role, meta, "")
		e.content(content, true)
	}
}
