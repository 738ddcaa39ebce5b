package show

import (
	"strconv"

	"github.com/transcript-tool/transcript-tool/internal/display"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// claudeCode shows Claude Code transcripts: user and assistant lines with
// message.content blocks, tool results as blocks of user lines (their
// structured toolUseResult duplicate is not shown), and summaries, titles,
// system lines and progress lines on one line each, and Claude Code
// 2.1.3xx's attachments, recorded requests, last prompts and tool lists,
// one short line each. File history snapshots and the app's state
// (cost-state, atis-latch, teleported-from) are skipped: they hold no
// conversation.
type claudeCode struct{}

func (claudeCode) entry(e *entry) bool {
	ts := get(e.root, "timestamp")
	msg := get(e.root, "message")
	switch str(e.root, "type", 40) {
	case "user":
		e.claudeUser(ts, msg)
	case "assistant":
		st := agent
		if isTrue(get(e.root, "isApiErrorMessage")) {
			st = failed
		}
		e.header(ts, "assistant", st, "assistant "+str(msg, "id", 80), str(msg, "model", 60))
		e.content(get(msg, "content"), false)
	case "summary":
		e.header(ts, "summary", meta, "", str(e.root, "summary", maxOneLine))
	case "system":
		e.claudeSystem(ts)
	case "progress":
		e.claudeProgress(ts)
	case "custom-title":
		e.header(ts, "title", meta, "", str(e.root, "customTitle", maxOneLine))
	case "queue-operation":
		e.header(ts, "queue", dim, "", str(e.root, "operation", 40), str(e.root, "content", maxOneLine))
	case "attachment":
		// What Claude Code attaches to a turn: the environment, the date,
		// listings of tools and skills, the system prompt it sent.
		att := get(e.root, "attachment")
		e.header(ts, "attachment", dim, "", str(att, "type", 40), display.Bytes(int64(att.Len())))
	case "api-request", "api-request-shape", "api-request-blob":
		// The requests Claude Code sent, recorded by hash; api-request-blob
		// messages hold tool results again, which show once on their user
		// lines.
		e.header(ts, str(e.root, "type", 40), dim, "", str(e.root, "querySource", 40), display.Bytes(int64(e.root.Len())))
	case "last-prompt":
		e.header(ts, "last prompt", dim, "", str(e.root, "lastPrompt", maxOneLine))
	case "tools-used":
		e.header(ts, "tools used", dim, "", compactJSON(get(e.root, "tools").Raw(), maxOneLine))
	case "cost-state", "atis-latch", "teleported-from", "file-history-snapshot":
		// State of the app, not of the conversation.
	default:
		return false
	}
	return true
}

// claudeUser shows a user line: the user's text, or tool results, each
// under its own header naming the tool that its call used.
func (e *entry) claudeUser(ts, msg transcript.Value) {
	label, st, short := "user", user, false
	switch {
	case isTrue(get(e.root, "isCompactSummary")):
		label, st, short = "compaction", meta, true
	case isTrue(get(e.root, "isMeta")):
		label, short = "user (meta)", true
	}
	content := get(msg, "content")
	if content.Kind() != transcript.Array || e.isRef(content) {
		e.header(ts, label, st, "")
		e.content(content, short)
		return
	}
	group := "user " + str(e.root, "uuid", 80)
	content.Elems(func(_ int, b transcript.Value) bool {
		if !get(b, "type").IsString("tool_result") {
			e.header(ts, label, st, group)
			e.block(b, short)
			return true
		}
		st, status := result, ""
		if isTrue(get(b, "is_error")) {
			st, status = failed, "error"
		}
		e.header(ts, "tool result", st, "", flatString(e.toolOf(get(b, "tool_use_id").Text()), 60), status)
		e.content(get(b, "content"), true)
		return true
	})
}

// claudeSystem shows a system line: its subtype, level and content.
func (e *entry) claudeSystem(ts transcript.Value) {
	st := meta
	level := str(e.root, "level", 20)
	if level == "error" {
		st = failed
	}
	if level == "info" || level == "suggestion" {
		level = ""
	}
	var took string
	if d := get(e.root, "durationMs"); d.Kind() == transcript.Number {
		if ms, err := strconv.ParseFloat(string(d.Raw()), 64); err == nil {
			took = "took " + strconv.FormatFloat(ms/1000, 'f', 1, 64) + " s"
		}
	}
	e.header(ts, "system", st, "", str(e.root, "subtype", 40), level, took)
	e.content(get(e.root, "content"), true)
}

// claudeProgress shows a progress line on one line: what a subagent or a
// command is doing.
func (e *entry) claudeProgress(ts transcript.Value) {
	data := get(e.root, "data")
	kind := str(data, "type", 40)
	var detail string
	switch kind {
	case "agent_progress":
		detail = e.progressMessage(get(get(data, "message"), "message"))
	case "bash_progress":
		out := get(data, "fullOutput")
		if out.Kind() != transcript.String {
			out = get(data, "output")
		}
		if out.Kind() == transcript.String && !e.isRef(out) {
			e.buf, _ = decode(e.buf[:0], out)
			detail = display.Plural(countLines(e.buf), "line") + " of output"
		}
	case "hook_progress":
		detail = str(data, "hookName", 60)
	}
	if kind == "" {
		kind = "progress"
	}
	e.header(ts, "progress", dim, "", kind, detail)
}

// progressMessage summarises the message a subagent's progress carries by
// its first block.
func (e *entry) progressMessage(msg transcript.Value) string {
	content := get(msg, "content")
	if content.Kind() == transcript.String {
		return flatString(content.Text(), maxOneLine)
	}
	first, _ := content.Index(0)
	switch str(first, "type", 40) {
	case "text":
		return str(first, "text", maxOneLine)
	case "tool_use":
		return "→ " + str(first, "name", 60) + " " + args(get(first, "input"), maxOneLine)
	case "tool_result":
		return "result of " + flatString(e.toolOf(get(first, "tool_use_id").Text()), 60)
	}
	return ""
}

// countLines counts the lines of text, a last line without a newline
// included.
func countLines(text []byte) int {
	n := 0
	for i, c := range text {
		if c == '\n' || i == len(text)-1 {
			n++
		}
	}
	return n
}
