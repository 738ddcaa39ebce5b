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
	if t, _ := entry.Get("type"); !t.IsString("message") {
		return dst
	}
	msg, ok := entry.Get("message")
	if !ok || msg.Kind() != transcript.Object {
		return dst
	}
	idv, _ := entry.Get("id")
	tsv, _ := entry.Get("timestamp")
	base := Site{Entry: idv.Text(), CreatedAt: tsv.Text()}
	at := Pointer{"message"}
	role, _ := msg.Get("role")
	switch {
	case role.IsString("toolResult"):
		details, hasDetails := msg.Get("details")
		if hasDetails && isTrue(details, "openclawSyntheticMissingToolResult") {
			return dst
		}
		name, _ := msg.Get("toolName")
		call, _ := msg.Get("toolCallId")
		base.Tool, base.ToolCallID = name.Text(), call.Text()
		code, _ := details.Get("exitCode")
		status, _ := details.Get("status")
		base.Exit = exitCode(code)
		_, marked := msg.Get("isError")
		base.Failed = isTrue(msg, "isError") || FailedExit(base.Exit) || status.IsString("failed")
		if base.Exit == "" && marked && !base.Failed {
			base.Exit = "0"
		}
		s := base
		s.Path, s.Shape, s.RefParent = at.Key("content"), ShapeToolResult, at
		sites := memberSites(msg, "content", threshold, s, nil)
		if hasDetails {
			sites = fieldSites(details, at.Key("details"), threshold, base, detailsDepth, true, sites, "artifactRef")
		}
		return append(dst, sortSites(sites)...)
	case role.IsString("bashExecution"):
		if out, ok := msg.Get("output"); ok && out.Len() >= threshold {
			s := base
			s.Tool, s.Path, s.Value = "bash", at.Key("output"), out
			command, _ := msg.Get("command")
			code, _ := msg.Get("exitCode")
			s.Input, s.Exit = argumentText(command), exitCode(code)
			s.Failed = isTrue(msg, "cancelled") || FailedExit(s.Exit)
			dst = append(dst, s)
		}
		return dst
	default:
		content, _ := msg.Get("content")
		return blockSites(content, at.Key("content"), threshold, base, dst)
	}
}

// Calls finds the toolCall blocks of assistant messages.
func (pi) Calls(entry transcript.Value, fn func(Call)) {
	if t, _ := entry.Get("type"); !t.IsString("message") {
		return
	}
	msg, _ := entry.Get("message")
	if role, _ := msg.Get("role"); !role.IsString("assistant") {
		return // the other messages, tool results among them, make no calls
	}
	content, _ := msg.Get("content")
	contentCalls(content, "toolCall", "arguments", false, fn)
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
	v, ok := obj.Get(key)
	return ok && string(v.Raw()) == "true"
}
