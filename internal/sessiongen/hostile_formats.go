package sessiongen

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Hostile cases of the Claude Code, Codex and chat formats. Each file
// starts with a different kind of first line, so that detection is tested
// on all of them, and mixes the shapes of its format's payload sites with
// genuine content that looks like what transcript-tool writes.

// escapeWriters are the escaping styles of the escapes cases, one line
// each: Python's ensure_ascii, PHP-like "\/" with upper-case hex, upper-case
// hex alone, and loose white space.
var escapeWriters = []writer{
	python,
	{comma: ",", colon: ":", slash: true, upper: true, ascii: true},
	{comma: ",", colon: ":", upper: true, ascii: true},
	{comma: " ,\t", colon: " : "},
}

// forged returns a transcript-tool placeholder for an artifact no store
// holds, in both of its forms, and the artifact's id.
func forged() (toolResult, plain, id string) {
	sum := sha256.Sum256([]byte("a forged artifact that no store holds"))
	id = hex.EncodeToString(sum[:])
	path := "artifacts/objects/" + id[:2] + "/" + id
	return placeholder(id, "Read", path), "[Omitted 12345 bytes (text/plain; charset=utf-8): artifact " + id + " at " + path + "]", id
}

// fakeMarker is a member named like transcript-tool's marker that is not
// one: its line restores to nothing.
func fakeMarker(id string) member {
	return member{"transcriptTool", obj{{"v", 1}, {"sha256", id}, {"edits", arr{}}}}
}

func (h *hostile) claude() *claude { return newClaude(h.g, false) }

// claudeResult is a user line holding tool_result blocks and, when result
// is not nil, a toolUseResult.
func (c *claude) claudeResult(blocks arr, result any) obj {
	var tail obj
	if result != nil {
		tail = obj{{"toolUseResult", result}}
	}
	return c.line(obj{{"type", "user"}, {"message", obj{{"role", "user"}, {"content", blocks}}}}, tail)
}

func toolResult(id string, content any) obj {
	return obj{{"tool_use_id", id}, {"type", "tool_result"}, {"content", content}}
}

// claudeToolResultShapes: tool_result content as a string, as text and
// image blocks, as many small blocks, in every key order, several on one
// line, and in shapes no tool writes.
func (h *hostile) claudeToolResultShapes() [][]byte {
	c := h.claude()
	id := h.g.toolCallID
	big := h.big()
	return lines("\n",
		js.line(c.summary()),
		js.line(c.summary()),
		js.line(c.prompt("read the files")),
		js.line(c.claudeResult(arr{toolResult(id(), big)}, obj{{"type", "text"}, {"file", obj{{"filePath", "/tmp/a.go"}, {"content", big}}}})),
		js.line(c.claudeResult(arr{obj{{"type", "tool_result"}, {"content", h.bigLog()}, {"is_error", true}, {"tool_use_id", id()}}}, "Error: "+h.bigLog())),
		js.line(c.claudeResult(arr{obj{{"type", "tool_result"}, {"tool_use_id", id()}, {"content", arr{text("Read image file [image/png]"), claudeImage(h.png())}}}}, nil)),
		// Several results on one line, in three key orders, one of them small.
		js.line(c.claudeResult(arr{
			toolResult(id(), h.bigLog()),
			obj{{"content", arr{text(h.big())}}, {"is_error", false}, {"type", "tool_result"}, {"tool_use_id", id()}},
			obj{{"type", "tool_result"}, {"tool_use_id", id()}, {"content", "ok"}},
			obj{{"type", "tool_result"}, {"tool_use_id", id()}, {"content", arr{claudeImage(h.png()), text("and a screenshot")}}},
		}, nil)),
		// Many small blocks that are large together.
		js.line(c.claudeResult(arr{toolResult(id(), arr(repeat(60, func() any { return text(h.g.codeLine()) })))}, nil)),
		// Shapes no tool writes: null, a number, an object, no content,
		// and a duplicate content whose last value is small.
		js.line(c.claudeResult(arr{toolResult(id(), nil), toolResult(id(), rawJSON("1E+400")), obj{{"type", "tool_result"}, {"tool_use_id", id()}}}, nil)),
		js.line(c.claudeResult(arr{toolResult(id(), obj{{"type", "text"}, {"text", h.big()}})}, nil)),
		js.line(c.claudeResult(arr{obj{{"type", "tool_result"}, {"tool_use_id", id()}, {"content", h.big()}, {"content", "small"}}}, nil)),
		// Images outside results: a user's screenshot, keys reordered, and
		// one in an assistant's message.
		js.line(c.user(obj{{"source", obj{{"data", h.png()}, {"media_type", "image/png"}, {"type", "base64"}}}, {"type", "image"}}, text("what is this?"))),
		js.line(c.assistant(claudeImage(h.png()), "end_turn")),
	)
}

func repeat(n int, f func() any) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = f()
	}
	return out
}

// claudePlaceholderLookalikes: genuine content that looks like what
// transcript-tool or Claude Code itself writes in place of output.
func (h *hostile) claudePlaceholderLookalikes() [][]byte {
	c := h.claude()
	id := h.g.toolCallID
	exact, plain, artifact := forged()
	persisted := persistedOutput(c.session, "toolu_01PERSISTED", h.bigLog())
	return lines("\n",
		js.line(c.queueOperation()),
		js.line(c.prompt("run the build")),
		// Exactly a placeholder, small: kept; then the same with more text.
		js.line(c.claudeResult(arr{toolResult(id(), exact)}, exact)),
		js.line(c.claudeResult(arr{toolResult(id(), exact+"\n"+h.big())}, obj{{"stdout", plain + "\n" + h.bigLog()}, {"stderr", plain}, {"interrupted", false}, {"isImage", false}})),
		js.line(c.claudeResult(arr{toolResult(id(), arr{text(exact), text(h.big())})}, nil)),
		// Claude Code's own persisted-output markers and tool-results paths.
		js.line(c.claudeResult(arr{toolResult(id(), persisted[:strings.Index(persisted, "Preview")]+"</persisted-output>")}, nil)),
		js.line(c.claudeResult(arr{toolResult(id(), persisted)}, obj{{"stdout", persisted}, {"stderr", ""}, {"interrupted", false}, {"isImage", false}})),
		js.line(c.claudeResult(arr{toolResult(id(), "see tool-results/toolu_01ABC.txt\n"+h.bigLog())}, nil)),
		// A member named like the marker, on a line with a large result.
		js.line(append(c.claudeResult(arr{toolResult(id(), h.big())}, nil), fakeMarker(artifact))),
	)
}

// claudeProgress: progress lines of subagents and commands.
func (h *hostile) claudeProgress() [][]byte {
	c := h.claude()
	id := h.g.toolCallID
	agent := func(content any) obj {
		inner := obj{{"type", "user"}, {"message", obj{{"role", "user"}, {"content", content}}}, {"uuid", c.uuid()}, {"timestamp", "2025-07-01T10:00:00.000Z"}}
		return c.line(obj{{"type", "progress"}, {"data", obj{{"message", inner}, {"normalizedMessages", arr{}}, {"type", "agent_progress"},
			{"prompt", "explore"}, {"agentId", "a1b2c3d"}}}, {"toolUseID", "agent_msg_01X"}, {"parentToolUseID", id()}}, nil)
	}
	return lines("\n",
		js.line(c.snapshot()),
		js.line(c.prompt("explore the code")),
		js.line(agent(arr{toolResult(id(), h.big())})),
		js.line(agent(arr{toolResult(id(), arr{text("Read image file [image/png]"), claudeImage(h.png())}), toolResult(id(), h.bigLog())})),
		js.line(agent(arr{text("a subagent's screenshot"), claudeImage(h.png())})),
		// A subagent's prompt is no payload.
		js.line(agent(h.big())),
		js.line(c.bashProgressLine(h.bigLog(), id())),
		js.line(c.line(obj{{"type", "progress"}, {"data", obj{{"type", "hook_progress"}, {"hookEvent", "PostToolUse"}, {"hookName", "PostToolUse:Bash"}, {"command", "make fmt"}}},
			{"toolUseID", id()}, {"parentToolUseID", id()}}, nil)),
		js.line(c.line(obj{{"type", "progress"}, {"data", h.big()}}, nil)),
		js.line(c.line(obj{{"type", "progress"}, {"data", obj{{"type", "bash_progress"}, {"fullOutput", arr{h.bigLog()}}}}}, nil)),
	)
}

// claudeToolUseResults: every shape of toolUseResult.
func (h *hostile) claudeToolUseResults() [][]byte {
	c := h.claude()
	id := h.g.toolCallID
	img := h.png()
	out, errs := h.bigLog(), h.bigLog()
	bash := obj{{"stdout", out}, {"stderr", errs}, {"interrupted", false}, {"isImage", false}}
	small := arr{toolResult(id(), "ok")}
	return lines("\n",
		js.line(c.prompt("go")),
		js.line(c.claudeResult(arr{toolResult(id(), out)}, bash)),
		js.line(c.claudeResult(small, "Error: "+h.bigLog())),
		js.line(c.claudeResult(small, obj{{"filePath", "/tmp/x.go"}, {"oldString", "a"}, {"newString", "b"}, {"originalFile", h.big()},
			{"structuredPatch", arr{obj{{"oldStart", 1}, {"oldLines", 1}, {"newStart", 1}, {"newLines", 1}, {"lines", arr{"-a", "+b"}}}}}, {"userModified", false}, {"replaceAll", false}})),
		js.line(c.claudeResult(arr{toolResult(id(), arr{claudeImage(img)})}, obj{{"type", "image"}, {"file", obj{{"base64", img}, {"type", "image/png"}, {"originalSize", 3600}}}})),
		// toolUseResult before message, and large strings three objects deep.
		js.line(c.line(obj{{"toolUseResult", obj{{"a", obj{{"b", obj{{"c", h.big()}}}}}}}, {"type", "user"}, {"message", obj{{"role", "user"}, {"content", small}}}}, nil)),
		js.line(c.claudeResult(small, obj{{"mode", "content"}, {"numFiles", 0}, {"filenames", arr{}}, {"content", h.bigLog()}, {"numLines", 99}})),
		// Results that are large only as arrays of small strings.
		js.line(c.claudeResult(small, obj{{"filenames", arr(repeat(150, func() any { return h.g.path() }))}, {"numFiles", 150}})),
	)
}

// claudeToolUseResultArrays: toolUseResults whose large strings are
// inside arrays: a subagent's report (Task) and an MCP tool's content
// blocks, each the same text as the tool_result beside it.
func (h *hostile) claudeToolUseResultArrays() [][]byte {
	c := h.claude()
	id := h.g.toolCallID
	report, body := h.big(), h.bigLog()
	return lines("\n",
		js.line(c.prompt("go")),
		js.line(c.claudeResult(arr{toolResult(id(), arr{text(report)})}, obj{{"status", "completed"}, {"prompt", "explore"}, {"agentId", "a1b2c3d"},
			{"content", arr{text(report)}}, {"totalDurationMs", 1234}, {"totalTokens", 999}, {"totalToolUseCount", 3}})),
		js.line(c.claudeResult(arr{toolResult(id(), arr{text(body)})}, arr{text(body)})),
	)
}

// claudeEscapes: Claude Code lines in every escaping style, after a byte
// order mark, with CRLF and lone surrogates.
func (h *hostile) claudeEscapes() [][]byte {
	c := h.claude()
	id := h.g.toolCallID
	body := strings.Repeat(intl, 8) + h.big()
	out := [][]byte{append(bomBytes(), lf(js.line(c.prompt("résumé ✓")))...)}
	for _, w := range escapeWriters {
		out = append(out, lf(w.line(c.claudeResult(arr{toolResult(id(), body)}, obj{{"stdout", body}, {"stderr", ""}}))))
		out = append(out, lf(w.line(c.user(text("é"), claudeImage(h.png())))))
	}
	return append(out,
		append(js.line(c.claudeResult(arr{toolResult(id(), strings.ReplaceAll(body, "\n", "\r\n"))}, nil)), "\r\n"...),
		lf(js.line(c.claudeResult(arr{toolResult(id(), escaped(h.big(), `\ud800`, h.big()))}, obj{{"stdout", escaped(h.bigLog(), `\udc00\ud800`, "")}}))),
	)
}

// response wraps a response item in a rollout line.
func response(item obj) obj {
	return obj{{"timestamp", "2025-09-15T10:00:00.000Z"}, {"type", "response_item"}, {"payload", item}}
}

func eventMsg(typ string, payload obj) obj {
	return obj{{"timestamp", "2025-09-15T10:00:00.000Z"}, {"type", typ}, {"payload", payload}}
}

func (h *hostile) sessionMeta() obj {
	return eventMsg("session_meta", obj{{"id", "hostile-" + strings.TrimSuffix(h.name, ".jsonl")}, {"timestamp", "2025-09-15T10:00:00.000Z"},
		{"cwd", "/tmp/hostile"}, {"originator", "codex_cli_rs"}, {"cli_version", "0.46.0"}, {"instructions", nil}})
}

func fco(id string, output any) obj {
	return obj{{"type", "function_call_output"}, {"call_id", id}, {"output", output}}
}

func (h *hostile) callID() string { return "call_" + h.g.alnum(24) }

func inputText(s any) obj { return obj{{"type", "input_text"}, {"text", s}} }
func inputImage(b64 string) obj {
	return obj{{"type", "input_image"}, {"image_url", "data:image/png;base64," + b64}}
}

// codexOutputShapes: function and custom tool call outputs as JSON inside a
// string, as arrays with images, and in shapes Codex does not write.
func (h *hostile) codexOutputShapes() [][]byte {
	exact, plain, _ := forged()
	return lines("\n",
		js.line(h.sessionMeta()),
		js.line(response(fco(h.callID(), codexJSONOutput(h.bigLog(), 0, 0.5)))),
		js.line(response(fco(h.callID(), arr{inputText(h.big()), inputImage(h.png())}))),
		js.line(response(fco(h.callID(), arr{inputImage(h.png())}))),
		js.line(response(fco(h.callID(), arr(repeat(80, func() any { return inputText(h.g.codeLine()) }))))),
		js.line(response(obj{{"type", "custom_tool_call_output"}, {"call_id", h.callID()}, {"output", codexJSONOutput("Success.\n"+h.bigLog(), 0, 0.1)}})),
		js.line(response(obj{{"type", "custom_tool_call_output"}, {"call_id", h.callID()}, {"output", arr{inputText(h.bigLog())}}})),
		// Key orders: output first in the item, payload first in the line.
		js.line(response(obj{{"output", h.big()}, {"call_id", h.callID()}, {"type", "function_call_output"}})),
		js.line(obj{{"payload", fco(h.callID(), h.bigLog())}, {"type", "response_item"}, {"timestamp", "2025-09-15T10:00:00.000Z"}}),
		// Shapes Codex does not write: empty, null, a number, an object,
		// and a duplicate output whose last value is small.
		js.line(response(fco(h.callID(), ""))),
		js.line(response(fco(h.callID(), nil))),
		js.line(response(fco(h.callID(), rawJSON(strings.Repeat("9", 5000))))),
		js.line(response(fco(h.callID(), obj{{"content", h.big()}, {"success", true}}))),
		js.line(response(obj{{"type", "function_call_output"}, {"call_id", h.callID()}, {"output", h.big()}, {"output", "small"}})),
		// Output that looks like transcript-tool's placeholders.
		js.line(response(fco(h.callID(), exact))),
		js.line(response(fco(h.callID(), arr{inputText(exact + "\n" + h.big())}))),
		js.line(response(fco(h.callID(), plain+"\n"+h.bigLog()))),
		// Not outputs: a function call's arguments, a user's image.
		js.line(response(obj{{"type", "function_call"}, {"name", "shell"}, {"arguments", codexJSONOutput(h.big(), 0, 0)}, {"call_id", h.callID()}})),
		js.line(response(obj{{"type", "message"}, {"role", "user"}, {"content", arr{inputText("look"), inputImage(h.png())}}})),
	)
}

// codexExecEvents: exec_command_end events with the output in four
// fields, and events that are not payload sites.
func (h *hostile) codexExecEvents() [][]byte {
	end := func(stdout, stderr, aggregated, formatted any) obj {
		return eventMsg("event_msg", obj{{"type", "exec_command_end"}, {"call_id", h.callID()}, {"stdout", stdout}, {"stderr", stderr},
			{"aggregated_output", aggregated}, {"exit_code", 0}, {"duration", obj{{"secs", 0}, {"nanos", 1}}}, {"formatted_output", formatted}})
	}
	out, errs := h.bigLog(), h.bigLog()
	return lines("\n",
		js.line(eventMsg("turn_context", obj{{"cwd", "/tmp/hostile"}, {"approval_policy", "never"}, {"model", "gpt-5-codex"}})),
		js.line(h.sessionMeta()),
		js.line(end(out, errs, out+errs, out+errs)),
		js.line(end(out, "", out, out)),
		js.line(end(nil, arr{errs}, "", "small")),
		js.line(eventMsg("event_msg", obj{{"type", "exec_command_begin"}, {"call_id", h.callID()}, {"command", arr{"bash", "-lc", h.big()}}})),
		js.line(eventMsg("event_msg", obj{{"type", "agent_message"}, {"message", h.big()}})),
		js.line(eventMsg("event_msg", obj{{"type", "exec_command_output_delta"}, {"stdout", h.bigLog()}})),
	)
}

// codexCompacted: compacted lines whose kept history holds tool outputs.
func (h *hostile) codexCompacted() [][]byte {
	history := arr{
		obj{{"type", "message"}, {"role", "user"}, {"content", arr{inputText(h.big())}}},
		fco(h.callID(), codexJSONOutput(h.bigLog(), 0, 0.2)),
		fco(h.callID(), arr{inputText(h.bigLog()), inputImage(h.png())}),
		obj{{"type", "custom_tool_call_output"}, {"call_id", h.callID()}, {"output", h.big()}},
		fco(h.callID(), "small"),
	}
	return lines("\n",
		js.line(h.sessionMeta()),
		js.line(eventMsg("compacted", obj{{"message", "summary\n" + h.big()}, {"replacement_history", history}})),
		js.line(eventMsg("compacted", obj{{"message", "summary only"}})),
		js.line(eventMsg("compacted", obj{{"message", "history that is no list"}, {"replacement_history", fco(h.callID(), h.big())}})),
	)
}

// codexLegacy: the legacy format, bare items between state records.
func (h *hostile) codexLegacy() [][]byte {
	return lines("\n",
		js.line(obj{{"id", "hostile-legacy"}, {"timestamp", "2025-04-20T10:00:00.000Z"}, {"instructions", codexInstructions + h.big()}}),
		js.line(obj{{"record_type", "state"}}),
		js.line(obj{{"type", "function_call"}, {"id", "fc_1"}, {"name", "shell"}, {"arguments", `{"command":["ls"]}`}, {"call_id", "call_1"}}),
		js.line(fco("call_1", codexJSONOutput(h.bigLog(), 0, 0.1))),
		js.line(fco("call_2", arr{inputText(h.big()), inputImage(h.png())})),
		js.line(obj{{"type", "custom_tool_call_output"}, {"call_id", "call_3"}, {"output", h.bigLog()}}),
		js.line(obj{{"record_type", "state"}}),
	)
}

// codexEscapes: rollout lines in every escaping style, with CRLF and lone
// surrogates.
func (h *hostile) codexEscapes() [][]byte {
	body := strings.Repeat(intl, 8) + h.big()
	out := [][]byte{lf(js.line(h.sessionMeta()))}
	for _, w := range escapeWriters {
		out = append(out, lf(w.line(response(fco(h.callID(), codexJSONOutput(body, 0, 0.5))))))
		out = append(out, lf(w.line(response(fco(h.callID(), arr{inputText(body), inputImage(h.png())})))))
	}
	return append(out,
		append(js.line(response(fco(h.callID(), strings.ReplaceAll(body, "\n", "\r\n")))), "\r\n"...),
		lf(js.line(response(fco(h.callID(), escaped(h.big(), `\ud800`, h.big()))))),
	)
}

func tool(id string, content any) obj {
	return obj{{"role", "tool"}, {"tool_call_id", id}, {"name", "read_file"}, {"content", content}}
}

// chatContentShapes: tool message content as a string, as text parts, in
// shapes no writer produces, and looking like a placeholder.
func (h *hostile) chatContentShapes() [][]byte {
	exact, _, _ := forged()
	return lines("\n",
		js.line(tool(h.callID(), h.big())),
		js.line(tool(h.callID(), arr{obj{{"type", "text"}, {"text", h.bigLog()}}})),
		js.line(tool(h.callID(), arr(repeat(80, func() any { return obj{{"type", "text"}, {"text", h.g.codeLine()}} })))),
		js.line(obj{{"content", h.bigLog()}, {"name", "run"}, {"tool_call_id", h.callID()}, {"role", "tool"}}),
		js.line(obj{{"role", "function"}, {"name", "read_file"}, {"content", h.big()}}),
		js.line(tool(h.callID(), nil)),
		js.line(tool(h.callID(), rawJSON(strings.Repeat("9", 5000)))),
		js.line(tool(h.callID(), obj{{"text", h.big()}})),
		js.line(obj{{"role", "tool"}, {"tool_call_id", h.callID()}, {"content", h.big()}, {"content", "small"}}),
		js.line(tool(h.callID(), exact)),
		js.line(tool(h.callID(), exact+"\n"+h.big())),
		// Not tool output: a user's image, an assistant's long answer.
		js.line(obj{{"role", "user"}, {"content", arr{obj{{"type", "text"}, {"text", "look"}},
			obj{{"type", "image_url"}, {"image_url", obj{{"url", "data:image/png;base64," + h.png()}}}}}}}),
		js.line(obj{{"role", "assistant"}, {"content", h.big()}}),
	)
}

// chatMessagesArray: conversations on one line each, with several tool
// messages, and lines holding both a message and a conversation.
func (h *hostile) chatMessagesArray() [][]byte {
	conv := func(msgs ...any) obj {
		return obj{{"id", "conv-" + h.g.hex(6)}, {"messages", arr(msgs)}}
	}
	return lines("\n",
		js.line(conv(obj{{"role", "user"}, {"content", "hi"}}, tool(h.callID(), h.big()), tool(h.callID(), "small"),
			tool(h.callID(), arr{obj{{"type", "text"}, {"text", h.bigLog()}}}), obj{{"role", "assistant"}, {"content", h.big()}})),
		js.line(obj{{"messages", arr{tool(h.callID(), h.bigLog())}}, {"session_id", "s-1"}}),
		js.line(append(tool(h.callID(), h.big()), member{"messages", arr{tool(h.callID(), h.bigLog())}})),
		js.line(conv(arr{tool(h.callID(), h.big())}, "a message that is a string", nil)),
		js.line(obj{{"id", "conv-x"}, {"messages", obj{{"role", "tool"}, {"content", h.big()}}}}),
	)
}

// chatEscapes: chat lines in every escaping style, after a byte order
// mark, with CRLF and lone surrogates.
func (h *hostile) chatEscapes() [][]byte {
	body := strings.Repeat(intl, 8) + h.big()
	out := [][]byte{append(bomBytes(), lf(js.line(obj{{"role", "system"}, {"content", "résumé ✓"}}))...)}
	for _, w := range escapeWriters {
		out = append(out, lf(w.line(tool(h.callID(), body))))
		out = append(out, lf(w.line(obj{{"id", "c"}, {"messages", arr{tool(h.callID(), arr{obj{{"type", "text"}, {"text", body}}})}}})))
	}
	crlf := js.line(tool(h.callID(), strings.ReplaceAll(body, "\n", "\r\n")))
	return append(out,
		append(crlf, "\r\n"...),
		lf(js.line(tool(h.callID(), escaped(h.big(), `\udc00`, h.big())))),
		js.line(tool(h.callID(), h.bigLog())), // no final newline
	)
}
