package sessiongen

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// Codex CLI rollouts (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl): lines
// {"timestamp","type","payload"} starting with a session_meta line, whose
// response_item payloads are the items sent to the model (messages,
// function calls and their outputs), event_msg payloads what the user saw
// (exec_command_end holds a command's output up to four times over),
// turn_context the settings of a turn, and compacted the summary and
// history that replaced the context. Legacy rollouts start with a bare
// {"id","timestamp","instructions"} line followed by bare response items
// and {"record_type":"state"} lines.

// GenerateCodex returns a Codex rollout, or with legacy set one in the
// legacy format. As with Generate, the first turns show every kind of tool
// output with payloads over 4096 bytes; the rest are drawn at random.
func GenerateCodex(o Options, legacy bool) []byte {
	x := &codexGen{gen: newGen(o), legacy: legacy}
	x.meta()
	x.userMessage(x.prose(x.r.IntN(400) + 20))
	for v := range numCodexOutputs {
		x.turn(codexOutput(v), true)
	}
	if !legacy {
		x.compacted(true)
	}
	for x.n < o.Entries {
		switch x.weighted([]int{10, 2, 1, 1}) {
		case 0:
			x.turn(codexOutput(x.r.IntN(int(numCodexOutputs))), false)
		case 1:
			x.userMessage(x.prose(x.r.IntN(400) + 10))
		case 2:
			x.assistantMessage()
		case 3:
			if legacy {
				x.put(obj{{"record_type", "state"}})
			} else {
				x.compacted(false)
			}
		}
	}
	return x.buf.Bytes()
}

// codexGen builds the lines of one rollout.
type codexGen struct {
	*gen
	legacy bool
}

// codexOutput is a shape of a tool call's output.
type codexOutput int

const (
	outJSON   codexOutput = iota // shell: JSON with output and metadata, inside a string
	outPlain                     // a plain string, as newer shells write it
	outBlocks                    // an array of input_text and input_image items
	outCustom                    // custom_tool_call_output of apply_patch
	outFailed                    // a command that failed, stderr and all
	numCodexOutputs
)

func (x *codexGen) put(l obj) {
	x.write(l)
	x.n++
}

// item writes a response item: bare in a legacy rollout, else wrapped.
func (x *codexGen) item(payload obj) {
	if x.legacy {
		x.put(payload)
		return
	}
	x.event("response_item", payload)
}

// event writes a {"timestamp","type","payload"} line.
func (x *codexGen) event(typ string, payload obj) {
	ts, _ := x.tick()
	x.put(obj{{"timestamp", ts}, {"type", typ}, {"payload", payload}})
}

const codexInstructions = "You are Codex, a coding agent based on GPT-5. You and the user share the same workspace and collaborate to achieve the user's goals.\n\n## General\n\n- Prefer `rg` over `grep`.\n"

func (x *codexGen) meta() {
	ts, _ := x.tick()
	id := x.uuid()
	if x.legacy {
		x.put(obj{{"id", id}, {"timestamp", ts}, {"instructions", codexInstructions},
			{"git", obj{{"commit_hash", x.hex(40)}, {"branch", "main"}, {"repository_url", "git@example.com:dev/projet.git"}}}})
		x.put(obj{{"record_type", "state"}})
		return
	}
	x.event("session_meta", obj{{"id", id}, {"timestamp", ts}, {"cwd", claudeCwd}, {"originator", "codex_cli_rs"},
		{"cli_version", "0.46.0"}, {"instructions", nil}, {"source", "cli"}, {"model_provider", "openai"},
		{"git", obj{{"commit_hash", x.hex(40)}, {"branch", "main"}}}})
	x.item(obj{{"type", "message"}, {"role", "user"}, {"content", arr{obj{{"type", "input_text"},
		{"text", "<environment_context>\n  <cwd>" + claudeCwd + "</cwd>\n  <approval_policy>on-request</approval_policy>\n  <sandbox_mode>workspace-write</sandbox_mode>\n  <network_access>restricted</network_access>\n  <shell>bash</shell>\n</environment_context>"}}}}})
}

func (x *codexGen) userMessage(text string) {
	x.item(obj{{"type", "message"}, {"role", "user"}, {"content", arr{obj{{"type", "input_text"}, {"text", text}}}}})
	if !x.legacy {
		x.event("event_msg", obj{{"type", "user_message"}, {"message", text}, {"images", arr{}}})
		x.event("turn_context", obj{{"cwd", claudeCwd}, {"approval_policy", "on-request"},
			{"sandbox_policy", obj{{"mode", "workspace-write"}, {"network_access", false}, {"exclude_tmpdir_env_var", false}, {"exclude_slash_tmp", false}}},
			{"model", "gpt-5-codex"}, {"effort", "medium"}, {"summary", "auto"}})
	}
}

func (x *codexGen) assistantMessage() {
	text := x.prose(x.r.IntN(800) + 20)
	x.item(obj{{"type", "message"}, {"role", "assistant"}, {"content", arr{obj{{"type", "output_text"}, {"text", text}}}}})
	if !x.legacy {
		x.event("event_msg", obj{{"type", "agent_message"}, {"message", text}})
		x.event("event_msg", obj{{"type", "token_count"}, {"info", obj{{"total_token_usage", obj{{"input_tokens", x.r.IntN(90000)},
			{"cached_input_tokens", x.r.IntN(80000)}, {"output_tokens", x.r.IntN(9000)}, {"reasoning_output_tokens", x.r.IntN(4000)},
			{"total_tokens", x.r.IntN(100000)}}}, {"model_context_window", 272000}}}, {"rate_limits", nil}})
	}
}

// reasoning is a reasoning item: a short summary and encrypted content.
func (x *codexGen) reasoning() obj {
	return obj{{"type", "reasoning"}, {"summary", arr{obj{{"type", "summary_text"}, {"text", "**Inspecting " + x.word() + "**"}}}},
		{"content", nil}, {"encrypted_content", "gAAAAAB" + base64.URLEncoding.EncodeToString([]byte(x.hex(200+x.r.IntN(800))))}}
}

// turn writes a tool call, the command's events and its output in shape
// v; first makes the output large.
func (x *codexGen) turn(v codexOutput, first bool) {
	size := x.size()
	if first {
		size = max(size, 4400+x.r.IntN(2000))
	}
	if x.r.IntN(2) == 0 {
		x.item(x.reasoning())
	}
	c := x.call(v, size)
	x.item(c.call)
	if c.end != nil && !x.legacy {
		x.event("event_msg", c.end)
	}
	x.item(c.output)
}

// codexCall is one tool call: the call item, the exec_command_end event
// of a command (nil for other tools), and the output item.
type codexCall struct{ call, end, output obj }

// call returns a call whose output has shape v and about size bytes.
func (x *codexGen) call(v codexOutput, size int) codexCall {
	id := "call_" + x.alnum(24)
	cmd := x.command()
	args := string(js.line(obj{{"command", arr{"bash", "-lc", cmd}}, {"workdir", claudeCwd}, {"timeout_ms", 120000}}))
	call := obj{{"type", "function_call"}, {"name", "shell"}, {"arguments", args}, {"call_id", id}}
	out := x.log(size)
	exitCode := 0
	stderr := ""
	switch v {
	case outBlocks:
		data, _ := x.image(min(size, 6000))
		call = obj{{"type", "function_call"}, {"name", "view_image"}, {"arguments", `{"path":"` + x.path() + `.png"}`}, {"call_id", id}}
		return codexCall{call: call, output: x.output("function_call_output", id, arr{
			obj{{"type", "input_text"}, {"text", x.prose(size)}},
			obj{{"type", "input_image"}, {"image_url", "data:image/png;base64," + base64.StdEncoding.EncodeToString(data)}},
		})}
	case outCustom:
		patch := "*** Begin Patch\n*** Update File: " + x.path() + "\n@@\n-" + x.codeLine() + "\n+" + x.codeLine() + "\n*** End Patch\n"
		call = obj{{"type", "custom_tool_call"}, {"status", "completed"}, {"call_id", id}, {"name", "apply_patch"}, {"input", patch}}
		return codexCall{call: call, output: x.output("custom_tool_call_output", id, codexJSONOutput("Success. Updated the following files:\nM "+x.path()+"\n"+out, 0, 0.1))}
	case outFailed:
		exitCode = 1 + x.r.IntN(2)
		stderr = x.log(size)
	}
	duration := float64(x.r.IntN(90000)) / 1000
	aggregated := out
	if stderr != "" {
		aggregated += "\n" + stderr
	}
	end := obj{{"type", "exec_command_end"}, {"call_id", id}, {"stdout", out}, {"stderr", stderr},
		{"aggregated_output", aggregated}, {"exit_code", exitCode},
		{"duration", obj{{"secs", int(duration)}, {"nanos", x.r.IntN(1e9)}}}, {"formatted_output", aggregated}}
	var output any = codexJSONOutput(aggregated, exitCode, duration)
	if v == outPlain {
		output = fmt.Sprintf("Exit code: %d\nWall time: %.1f seconds\nTotal output lines: %d\nOutput:\n%s", exitCode, duration, strings.Count(aggregated, "\n")+1, aggregated)
	}
	return codexCall{call: call, end: end, output: x.output("function_call_output", id, output)}
}

func (x *codexGen) output(typ, id string, output any) obj {
	return obj{{"type", typ}, {"call_id", id}, {"output", output}}
}

// codexJSONOutput is the output of Codex's shell tool: a JSON object
// with the output and metadata, inside a string.
func codexJSONOutput(out string, exitCode int, duration float64) string {
	return string(js.line(obj{{"output", out}, {"metadata", obj{{"exit_code", exitCode}, {"duration_seconds", duration}}}}))
}

// compacted writes the line that replaces the context with a summary and
// the history kept, tool outputs among them; first makes them large.
func (x *codexGen) compacted(first bool) {
	var history arr
	history = append(history, obj{{"type", "message"}, {"role", "user"}, {"content", arr{obj{{"type", "input_text"}, {"text", x.prose(x.r.IntN(300) + 10)}}}}})
	for _, v := range []codexOutput{outJSON, outBlocks, outPlain} {
		size := x.size()
		if first {
			size = max(size, 4400)
		}
		c := x.call(v, size)
		history = append(history, c.call, c.output)
		if !first {
			break
		}
	}
	x.event("compacted", obj{{"message", "Summary of the conversation so far:\n" + x.prose(x.r.IntN(2000)+200)}, {"replacement_history", history}})
}
