package format

import (
	"bytes"
	"strings"

	"github.com/transcript-tool/transcript-tool/transcript"
)

// codex is the Codex CLI's rollout format (~/.codex/sessions/.../
// rollout-*.jsonl): {"timestamp","type","payload"} lines starting with a
// session_meta line, and the legacy format: a bare {"id","timestamp",
// "instructions"} line followed by bare response items.
type codex struct{}

func (codex) Name() string { return Codex }

func (codex) Detect(entry transcript.Value) bool {
	t, hasType := entry.Get("type")
	if _, ok := entry.Get("payload"); ok {
		return t.IsString("session_meta") || t.IsString("response_item") || t.IsString("event_msg") ||
			t.IsString("turn_context") || t.IsString("compacted")
	}
	_, hasID := entry.Get("id")
	_, hasTS := entry.Get("timestamp")
	_, hasInstructions := entry.Get("instructions")
	return !hasType && hasID && hasTS && hasInstructions
}

func (c codex) Session(entry transcript.Value) string {
	if t, _ := entry.Get("type"); t.IsString("session_meta") {
		p, _ := entry.Get("payload")
		id, _ := p.Get("id")
		return id.Text()
	}
	if _, ok := entry.Get("instructions"); ok {
		id, _ := entry.Get("id")
		return id.Text()
	}
	return ""
}

// codexItems are the types of rollout lines of Codex 0.171 (RolloutItem);
// id_allocation, whose shape is not known, among them, and
// codexResponseItems those of the response items that the legacy format
// has bare.
var (
	codexItems = map[string]bool{
		"session_meta": true, "response_item": true, "event_msg": true, "turn_context": true,
		"compacted": true, "dynamic_tools_updated": true, "inter_agent_communication": true,
		"inter_agent_communication_metadata": true, "token_usage_record": true, "world_state": true,
		"security_risk_score": true, "realtime_item": true, "id_allocation": true,
	}
	codexResponseItems = map[string]bool{
		"message": true, "reasoning": true, "function_call": true, "function_call_output": true,
		"custom_tool_call": true, "custom_tool_call_output": true, "local_shell_call": true,
		"web_search_call": true, "image_generation_call": true, "tool_search_call": true,
		"tool_search_output": true, "ghost_snapshot": true, "compaction": true, "other": true,
	}
)

func (codex) Knows(entry transcript.Value) bool {
	if _, ok := entry.Get("payload"); ok {
		return knownType(entry, "type", codexItems)
	}
	_, instructions := entry.Get("instructions")
	_, state := entry.Get("record_type")
	return instructions || state || knownType(entry, "type", codexResponseItems)
}

// codexOutputs are the exec_command_end fields that hold command output.
var codexOutputs = []string{"stdout", "stderr", "aggregated_output", "formatted_output"}

func (codex) Sites(entry transcript.Value, threshold int, dst []Site) []Site {
	ts, _ := entry.Get("timestamp")
	base := Site{CreatedAt: ts.Text(), TextType: "input_text", ViewTool: "view_image", ViewArg: "path"}
	t, _ := entry.Get("type")
	payload, hasPayload := entry.Get("payload")
	if !hasPayload {
		// Legacy: the entry is the response item itself.
		return codexItem(entry, nil, threshold, base, dst)
	}
	at := Pointer{"payload"}
	switch {
	case t.IsString("response_item"):
		return codexItem(payload, at, threshold, base, dst)
	case t.IsString("event_msg"):
		pt, _ := payload.Get("type")
		switch {
		case pt.IsString("exec_command_end"):
			call, _ := payload.Get("call_id")
			base.ToolCallID = call.Text()
			base = codexCommand(payload, base)
		case pt.IsString("item_completed"):
			// Codex 0.169 and later: a finished command, its output without
			// the header of its function_call_output.
			item, _ := payload.Get("item")
			if it, _ := item.Get("type"); !it.IsString("CommandExecution") {
				return dst
			}
			id, _ := item.Get("id")
			base.ToolCallID = id.Text()
			base = codexCommand(item, base)
			payload, at = item, at.Key("item")
		case pt.IsString("user_message"):
			// The data: URLs of the images of a prompt, again, for the
			// history a resumed session shows.
			images, _ := payload.Get("images")
			images.Elems(func(i int, v transcript.Value) bool {
				if v.Kind() == transcript.String && v.Len() >= threshold {
					s := base
					s.Path, s.Value = at.Key("images").Index(i), v
					dst = append(dst, s)
				}
				return true
			})
			return dst
		default:
			return dst
		}
		base.Tool = "exec_command"
		for _, k := range codexOutputs {
			if v, ok := payload.Get(k); ok && v.Kind() == transcript.String && v.Len() >= threshold {
				s := base
				s.Path, s.Value = at.Key(k), v
				dst = append(dst, s)
			}
		}
		return sortSites(dst)
	case t.IsString("turn_context"):
		// The AGENTS.md text and the developer's instructions, which
		// Codex up to about 0.98 wrote again on every turn and 0.171 does
		// not read back: it resumes such a rollout with the same
		// request, the instructions moved or not. (session_meta's
		// base_instructions stay: Codex sends them as the first
		// developer message of a resumed session.)
		for _, k := range []string{"user_instructions", "developer_instructions"} {
			if v, ok := payload.Get(k); ok && v.Kind() == transcript.String && v.Len() >= threshold {
				s := base
				s.Path, s.Value = at.Key(k), v
				dst = append(dst, s)
			}
		}
		return sortSites(dst)
	case t.IsString("compacted"):
		history, _ := payload.Get("replacement_history")
		history.Elems(func(i int, item transcript.Value) bool {
			dst = codexItem(item, at.Key("replacement_history").Index(i), threshold, base, dst)
			return true
		})
	}
	return dst
}

// codexItem finds the payloads of a response item at path at: the output
// of a function or custom tool call, and the images of a message.
func codexItem(item transcript.Value, at Pointer, threshold int, base Site, dst []Site) []Site {
	it, _ := item.Get("type")
	if !it.IsString("message") {
		return codexOutput(item, it, at, threshold, base, dst)
	}
	// An image is an input_image item of the content, whose image_url
	// holds the image as a data: URL: it becomes an input_text item, which
	// the Responses API takes wherever it takes the other.
	content, _ := item.Get("content")
	content.Elems(func(i int, c transcript.Value) bool {
		if c.Len() >= threshold {
			if t, _ := c.Get("type"); t.IsString("input_image") {
				s := base
				s.Path, s.Value, s.Shape = at.Key("content").Index(i), c, ShapeImageBlock
				dst = append(dst, s)
			}
		}
		return true
	})
	return dst
}

// codexOutput finds the output of a function or custom tool call output
// item of type it at path at.
func codexOutput(item, it transcript.Value, at Pointer, threshold int, base Site, dst []Site) []Site {
	if !it.IsString("function_call_output") && !it.IsString("custom_tool_call_output") {
		return dst
	}
	call, _ := item.Get("call_id")
	s := base
	s.Path, s.Shape, s.ToolCallID = at.Key("output"), ShapeToolResult, call.Text()
	n := len(dst)
	dst = memberSites(item, "output", threshold, s, dst)
	for i := n; i < len(dst); i++ {
		if dst[i].Value.Kind() == transcript.String {
			raw := dst[i].Value.Raw()
			dst[i].Head = codexHead(raw)
			dst[i].Exit = codexHeadExit(raw[1 : 1+dst[i].Head])
			dst[i].Failed = FailedExit(dst[i].Exit)
		}
	}
	return dst
}

// codexCommand returns base with the command, exit status and outcome
// of an exec_command_end event or a CommandExecution item.
func codexCommand(v transcript.Value, base Site) Site {
	command, _ := v.Get("command")
	code, _ := v.Get("exit_code")
	status, _ := v.Get("status")
	base.Input, base.Exit = argumentText(command), exitCode(code)
	base.Failed = FailedExit(base.Exit) || status.IsString("failed")
	return base
}

// codexHeadExit returns the exit status that the header of a
// function_call_output (see codexHead) records, in its JSON, or "".
func codexHeadExit(head []byte) string {
	for l := range bytes.SplitSeq(head, []byte(`\n`)) {
		for _, prefix := range []string{"Process exited with code ", "Exit code: "} {
			if code, ok := bytes.CutPrefix(l, []byte(prefix)); ok {
				return ExitText(string(code))
			}
		}
	}
	return ""
}

// codexHead returns the length of the header Codex writes ahead of a
// command's output in its function_call_output ("Chunk ID: d4d682\nWall
// time: …\nProcess exited with code 0\nOriginal token count: …\nOutput:\n"),
// counted in raw's JSON after its opening quote, or 0 when raw has none: a
// few short lines of plain text, the last "Output:". The chunk id differs
// from run to run, so only the output after it makes an artifact that two
// runs of one command share.
func codexHead(raw []byte) int {
	const end = `\nOutput:\n`
	const maxLines, maxLine = 8, 160
	head := raw[1:min(len(raw), 1+maxLines*maxLine)]
	i := bytes.Index(head, []byte(end))
	if i < 0 {
		return 0
	}
	lines := bytes.Split(head[:i], []byte(`\n`))
	if len(lines) > maxLines {
		return 0
	}
	for _, l := range lines {
		if len(l) == 0 || len(l) > maxLine || bytes.ContainsAny(l, `\"`) {
			return 0
		}
	}
	return i + len(end)
}

// Calls finds function, custom tool and local shell calls: response
// items, bare in the legacy format, and those of a compacted history.
func (codex) Calls(entry transcript.Value, fn func(Call)) {
	relayed := false
	item := func(_ int, v transcript.Value) bool {
		t, _ := v.Get("type")
		id, _ := v.Get("call_id")
		name, _ := v.Get("name")
		c := Call{ID: id.Text(), Name: name.Text(), Relayed: relayed}
		switch {
		case t.IsString("function_call"):
			c.Input, _ = v.Get("arguments")
		case t.IsString("custom_tool_call"):
			c.Input, _ = v.Get("input")
		case t.IsString("local_shell_call"):
			c.Name = "local_shell"
			c.Input, _ = v.Get("action")
		default:
			return true
		}
		fn(c)
		return true
	}
	payload, ok := entry.Get("payload")
	if !ok {
		item(0, entry)
		return
	}
	switch t, _ := entry.Get("type"); {
	case t.IsString("response_item"):
		item(0, payload)
	case t.IsString("compacted"):
		relayed = true
		history, _ := payload.Get("replacement_history")
		history.Elems(item)
	}
}

// Requests finds the user's prompts: user_message events, and user
// message items as Fallback, but for the environment context and the
// instructions Codex sends as user messages.
func (codex) Requests(entry transcript.Value, fn func(Request)) {
	t, _ := entry.Get("type")
	payload, _ := entry.Get("payload")
	item := entry // legacy files have the items at the top level
	switch {
	case t.IsString("response_item"):
		item = payload
	case t.IsString("event_msg"):
		if pt, _ := payload.Get("type"); pt.IsString("user_message") {
			if m, _ := payload.Get("message"); m.Kind() == transcript.String {
				request(m.Text(), false, fn)
			}
		}
		return
	}
	it, _ := item.Get("type")
	role, _ := item.Get("role")
	if !it.IsString("message") || !role.IsString("user") {
		return
	}
	content, _ := item.Get("content")
	text := texts(content, "input_text", "text")
	if !strings.HasPrefix(text, "<environment_context>") && !strings.HasPrefix(text, "<user_instructions>") {
		request(text, true, fn)
	}
}
