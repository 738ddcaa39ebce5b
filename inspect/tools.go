package inspect

import (
	"github.com/transcript-tool/transcript-tool/format"
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

// see remembers the tool calls of an entry, where format f says they
// are.
func (n *toolNames) see(f format.Format, root transcript.Value) {
	f.Calls(root, func(c format.Call) {
		if len(n.calls) < maxCalls && c.ID != "" {
			n.calls[c.ID] = c.Name
		}
	})
}

// of returns the tool a site is the output of, UnknownTool for the answer
// to a call not seen, or "" when the site names no tool and no call.
func (n *toolNames) of(s format.Site) string {
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
func (n *toolNames) line(sites []format.Site) []string {
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
func (n *toolNames) site(s format.Site, lineTools []string) string {
	if name := n.of(s); name != "" || len(lineTools) == 0 {
		return name
	}
	return lineTools[0]
}
