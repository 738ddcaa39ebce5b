package format

import (
	"github.com/transcript-tool/transcript-tool/transcript"
)

// pi is the session format of pi (v1 to v3) and OpenClaw's file-backed
// sessions: a "session" header line, then entries of which "message"
// entries carry user, assistant, toolResult and bashExecution messages.
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

// detailsDepth bounds how deep payload fields are looked for in details.
const detailsDepth = 3

func (pi) Sites(entry transcript.Value, threshold int, dst []Site) []Site {
	var e [4]transcript.Value
	entry.Fields(e[:], "type", "message", "id", "timestamp")
	msg := e[1]
	if !e[0].IsString("message") || msg.Kind() != transcript.Object {
		return dst
	}
	base := Site{Entry: e[2].Text(), CreatedAt: e[3].Text()}
	at := Pointer{"message"}
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
