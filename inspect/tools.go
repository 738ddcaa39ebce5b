package inspect

import (
	"github.com/transcript-tool/transcript-tool/format"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// toolNames names the tools whose output the payload sites of one file
// hold: by the site itself (pi's toolName) or by the call it answers,
// seen earlier in the file (Claude Code's tool_use_id, Codex's call_id,
// a chat message's tool_call_id).
type toolNames struct {
	calls format.CallTable
}

func newToolNames() *toolNames { return &toolNames{} }

// see remembers the tool calls of an entry, where format f says they
// are.
func (n *toolNames) see(f format.Format, root transcript.Value) {
	f.Calls(root, func(c format.Call) { n.calls.Add(c.ID, c.Name, "") })
}

// of returns the tool a site is the output of, UnknownTool for the answer
// to a call not seen, or "" when the site names no tool and no call.
func (n *toolNames) of(s format.Site) string {
	name := s.Tool
	if name == "" && s.ToolCallID != "" {
		if c, _ := n.calls.Get(s.ToolCallID); c.Name != "" {
			name = c.Name
		} else {
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
