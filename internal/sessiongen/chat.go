package sessiongen

// Chat-completions style logs: one message per line ({"role":"tool",
// "tool_call_id","name","content"}), or one conversation per line
// ({"id","messages":[...]}) as datasets and request logs keep them. The
// content of a tool message is a string or a list of text parts.

// GenerateChat returns a chat log: one message per line, written as
// Python's json.dumps does, or with conversations set one conversation per
// line, written as JSON.stringify does. The first tool messages are over
// 4096 bytes in every shape; the rest are drawn at random.
func GenerateChat(o Options, conversations bool) []byte {
	c := &chatGen{gen: newGen(o)}
	if !conversations {
		c.w = python
		for _, m := range c.conversation(true) {
			c.put(m.(obj))
		}
		for c.n < o.Entries {
			for _, m := range c.conversation(false)[1:] {
				c.put(m.(obj))
			}
		}
		return c.buf.Bytes()
	}
	c.put(obj{{"id", "conv_" + c.alnum(16)}, {"model", "gpt-4o-2024-08-06"}, {"created", 1717171717}, {"messages", c.conversation(true)}})
	for c.n < o.Entries {
		c.put(obj{{"id", "conv_" + c.alnum(16)}, {"model", "gpt-4o-2024-08-06"}, {"created", 1717171717 + c.n}, {"messages", c.conversation(false)}})
	}
	return c.buf.Bytes()
}

type chatGen struct{ *gen }

func (c *chatGen) put(l obj) {
	c.write(l)
	c.n++
}

// chatContents are the shapes of a tool message's content.
const (
	chatString = iota
	chatParts  // a list of text parts
	chatJSON   // a tool's JSON answer, inside a string
	chatLegacy // a role:"function" message, as before tool calls
	numChatContents
)

// conversation returns the messages of one exchange: system prompt, user
// request, tool calls and their results, answer. first calls a tool of
// every shape, with large results.
func (c *chatGen) conversation(first bool) arr {
	msgs := arr{
		obj{{"role", "system"}, {"content", "You are a helpful coding assistant. Use the tools to inspect the repository."}},
		obj{{"role", "user"}, {"content", c.prose(c.r.IntN(300) + 10)}},
	}
	var shapes []int
	if first {
		for s := range numChatContents {
			shapes = append(shapes, s)
		}
	} else {
		for range 1 + c.r.IntN(3) {
			shapes = append(shapes, c.r.IntN(numChatContents))
		}
	}
	var calls arr
	var results arr
	for _, shape := range shapes {
		id := "call_" + c.alnum(24)
		size := c.size()
		if first {
			size = max(size, 4400+c.r.IntN(2000))
		}
		name, args := "read_file", string(python.line(obj{{"path", c.path()}}))
		var content any = c.code(size)
		switch shape {
		case chatParts:
			name, args = "run_command", string(python.line(obj{{"command", c.command()}}))
			content = arr{obj{{"type", "text"}, {"text", c.log(size)}}}
		case chatJSON:
			name, args = "search", string(python.line(obj{{"query", c.word()}}))
			content = string(js.line(obj{{"results", arr{c.prose(size / 2), c.prose(size / 2)}}, {"total", 2}}))
		case chatLegacy:
			msgs = append(msgs, obj{{"role", "assistant"}, {"content", nil}, {"function_call", obj{{"name", name}, {"arguments", args}}}},
				obj{{"role", "function"}, {"name", name}, {"content", content}})
			continue
		}
		calls = append(calls, obj{{"id", id}, {"type", "function"}, {"function", obj{{"name", name}, {"arguments", args}}}})
		results = append(results, obj{{"role", "tool"}, {"tool_call_id", id}, {"name", name}, {"content", content}})
	}
	if len(calls) > 0 {
		msgs = append(msgs, obj{{"role", "assistant"}, {"content", nil}, {"tool_calls", calls}})
		msgs = append(msgs, results...)
	}
	return append(msgs, obj{{"role", "assistant"}, {"content", c.prose(c.r.IntN(600) + 20)}})
}
