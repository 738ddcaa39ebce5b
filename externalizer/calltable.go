package externalizer

import (
	"strings"

	"github.com/transcript-tool/transcript-tool/internal/display"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// Limits of what the call table keeps, so that a hostile file cannot grow
// it without end: results follow their calls within a few lines, so the
// most recent calls are the ones kept.
const (
	maxCalls    = 1 << 12
	maxCallID   = 256
	maxCallName = 128
)

// callInfo is what a call's results are described with.
type callInfo struct {
	name, input string
}

// callTable maps the tool call ids of one file to the calls' names and
// main arguments, the maxCalls most recent of them.
type callTable struct {
	m    map[string]callInfo
	ring []string // ids in the order they were added, ring[next] the oldest once full
	next int
}

// add remembers call c.
func (t *callTable) add(c Call) {
	if c.ID == "" || len(c.ID) > maxCallID || strings.Contains(c.ID, transcript.StubMark) ||
		strings.Contains(c.Name, transcript.StubMark) {
		return
	}
	info := callInfo{name: display.Line(c.Name, maxCallName), input: c.MainArgument()}
	if t.m == nil {
		t.m = map[string]callInfo{}
	}
	if _, ok := t.m[c.ID]; ok {
		t.m[c.ID] = info // seen again: a long line read a second time, whole
		return
	}
	if len(t.ring) < maxCalls {
		t.ring = append(t.ring, c.ID)
	} else {
		delete(t.m, t.ring[t.next])
		t.ring[t.next] = c.ID
		t.next = (t.next + 1) % maxCalls
	}
	t.m[c.ID] = info
}

// fill gives site s the name and main argument of the call it answers,
// where the site does not name them itself.
func (t *callTable) fill(s *Site) {
	if s.ToolCallID == "" || (s.Tool != "" && s.Input != "") {
		return
	}
	c, ok := t.m[s.ToolCallID]
	if !ok {
		return
	}
	if s.Tool == "" {
		s.Tool = c.name
	}
	if s.Input == "" {
		s.Input = c.input
	}
}
