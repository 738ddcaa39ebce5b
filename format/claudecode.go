package format

import (
	"github.com/transcript-tool/transcript-tool/transcript"
)

// claudeCode is Claude Code's transcript format (~/.claude/projects/...):
// user, assistant, progress and system entries carrying a sessionId, plus
// summary, file-history-snapshot and queue-operation lines, and since
// 2.1.3xx the attachment, api-request*, tools-used, last-prompt,
// cost-state and atis-latch lines. Tool results sit twice on a user line:
// as tool_result blocks in message.content and as the tool's structured
// toolUseResult; an api-request-blob line may hold them a third time, in
// the request message it records by hash.
type claudeCode struct{}

func (claudeCode) Name() string { return ClaudeCode }

func (claudeCode) Detect(entry transcript.Value) bool {
	t, _ := entry.Get("type")
	switch {
	case t.IsString("summary"), t.IsString("file-history-snapshot"), t.IsString("queue-operation"), t.IsString("teleported-from"):
		// Names of Claude Code's alone; a session teleported from the
		// web may hold nothing but its teleported-from line.
		return true
	case t.Kind() != transcript.String || t.Len() > 64:
		return false
	}
	if !claudeTypes[t.Text()] {
		return false
	}
	_, hasSession := entry.Get("sessionId")
	_, hasParent := entry.Get("parentUuid")
	return hasSession || hasParent
}

// claudeTypes are the types of Claude Code lines that carry a sessionId
// or a parentUuid: names too plain to tell the format without one.
var claudeTypes = map[string]bool{
	"user": true, "assistant": true, "progress": true, "system": true, "attachment": true,
	"api-request": true, "api-request-shape": true, "api-request-blob": true, "tools-used": true,
	"last-prompt": true, "cost-state": true, "atis-latch": true,
	"custom-title": true,
}

// claudeKnown are the types of the lines of Claude Code 2.1.332: those
// its transcript writer routes (teleported-from, of earlier versions,
// besides).
var claudeKnown = map[string]bool{
	"user": true, "assistant": true, "attachment": true, "system": true, "progress": true,
	"summary": true, "custom-title": true, "ended-by-model": true, "continued-in": true, "ai-title": true,
	"last-prompt": true, "tag": true, "relocated": true, "agent-name": true, "agent-color": true,
	"agent-setting": true, "pr-link": true, "frame-link": true, "artifact-comment-monitor": true,
	"artifact-autoreact-ledger": true, "bridge-session": true, "history-suppression": true,
	"file-history-snapshot": true, "file-history-delta": true, "attribution-snapshot": true, "mode": true,
	"permission-mode": true, "isolation-latch": true, "session-owner": true, "dev-mods": true,
	"memory-mode": true, "atis-latch": true, "tools-used": true, "data-flow-records": true,
	"data-flow-incomplete": true, "derived-from": true, "worktree-state": true, "cost-state": true,
	"queue-operation": true, "content-replacement": true, "api-request-shape": true,
	"api-request-blob": true, "api-request": true, "api-request-resumed": true, "fork-context-ref": true,
	"observer-ref": true, "resume-head-vouch": true, "teleported-from": true,
}

func (claudeCode) Knows(entry transcript.Value) bool { return knownType(entry, "type", claudeKnown) }

func (claudeCode) Session(entry transcript.Value) string {
	id, _ := entry.Get("sessionId")
	return id.Text()
}

// toolUseResultDepth bounds how deep large fields are looked for in a
// toolUseResult (file.content sits at depth 2), and progressDepth in the
// data of a progress line.
const (
	toolUseResultDepth = 4
	progressDepth      = 2
)

func (claudeCode) Sites(entry transcript.Value, threshold int, dst []Site) []Site {
	var e [5]transcript.Value
	entry.Fields(e[:], "uuid", "timestamp", "type", "message", "toolUseResult")
	base := Site{Entry: e[0].Text(), CreatedAt: e[1].Text(), ViewTool: "Read", ViewArg: "file_path"}
	t := e[2]
	switch {
	case t.IsString("user"), t.IsString("assistant"):
		content, _ := e[3].Get("content")
		dst = blockSites(content, Pointer{"message", "content"}, threshold, base, dst)
		if r := e[4]; present(r) && r.Len() >= threshold {
			// The tool's structured output, of the call its tool_result
			// block answers.
			content.Elems(func(_ int, b transcript.Value) bool {
				if t, _ := b.Get("type"); !t.IsString("tool_result") {
					return true
				}
				base = resultSite(b, base)
				return false
			})
			if r.Kind() == transcript.String {
				s := base
				s.Path, s.Value = Pointer{"toolUseResult"}, r
				dst = append(dst, s)
			}
			// Strings only: Claude Code renders arrays such as
			// structuredPatch element by element.
			dst = fieldSites(r, Pointer{"toolUseResult"}, threshold, base, toolUseResultDepth, false, dst)
			dst = elemSites(r, Pointer{"toolUseResult"}, threshold, base, toolUseResultDepth, dst)
		}
	case t.IsString("api-request-shape"):
		// The system prompt and tool schemas of the requests, the same in
		// every session of one version: Claude Code ignores these lines
		// when it loads a session and only reads their shapeHash.
		if shape, ok := entry.Get("shape"); ok && shape.Len() >= threshold {
			s := base
			s.Path, s.Value = Pointer{"shape"}, shape
			dst = append(dst, s)
		}
	case t.IsString("api-request-blob"):
		// A request message recorded by hash: a user message's tool
		// results again.
		if msg, ok := entry.Get("message"); ok {
			content, _ := msg.Get("content")
			dst = blockSites(content, Pointer{"message", "content"}, threshold, base, dst)
		}
	case t.IsString("progress"):
		// Claude Code skips progress lines when it loads a session: what
		// they hold is never the model's. agent_progress: a subagent's
		// message, tool results included; bash_progress: the command's
		// output so far (fullOutput) and its last lines (output); and the
		// large strings of any other (hook_progress: a hook's command and
		// prompt).
		data, ok := entry.Get("data")
		if !ok || data.Kind() != transcript.Object {
			return dst
		}
		var d [2]transcript.Value
		data.Fields(d[:], "type", "message")
		if inner, ok := d[1].Get("message"); ok {
			content, _ := inner.Get("content")
			dst = blockSites(content, Pointer{"data", "message", "message", "content"}, threshold, base, dst)
		}
		call, _ := entry.Get("parentToolUseID")
		s := base
		s.ToolCallID = call.Text()
		if d[0].IsString("bash_progress") {
			s.Tool = "Bash"
		}
		dst = fieldSites(data, Pointer{"data"}, threshold, s, progressDepth, false, dst, "message")
	}
	return sortSites(dst)
}

// Calls finds the tool_use blocks of assistant messages, a subagent's
// among them (in progress lines).
func (claudeCode) Calls(entry transcript.Value, fn func(Call)) {
	var e [3]transcript.Value
	entry.Fields(e[:], "type", "message", "data")
	var content transcript.Value
	relayed := false
	switch t := e[0]; {
	case t.IsString("progress"):
		content, _ = Pointer{"message", "message", "content"}.Resolve(e[2])
		relayed = true
	case t.IsString("assistant"):
		content, _ = e[1].Get("content")
	default:
		return // user lines, tool results among them, make no calls
	}
	contentCalls(content, "tool_use", "input", relayed, fn)
}

// Requests finds the text of user lines, but for the meta lines that
// Claude Code writes itself (command output, caveats).
func (claudeCode) Requests(entry transcript.Value, fn func(Request)) {
	if t, _ := entry.Get("type"); !t.IsString("user") || isTrue(entry, "isMeta") {
		return
	}
	content, _ := Pointer{"message", "content"}.Resolve(entry)
	request(texts(content, "text"), false, fn)
}
