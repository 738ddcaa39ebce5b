package format

import (
	"strings"

	"github.com/transcript-tool/transcript-tool/transcript"
)

// Bounds of a CallTable, so that a hostile transcript cannot grow one
// without end: results follow their calls within a few lines, so the
// most recent calls are the ones kept.
const (
	// MaxCalls is the most calls a table holds.
	MaxCalls = 1 << 14
	// maxCallBytes bounds the bytes of the ids, names and arguments a
	// table holds: some 250 bytes a call in real sessions, so the count
	// is what bounds them, and at most this much for a hostile one.
	maxCallBytes = 4 << 20
	maxCallID    = 256
	maxCallName  = 512 // bytes of a tool name kept, cut between code points
)

// CalledTool is what a table keeps of a call: the tool's name, cut to a
// bound, and the call's main argument (Call.MainArgument) where the
// caller asked for it.
type CalledTool struct {
	Name, Input string
}

// CallTable maps the tool call ids of one transcript to the tools called,
// the most recent MaxCalls of them: the names that results naming only
// their call (Claude Code's tool_use_id, Codex's call_id, a chat tool
// message's tool_call_id) are given, by every reader alike. The zero value
// is an empty table.
type CallTable struct {
	m     map[string]CalledTool
	queue []string // ids in the order added, from queue[head], the oldest
	head  int
	bytes int
}

// Add remembers that call id called tool name with main argument input.
// An id seen again takes the new name and input. An empty id, an id
// longer than 256 bytes and an id or name holding a skeleton's stub
// (transcript.StubMark) are not remembered: none can be a call's.
func (t *CallTable) Add(id, name, input string) {
	if id == "" || len(id) > maxCallID || strings.Contains(id, transcript.StubMark) ||
		strings.Contains(name, transcript.StubMark) {
		return
	}
	if len(name) > maxCallName {
		name = name[:transcript.RuneCut([]byte(name), maxCallName)]
	}
	c := CalledTool{Name: name, Input: input}
	if t.m == nil {
		t.m = map[string]CalledTool{}
	}
	if old, ok := t.m[id]; ok {
		t.bytes += len(c.Name) + len(c.Input) - len(old.Name) - len(old.Input)
		t.m[id] = c
		return
	}
	size := len(id) + len(c.Name) + len(c.Input)
	for len(t.m) > 0 && (len(t.m) >= MaxCalls || t.bytes+size > maxCallBytes) {
		t.evict()
	}
	t.m[id] = c
	t.bytes += size
	t.queue = append(t.queue, id)
}

// evict forgets the oldest call.
func (t *CallTable) evict() {
	id := t.queue[t.head]
	c := t.m[id]
	t.bytes -= len(id) + len(c.Name) + len(c.Input)
	delete(t.m, id)
	t.queue[t.head] = ""
	t.head++
	if t.head*2 >= len(t.queue) {
		// Half of the queue is forgotten: move the rest down, so that
		// it stays within twice the calls held.
		n := copy(t.queue, t.queue[t.head:])
		clear(t.queue[n:])
		t.queue, t.head = t.queue[:n], 0
	}
}

// Get returns the tool call id called, if the table holds it.
func (t *CallTable) Get(id string) (CalledTool, bool) {
	c, ok := t.m[id]
	return c, ok
}

// Has reports whether the table holds call id.
func (t *CallTable) Has(id string) bool {
	_, ok := t.m[id]
	return ok
}

// Len returns the number of calls the table holds.
func (t *CallTable) Len() int { return len(t.m) }
