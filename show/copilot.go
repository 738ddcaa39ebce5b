package show

import (
	"strings"

	"github.com/transcript-tool/transcript-tool/transcript"
)

// copilot shows GitHub Copilot CLI's session events: the session's start
// and resumptions, user and system messages, the assistant's messages
// with their tool requests, tool results and images. The bookkeeping
// events (turn starts and ends, usage records, a tool's start, which
// repeats its request) are skipped; the others are one line each.
type copilot struct{}

func (copilot) entry(e *entry) bool {
	ts := get(e.root, "timestamp")
	data := get(e.root, "data")
	switch kind := str(e.root, "type", 60); kind {
	case "session.start":
		e.header(ts, "session", meta, "", str(data, "sessionId", 80),
			strings.TrimSpace(e.f.Name()+" "+str(data, "copilotVersion", 20)), cwd(get(data, "context")))
	case "session.resume":
		e.header(ts, "resume", meta, "", cwd(get(data, "context")))
	case "user.message":
		e.header(ts, "user", user, "")
		e.text(get(data, "content"), false)
		get(data, "attachments").Elems(func(_ int, a transcript.Value) bool {
			e.image(a)
			return true
		})
	case "system.message":
		e.header(ts, "system", meta, "")
		e.text(get(data, "content"), true)
	case "assistant.message":
		e.header(ts, "assistant", agent, "", str(data, "model", 60))
		e.text(get(data, "content"), false)
		get(data, "toolRequests").Elems(func(_ int, r transcript.Value) bool {
			e.call(get(r, "name"), get(r, "arguments"))
			return true
		})
	case "assistant.reasoning":
		e.header(ts, "assistant", agent, "")
		e.thinking(get(data, "content"))
	case "tool.execution_complete":
		e.copilotResult(ts, data)
	case "session.binary_asset":
		e.header(ts, "image", meta, "", str(data, "assetId", 80))
		e.image(data)
	case "assistant.turn_start", "assistant.turn_end", "session.usage_record", "tool.execution_start", "assistant.usage":
	default:
		if !e.f.Knows(e.root) {
			return false
		}
		e.header(ts, "event", dim, "", kind)
	}
	return true
}

// copilotResult shows a tool's result: the text the model is shown, and
// the blocks of its contents; a failure, or a command that exited
// non-zero, is marked failed.
func (e *entry) copilotResult(ts, data transcript.Value) {
	name := flatString(e.toolOf(get(data, "toolCallId").Text()), 60)
	st, status := result, ""
	if code := get(get(data, "shellExecution"), "exitCode"); code.Kind() == transcript.Number {
		status = "exit " + compactJSON(code.Raw(), 20)
		if string(code.Raw()) != "0" {
			st = failed
		}
	}
	if string(get(data, "success").Raw()) == "false" {
		st = failed
	}
	e.header(ts, "tool result", st, "", name, status)
	res := get(data, "result")
	if res.Kind() == transcript.Invalid {
		e.text(get(get(data, "error"), "message"), true)
		return
	}
	e.text(get(res, "content"), true)
	get(res, "contents").Elems(func(_ int, b transcript.Value) bool {
		if t := str(b, "type", 40); t == "image" || t == "audio" || e.isRef(b) {
			e.block(b, true)
		}
		return true
	})
}
