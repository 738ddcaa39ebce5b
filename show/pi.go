package show

import (
	"strconv"
	"strings"

	"github.com/transcript-tool/transcript-tool/transcript"
)

// pi shows pi and OpenClaw sessions: a session header, then message
// entries (user, assistant, toolResult, bashExecution, system and custom
// roles) and session events (compaction, model and thinking level
// changes, branch summaries, labels, context edits, usage).
type pi struct{}

func (pi) entry(e *entry) bool {
	ts := get(e.root, "timestamp")
	switch str(e.root, "type", 40) {
	case "session":
		version := ""
		if v := get(e.root, "version"); v.Kind() == transcript.Number {
			version = "v" + compactJSON(v.Raw(), 10)
		}
		e.header(ts, "session", meta, "", str(e.root, "id", 80), strings.TrimSpace(e.f.Name()+" "+version), cwd(e.root))
	case "message":
		msg := get(e.root, "message")
		if msg.Kind() != transcript.Object {
			e.header(ts, "message", meta, "")
			e.content(msg, true)
			break
		}
		e.piMessage(ts, msg)
	case "compaction":
		e.header(ts, "compaction", meta, "", tokens(get(e.root, "tokensBefore"), "before"))
		e.text(get(e.root, "summary"), true)
	case "branch_summary":
		e.header(ts, "branch summary", meta, "")
		e.text(get(e.root, "summary"), true)
	case "model_change":
		model := str(e.root, "modelId", 80)
		if p := str(e.root, "provider", 40); p != "" {
			model = p + "/" + model
		}
		e.header(ts, "model", meta, "", model)
	case "thinking_level_change":
		e.header(ts, "thinking level", meta, "", str(e.root, "thinkingLevel", 40))
	case "label":
		e.header(ts, "label", meta, "", str(e.root, "label", maxOneLine))
	case "session_info":
		e.header(ts, "session info", meta, "", str(e.root, "name", maxOneLine))
	case "custom":
		e.header(ts, "custom", dim, "", str(e.root, "customType", 60))
	case "custom_message":
		e.header(ts, "message", meta, "", str(e.root, "customType", 60))
		e.content(get(e.root, "content"), false)
	case "context_edit":
		// What the model sees instead of an earlier message's content.
		r := get(e.root, "replacement")
		if r.Kind() != transcript.Object {
			e.header(ts, "context edit", meta, "", "omits "+str(e.root, "targetId", 60))
			break
		}
		e.header(ts, "context edit", meta, "", "replaces "+str(e.root, "targetId", 60))
		e.content(get(r, "content"), true)
	case "usage":
		e.header(ts, "usage", dim, "", str(e.root, "kind", 40), str(e.root, "model", 60))
	default:
		return false
	}
	return true
}

// piMessage shows the message of a message entry by its role.
func (e *entry) piMessage(ts, msg transcript.Value) {
	role := str(msg, "role", 40)
	switch role {
	case "user":
		e.header(ts, "user", user, "")
		e.content(get(msg, "content"), false)
	case "assistant":
		e.header(ts, "assistant", agent, "", str(msg, "model", 60))
		e.content(get(msg, "content"), false)
		if stop := str(msg, "stopReason", 40); stop == "error" || stop == "aborted" {
			e.item(red, "stopped: "+join(stop, str(msg, "errorMessage", maxOneLine)))
		}
	case "toolResult":
		st, status := result, ""
		if isTrue(get(msg, "isError")) {
			st, status = failed, "error"
		}
		name := str(msg, "toolName", 60)
		if name == "" {
			name = flatString(e.toolOf(get(msg, "toolCallId").Text()), 60)
		}
		e.header(ts, "tool result", st, "", name, status)
		e.content(get(msg, "content"), true)
	case "bashExecution":
		st := result
		exit := get(msg, "exitCode")
		failedRun := exit.Kind() == transcript.Number && string(exit.Raw()) != "0"
		if failedRun {
			st = failed
		}
		e.header(ts, "bash", st, "", "$ "+str(msg, "command", maxOneLine))
		e.content(get(msg, "output"), true)
		var status []string
		if failedRun {
			status = append(status, "exit "+compactJSON(exit.Raw(), 20))
		}
		if isTrue(get(msg, "cancelled")) {
			status = append(status, "cancelled")
		}
		if isTrue(get(msg, "truncated")) {
			status = append(status, "truncated")
		}
		if len(status) > 0 {
			e.item(red, join(status...))
		}
	case "branchSummary", "compactionSummary":
		e.header(ts, map[string]string{"branchSummary": "branch summary", "compactionSummary": "compaction"}[role], meta, "")
		e.text(get(msg, "summary"), true)
	default: // custom and hook messages, and roles to come
		if role == "" {
			role = "message"
		}
		e.header(ts, role, meta, "", str(msg, "customType", 60))
		e.content(get(msg, "content"), false)
	}
}

func isTrue(v transcript.Value) bool { return string(v.Raw()) == "true" }

// cwd returns "cwd DIR" for an entry that names its working directory.
func cwd(v transcript.Value) string {
	if d := str(v, "cwd", maxOneLine); d != "" {
		return "cwd " + d
	}
	return ""
}

// tokens returns "N tokens WHAT" for a token count.
func tokens(v transcript.Value, what string) string {
	n, err := strconv.ParseInt(string(v.Raw()), 10, 64)
	if v.Kind() != transcript.Number || err != nil {
		return ""
	}
	return strconv.FormatInt(n, 10) + " tokens " + what
}
