package format

import (
	"github.com/transcript-tool/transcript-tool/transcript"
)

// pi is the session format of pi (v1 to v3, 0.x and 1.x) and OpenClaw's
// file-backed sessions: a "session" header line, then entries of which
// "message" entries carry user, assistant, system, toolResult and
// bashExecution messages, and since pi 0.87 "context_edit" entries carry
// what an earlier message's content is replaced by in the model's context.
type pi struct{}

func (pi) Name() string { return Pi }

func (pi) Detect(entry transcript.Value) bool {
	t, _ := entry.Get("type")
	return t.IsString("session")
}

func (p pi) Session(entry transcript.Value) string {
	if !p.Detect(entry) {
		return ""
	}
	id, _ := entry.Get("id")
	return id.Text()
}

// piTypes are the entry types of pi 1.5 and of OpenClaw 2026.9.
var piTypes = map[string]bool{
	"session": true, "message": true, "model_change": true, "thinking_level_change": true,
	"compaction": true, "branch_summary": true, "custom": true, "custom_message": true,
	"label": true, "session_info": true, "usage": true, "context_edit": true,
}

func (pi) Knows(entry transcript.Value) bool { return knownType(entry, "type", piTypes) }

// detailsDepth bounds how deep payload fields are looked for in details.
const detailsDepth = 3

func (pi) Sites(entry transcript.Value, threshold int, dst []Site) []Site {
	var e [7]transcript.Value
	entry.Fields(e[:], "type", "message", "id", "timestamp", "systemMessage", "replacement", "content")
	base := Site{Entry: e[2].Text(), CreatedAt: e[3].Text(), ViewTool: "read", ViewArg: "path"}
	switch t := e[0]; {
	case t.IsString("message"):
		return piMessage(e[1], Pointer{"message"}, threshold, base, dst)
	case t.IsString("compaction"):
		// The prompt and tools at the compaction boundary, which pi
		// sends as the compacted context's system message: only what a
		// message holds besides them.
		return piMessage(e[4], Pointer{"systemMessage"}, threshold, base, dst)
	case t.IsString("context_edit"):
		return piReplacement(e[5], Pointer{"replacement"}, threshold, base, dst)
	case t.IsString("custom_message"):
		// An extension's message to the model: its images.
		return blockSites(e[6], Pointer{"content"}, threshold, base, dst)
	}
	return dst
}

// piMessage finds the payloads of a message at path at: a tool result's
// content and its details' large fields, a bash execution's output, and
// the tool results and images in the content of any other message (the
// system prompt and tool declarations of a system message are the
// model's, and stay).
func piMessage(msg transcript.Value, at Pointer, threshold int, base Site, dst []Site) []Site {
	if msg.Kind() != transcript.Object {
		return dst
	}
	var m [10]transcript.Value
	msg.Fields(m[:], "role", "details", "toolName", "toolCallId", "isError", "content", "output", "command", "exitCode", "cancelled")
	role, details, content := m[0], m[1], m[5]
	switch {
	case role.IsString("toolResult"):
		var d [3]transcript.Value
		details.Fields(d[:], "openclawSyntheticMissingToolResult", "exitCode", "status")
		if isTrueValue(d[0]) {
			return dst
		}
		base.Tool, base.ToolCallID = m[2].Text(), m[3].Text()
		base.Exit = exitCode(d[1])
		base.Failed = isTrueValue(m[4]) || FailedExit(base.Exit) || d[2].IsString("failed")
		if base.Exit == "" && present(m[4]) && !base.Failed {
			base.Exit = "0"
		}
		s := base
		s.Path, s.Shape, s.RefParent = at.Key("content"), ShapeToolResult, at
		sites := memberSites(msg, "content", threshold, s, nil)
		if present(details) {
			sites = fieldSites(details, at.Key("details"), threshold, base, detailsDepth, true, sites, "artifactRef")
		}
		return append(dst, sortSites(sites)...)
	case role.IsString("bashExecution"):
		if out := m[6]; present(out) && out.Len() >= threshold {
			s := base
			s.Tool, s.Path, s.Value = "bash", at.Key("output"), out
			s.Input, s.Exit = argumentText(m[7]), exitCode(m[8])
			s.Failed = isTrueValue(m[9]) || FailedExit(s.Exit)
			dst = append(dst, s)
		}
		return dst
	default:
		return blockSites(content, at.Key("content"), threshold, base, dst)
	}
}

// piReplacement finds the payloads of a context_edit's replacement at
// path at, whose content pi puts in the place of the content of the
// message it targets (of any role: user, assistant, tool result): a
// string is stored whole, as a tool result's; in an array, the text of
// each text block is, and image and tool_result blocks are as in a
// message, so that the blocks an assistant's content needs (its tool
// calls) stay where they are.
func piReplacement(r transcript.Value, at Pointer, threshold int, base Site, dst []Site) []Site {
	content, ok := r.Get("content")
	if !ok || r.Kind() != transcript.Object {
		return dst
	}
	at = at.Key("content")
	if content.Kind() != transcript.Array {
		s := base
		s.Path, s.Shape = at, ShapeToolResult
		return memberSites(r, "content", threshold, s, dst)
	}
	n := len(dst)
	dst = blockSites(content, at, threshold, base, dst)
	content.Elems(func(i int, b transcript.Value) bool {
		if t, _ := b.Get("type"); t.IsString("text") && b.Len() >= threshold {
			s := base
			s.Path, s.Shape = at.Index(i).Key("text"), ShapeToolResult
			dst = memberSites(b, "text", threshold, s, dst)
		}
		return true
	})
	sortSites(dst[n:])
	return dst
}

// Calls finds the toolCall blocks of assistant messages.
func (pi) Calls(entry transcript.Value, fn func(Call)) {
	var e [2]transcript.Value
	entry.Fields(e[:], "type", "message")
	if !e[0].IsString("message") {
		return
	}
	var m [2]transcript.Value
	e[1].Fields(m[:], "role", "content")
	if !m[0].IsString("assistant") {
		return // the other messages, tool results among them, make no calls
	}
	contentCalls(m[1], "toolCall", "arguments", false, fn)
}

// Requests finds the text of user messages.
func (pi) Requests(entry transcript.Value, fn func(Request)) {
	if t, _ := entry.Get("type"); !t.IsString("message") {
		return
	}
	msg, _ := entry.Get("message")
	if role, _ := msg.Get("role"); role.IsString("user") {
		content, _ := msg.Get("content")
		request(texts(content, "text"), false, fn)
	}
}

func isTrue(obj transcript.Value, key string) bool {
	v, _ := obj.Get(key)
	return isTrueValue(v)
}

// isTrueValue reports whether v is the literal true.
func isTrueValue(v transcript.Value) bool { return string(v.Raw()) == "true" }

// present reports whether v is a member's value Fields found, not the
// zero Value it leaves for a missing one.
func present(v transcript.Value) bool { return v.Kind() != transcript.Invalid }
