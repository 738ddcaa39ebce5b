package inspect

import (
	"github.com/transcript-tool/transcript-tool/externalizer"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// maxCalls bounds the tool calls remembered per file, so that a hostile
// file cannot grow the map without end; results of calls past it count
// for UnknownTool.
const maxCalls = 1 << 16

// toolNames names the tools whose output the payload sites of one file
// hold: by the site itself (pi's toolName) or by the call it answers,
// seen earlier in the file (Claude Code's tool_use_id, Codex's call_id,
// a chat message's tool_call_id).
type toolNames struct {
	calls map[string]string // tool call id -> tool name
}

func newToolNames() *toolNames { return &toolNames{calls: map[string]string{}} }

// see remembers the tool calls of an entry: tool_use blocks of Claude Code
// (in progress lines too), toolCall blocks of pi, Codex function, custom
// tool and shell calls (in a rollout's payload or bare), and the
// tool_calls of chat messages.
func (n *toolNames) see(root transcript.Value) {
	remember := func(id transcript.Value, name string) {
		if len(n.calls) < maxCalls && id.Kind() == transcript.String {
			n.calls[id.Text()] = name
		}
	}
	for _, at := range []externalizer.Pointer{{"message", "content"}, {"data", "message", "message", "content"}} {
		content, _ := at.Resolve(root)
		content.Elems(func(_ int, b transcript.Value) bool {
			if t, _ := b.Get("type"); t.IsString("tool_use") || t.IsString("toolCall") {
				id, _ := b.Get("id")
				name, _ := b.Get("name")
				remember(id, name.Text())
			}
			return true
		})
	}
	payload, _ := root.Get("payload")
	for _, item := range []transcript.Value{root, payload} {
		t, _ := item.Get("type")
		id, _ := item.Get("call_id")
		switch {
		case t.IsString("function_call"), t.IsString("custom_tool_call"):
			name, _ := item.Get("name")
			remember(id, name.Text())
		case t.IsString("local_shell_call"):
			remember(id, "local_shell")
		}
	}
	chat := func(_ int, msg transcript.Value) bool {
		calls, _ := msg.Get("tool_calls")
		calls.Elems(func(_ int, c transcript.Value) bool {
			id, _ := c.Get("id")
			name, _ := externalizer.Pointer{"function", "name"}.Resolve(c)
			remember(id, name.Text())
			return true
		})
		return true
	}
	chat(0, root)
	msgs, _ := root.Get("messages")
	msgs.Elems(chat)
}

// of returns the tool a site is the output of, UnknownTool for the answer
// to a call not seen, or "" when the site names no tool and no call.
func (n *toolNames) of(s externalizer.Site) string {
	name := s.Tool
	if name == "" && s.ToolCallID != "" {
		if name = n.calls[s.ToolCallID]; name == "" {
			name = UnknownTool
		}
	}
	return printable(name)
}

// line returns the distinct tools whose output the sites of one line
// hold, in order.
func (n *toolNames) line(sites []externalizer.Site) []string {
	var tools []string
next:
	for _, s := range sites {
		name := n.of(s)
		if name == "" {
			continue
		}
		for _, t := range tools {
			if t == name {
				continue next
			}
		}
		tools = append(tools, name)
	}
	return tools
}

// site returns the tool of a payload site: its own, or else the first
// tool of its line, lineTools (Claude Code's toolUseResult belongs to the
// tool_result beside it), or "".
func (n *toolNames) site(s externalizer.Site, lineTools []string) string {
	if name := n.of(s); name != "" || len(lineTools) == 0 {
		return name
	}
	return lineTools[0]
}
