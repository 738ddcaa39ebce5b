package format

import (
	"github.com/transcript-tool/transcript-tool/transcript"
)

// chat is any JSONL of chat-completions style messages: one message per
// line ({"role":"tool","content":...}), or lines holding a "messages"
// array. The content of role:"tool" messages is the payload.
type chat struct{}

func (chat) Name() string { return Chat }

func (chat) Detect(entry transcript.Value) bool {
	if role, ok := entry.Get("role"); ok {
		return role.IsString("system") || role.IsString("user") || role.IsString("assistant") ||
			role.IsString("tool") || role.IsString("developer") || role.IsString("function")
	}
	msgs, ok := entry.Get("messages")
	return ok && msgs.Kind() == transcript.Array
}

// Knows takes every line Detect takes: a message of a known role, or a
// line holding messages.
func (c chat) Knows(entry transcript.Value) bool { return c.Detect(entry) }

func (chat) Session(entry transcript.Value) string {
	for _, k := range []string{"session_id", "sessionId", "conversation_id", "id"} {
		if v, ok := entry.Get(k); ok && v.Kind() == transcript.String {
			return v.Text()
		}
	}
	return ""
}

func (chat) Sites(entry transcript.Value, threshold int, dst []Site) []Site {
	dst = chatToolContent(entry, nil, threshold, dst)
	if msgs, ok := entry.Get("messages"); ok {
		msgs.Elems(func(i int, m transcript.Value) bool {
			dst = chatToolContent(m, Pointer{"messages"}.Index(i), threshold, dst)
			return true
		})
	}
	return dst
}

// chatToolContent finds the content of a tool message at path at.
func chatToolContent(msg transcript.Value, at Pointer, threshold int, dst []Site) []Site {
	role, _ := msg.Get("role")
	if !role.IsString("tool") && !role.IsString("function") {
		return dst
	}
	call, _ := msg.Get("tool_call_id")
	name, _ := msg.Get("name")
	return memberSites(msg, "content", threshold, Site{Path: at.Key("content"), Shape: ShapeToolResult,
		ToolCallID: call.Text(), Tool: name.Text()}, dst)
}

// Calls finds the tool_calls of messages, and the function_call of the
// older function calling, which has no id.
func (chat) Calls(entry transcript.Value, fn func(Call)) {
	chatMessages(entry, func(msg transcript.Value) {
		tc, _ := msg.Get("tool_calls")
		tc.Elems(func(_ int, c transcript.Value) bool {
			id, _ := c.Get("id")
			name, _ := Pointer{"function", "name"}.Resolve(c)
			args, _ := Pointer{"function", "arguments"}.Resolve(c)
			fn(Call{ID: id.Text(), Name: name.Text(), Input: args})
			return true
		})
		if fc, ok := msg.Get("function_call"); ok {
			name, _ := fc.Get("name")
			args, _ := fc.Get("arguments")
			fn(Call{Name: name.Text(), Input: args})
		}
	})
}

// Requests finds the text of user messages.
func (chat) Requests(entry transcript.Value, fn func(Request)) {
	chatMessages(entry, func(msg transcript.Value) {
		if role, _ := msg.Get("role"); role.IsString("user") {
			content, _ := msg.Get("content")
			request(texts(content, "text"), false, fn)
		}
	})
}

// chatMessages calls fn for the messages of entry: the entry itself, then
// those of its "messages" member, an object or an array, possibly of
// arrays.
func chatMessages(entry transcript.Value, fn func(msg transcript.Value)) {
	fn(entry)
	msgs, _ := entry.Get("messages")
	var walk func(v transcript.Value, depth int)
	walk = func(v transcript.Value, depth int) {
		switch v.Kind() {
		case transcript.Object:
			fn(v)
		case transcript.Array:
			if depth < 2 {
				v.Elems(func(_ int, e transcript.Value) bool {
					walk(e, depth+1)
					return true
				})
			}
		}
	}
	walk(msgs, 0)
}
