package show

import (
	"strings"

	"github.com/transcript-tool/transcript-tool/internal/display"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// codex shows Codex CLI rollouts: session_meta, turn_context, response
// items (messages, reasoning, tool calls and their outputs), compactions
// and events; and the legacy format of bare response items after a
// {"id","timestamp","instructions"} line.
//
// The events that repeat a response item (user_message, agent_message,
// agent_reasoning) and token counts are skipped; other events, and the
// items Codex 0.171 added (id_allocation, world_state, ...), are one line
// each. The items of one turn that share a timestamp share one
// header.
type codex struct{}

func (codex) entry(e *entry) bool {
	ts := get(e.root, "timestamp")
	payload, ok := e.root.Get("payload")
	if !ok {
		return e.codexLegacy(ts)
	}
	switch str(e.root, "type", 40) {
	case "session_meta":
		e.header(ts, "session", meta, "", str(payload, "id", 80), strings.TrimSpace(e.f.Name()+" "+str(payload, "cli_version", 20)), cwd(payload))
		e.text(get(payload, "instructions"), true)
	case "turn_context":
		e.header(ts, "turn", meta, "", str(payload, "model", 60), str(payload, "effort", 20), cwd(payload))
	case "response_item":
		return e.codexItem(ts, payload)
	case "event_msg":
		e.codexEvent(ts, payload)
	case "id_allocation", "world_state", "token_usage_record", "dynamic_tools_updated", "security_risk_score",
		"inter_agent_communication", "inter_agent_communication_metadata", "realtime_item":
		// Codex 0.171's other items, on one line: their payload, whose
		// shape (id_allocation's) may not be known, as it is.
		e.header(ts, strings.ReplaceAll(str(e.root, "type", 40), "_", " "), dim, "", compactJSON(payload.Raw(), 80))
	case "compacted":
		e.header(ts, "compaction", meta, "")
		e.text(get(payload, "message"), true)
		if h := get(payload, "replacement_history"); h.Kind() == transcript.Array && !e.ref(h) {
			n := 0
			h.Elems(func(int, transcript.Value) bool { n++; return true })
			e.item(dim, "(history replaced by "+display.Plural(n, "item")+")")
		}
	default:
		return false
	}
	return true
}

// codexLegacy shows a line of the legacy format: the session line, a
// state record (skipped) or a bare response item.
func (e *entry) codexLegacy(ts transcript.Value) bool {
	if instr, ok := e.root.Get("instructions"); ok {
		e.header(ts, "session", meta, "", str(e.root, "id", 80), e.f.Name())
		e.text(instr, true)
		return true
	}
	if _, ok := e.root.Get("record_type"); ok {
		return true
	}
	return e.codexItem(ts, e.root)
}

// codexItem shows a response item.
func (e *entry) codexItem(ts, item transcript.Value) bool {
	// The assistant's items of one turn share a header when they share a
	// timestamp.
	turn := "codex " + string(ts.Raw())
	switch str(item, "type", 40) {
	case "message":
		role := str(item, "role", 40)
		switch role {
		case "user":
			e.header(ts, "user", user, "")
			e.content(get(item, "content"), false)
		case "assistant":
			e.header(ts, "assistant", agent, turn)
			e.content(get(item, "content"), false)
		default: // developer and system instructions
			if role == "" {
				role = "message"
			}
			e.header(ts, role, meta, "")
			e.content(get(item, "content"), true)
		}
	case "reasoning":
		e.header(ts, "assistant", agent, turn)
		summary := get(item, "summary")
		var text []byte
		summary.Elems(func(_ int, s transcript.Value) bool {
			if len(text) > 0 {
				text = append(text, '\n')
			}
			text, _ = decode(text, get(s, "text"))
			return true
		})
		switch {
		case len(text) > 0:
			e.oneLine(dim, "thinking:", text)
		case get(item, "content").Kind() == transcript.Array:
			get(item, "content").Elems(func(_ int, c transcript.Value) bool {
				e.thinking(get(c, "text"))
				return true
			})
		default:
			e.item(dim, "thinking (encrypted)")
		}
	case "function_call":
		e.header(ts, "assistant", agent, turn)
		e.call(get(item, "name"), get(item, "arguments"))
	case "custom_tool_call":
		e.header(ts, "assistant", agent, turn)
		e.call(get(item, "name"), get(item, "input"))
	case "local_shell_call":
		e.header(ts, "assistant", agent, turn)
		action := get(item, "action")
		var argv []string
		get(action, "command").Elems(func(_ int, a transcript.Value) bool {
			argv = append(argv, a.Text())
			return true
		})
		// Shown as "shell", here and on the headers of its results,
		// where format names it local_shell.
		e.rememberCall(get(item, "call_id").Text(), "shell")
		e.item(cyan, "→ shell "+flatString(strings.Join(argv, " "), maxOneLine))
	case "web_search_call":
		e.header(ts, "assistant", agent, turn)
		e.item(cyan, "→ web search "+str(get(item, "action"), "query", maxOneLine))
	case "function_call_output", "custom_tool_call_output":
		e.codexOutput(ts, item)
	default:
		return false
	}
	return true
}

// codexOutput shows the output of a tool call: a string, a string holding
// {"output","metadata":{"exit_code"}}, or an array of content items.
func (e *entry) codexOutput(ts, item transcript.Value) {
	name := flatString(e.toolOf(get(item, "call_id").Text()), 60)
	out := get(item, "output")
	if out.Kind() != transcript.String || e.isRef(out) {
		e.header(ts, "tool result", result, "", name)
		e.content(out, true)
		return
	}
	e.buf, _ = decode(e.buf[:0], out)
	wrapped, err := transcript.Parse(e.buf, 0)
	inner := get(wrapped, "output")
	if err != nil || inner.Kind() != transcript.String {
		e.header(ts, "tool result", result, "", name)
		e.lines(e.buf, true, none)
		return
	}
	st, status := result, ""
	if code := get(get(wrapped, "metadata"), "exit_code"); code.Kind() == transcript.Number && string(code.Raw()) != "0" {
		st, status = failed, "exit "+compactJSON(code.Raw(), 20)
	}
	e.header(ts, "tool result", st, "", name, status)
	// inner points into e.buf: decode it into a buffer of its own.
	text, _ := decode(nil, inner)
	e.lines(text, true, none)
}

// codexEvent shows an event on one line, or nothing for the events that
// repeat a response item.
func (e *entry) codexEvent(ts, ev transcript.Value) {
	kind := str(ev, "type", 40)
	switch kind {
	case "user_message", "agent_message", "agent_reasoning", "agent_reasoning_raw_content",
		"agent_reasoning_section_break", "token_count", "exec_command_output_delta":
		return
	case "exec_command_end":
		st, status := dim, ""
		if code := get(ev, "exit_code"); code.Kind() == transcript.Number {
			status = "exit " + compactJSON(code.Raw(), 20)
			if string(code.Raw()) != "0" {
				st = failed
			}
		}
		e.header(ts, "event", st, "", kind, flatString(e.toolOf(get(ev, "call_id").Text()), 60), status)
	case "error", "stream_error":
		e.header(ts, "error", failed, "", str(ev, "message", maxOneLine))
	case "turn_aborted":
		e.header(ts, "event", failed, "", kind, str(ev, "reason", 60))
	default:
		e.header(ts, "event", dim, "", kind)
	}
}
