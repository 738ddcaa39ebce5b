package sessiongen

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// Claude Code transcripts (~/.claude/projects/<project>/<session>.jsonl and
// the subagent files beside them): user, assistant, progress and system
// lines that share an envelope of session fields, and summary,
// file-history-snapshot and queue-operation lines without it. A tool's
// result sits twice on its user line: as a tool_result block in
// message.content, as the model saw it, and as the tool's structured
// toolUseResult, often holding the same text.

// GenerateClaude returns a Claude Code transcript: a main session, or with
// subagent set the file of a subagent (every line isSidechain with an
// agentId, the first one the task's prompt). As with Generate, the first
// turns call every tool in every variant with payloads over 4096 bytes;
// the rest are drawn at random.
func GenerateClaude(o Options, subagent bool) []byte {
	c := newClaude(newGen(o), subagent)
	if !subagent {
		c.put(c.snapshot())
	}
	c.put(c.prompt(c.prose(c.r.IntN(600) + 40)))
	tools := claudeTools
	if subagent {
		tools = claudeSubagentTools
	}
	for _, tool := range tools {
		c.toolTurn(c.calls(tool, true), false, true)
	}
	// Parallel calls answered on one line.
	c.toolTurn(append(c.calls("Bash", true)[:2], c.calls("Grep", true)...), true, true)
	// Small results, in every shape of toolUseResult.
	var small []claudeCall
	for _, tool := range []string{"Read", "Bash", "Grep", "Task", "mcp__github__get_file_contents"} {
		if subagent && tool == "Task" {
			continue
		}
		small = append(small, c.call(tool, claudeVariants[tool][0], 100+c.r.IntN(2000)))
	}
	c.toolTurn(small, false, false)
	c.put(c.userImage(3600))
	c.put(c.bashProgressLine(c.log(4096+c.r.IntN(4096)), c.toolCallID()))
	c.put(c.system())
	if !subagent {
		c.put(c.queueOperation())
	}
	for c.n < o.Entries {
		switch c.weighted([]int{10, 2, 1, 2, 1, 1}) {
		case 0:
			calls := c.calls(tools[c.r.IntN(len(tools))], false)
			c.toolTurn(calls, len(calls) > 1 && c.r.IntN(4) == 0, false)
		case 1:
			c.put(c.prompt(c.prose(c.r.IntN(400) + 10)))
		case 2:
			c.put(c.userImage(min(c.size(), 6000)))
		case 3:
			c.put(c.assistant(obj{{"type", "text"}, {"text", c.prose(c.r.IntN(600) + 20)}}, "end_turn"))
		case 4:
			c.put(c.system())
		case 5:
			if subagent {
				c.put(c.system())
			} else {
				c.put(c.queueOperation())
			}
		}
	}
	return c.buf.Bytes()
}

// claude builds the lines of one Claude Code transcript.
type claude struct {
	*gen
	session string
	agentID string // set in a subagent's file
	last    string // uuid of the last line, the next one's parentUuid
}

func newClaude(g *gen, subagent bool) *claude {
	c := &claude{gen: g, session: g.uuid()}
	if subagent {
		c.agentID = g.hex(7)
	}
	return c
}

const (
	claudeCwd     = "/home/dev/src/projet-été"
	claudeVersion = "2.1.6"
	claudeModel   = "claude-opus-4-5-20251101"
)

// put writes a line and counts it.
func (c *claude) put(l obj) {
	c.write(l)
	c.n++
}

// line returns a line of the session: the envelope, then body, uuid and
// timestamp, then tail, in the order Claude Code writes them.
func (c *claude) line(body, tail obj) obj {
	var parent any
	if c.last != "" {
		parent = c.last
	}
	l := obj{{"parentUuid", parent}, {"isSidechain", c.agentID != ""}, {"userType", "external"},
		{"cwd", claudeCwd}, {"sessionId", c.session}, {"version", claudeVersion}, {"gitBranch", "main"}}
	if c.agentID != "" {
		l = append(l, member{"agentId", c.agentID})
	}
	l = append(l, member{"slug", "sleepy-rolling-otter"})
	l = append(l, body...)
	c.last = c.uuid()
	ts, _ := c.tick()
	l = append(l, member{"uuid", c.last}, member{"timestamp", ts})
	return append(l, tail...)
}

func (c *claude) snapshot() obj {
	id := c.uuid()
	ts, _ := c.tick()
	return obj{{"type", "file-history-snapshot"}, {"messageId", id},
		{"snapshot", obj{{"messageId", id}, {"trackedFileBackups", obj{}}, {"timestamp", ts}}}, {"isSnapshotUpdate", false}}
}

func (c *claude) summary() obj {
	return obj{{"type", "summary"}, {"summary", "Refactor the artifact store: " + c.word() + " " + c.word()}, {"leafUuid", c.uuid()}}
}

func (c *claude) queueOperation() obj {
	ts, _ := c.tick()
	return obj{{"type", "queue-operation"}, {"operation", "enqueue"}, {"timestamp", ts}, {"sessionId", c.session}, {"content", c.prose(c.r.IntN(200) + 10)}}
}

func (c *claude) system() obj {
	return c.line(obj{{"type", "system"}, {"subtype", "turn_duration"}, {"durationMs", c.r.IntN(600000)}}, obj{{"isMeta", false}})
}

// prompt is a user line whose content is a plain string.
func (c *claude) prompt(text string) obj {
	return c.line(obj{{"type", "user"}, {"message", obj{{"role", "user"}, {"content", text}}}}, nil)
}

// user is a user line with content blocks.
func (c *claude) user(blocks ...any) obj {
	return c.line(obj{{"type", "user"}, {"message", obj{{"role", "user"}, {"content", arr(blocks)}}}}, nil)
}

// userImage is a user line with a screenshot of about n bytes.
func (c *claude) userImage(n int) obj {
	img := claudeImage(c.png(n))
	note := text(c.prose(c.r.IntN(200) + 10))
	if c.r.IntN(2) == 0 {
		return c.user(img, note)
	}
	return c.user(note, img)
}

// png returns the base64 of a PNG of about n bytes.
func (c *claude) png(n int) string {
	data, _ := c.image(n)
	return base64.StdEncoding.EncodeToString(data)
}

func claudeImage(b64 string) obj {
	return obj{{"type", "image"}, {"source", obj{{"type", "base64"}, {"media_type", "image/png"}, {"data", b64}}}}
}

// message is an assistant message holding one content block, as Claude
// Code writes one line per block of a streamed response.
func (c *claude) message(block obj, stop any) obj {
	in, out := c.r.IntN(20000), c.r.IntN(2000)
	return obj{{"model", claudeModel}, {"id", "msg_01" + c.alnum(22)}, {"type", "message"}, {"role", "assistant"},
		{"content", arr{block}}, {"stop_reason", stop}, {"stop_sequence", nil},
		{"usage", obj{{"input_tokens", in}, {"cache_creation_input_tokens", c.r.IntN(5000)}, {"cache_read_input_tokens", c.r.IntN(90000)},
			{"cache_creation", obj{{"ephemeral_5m_input_tokens", 0}, {"ephemeral_1h_input_tokens", c.r.IntN(5000)}}},
			{"output_tokens", out}, {"service_tier", "standard"}}}}
}

func (c *claude) assistant(block obj, stop any) obj {
	return c.line(obj{{"message", c.message(block, stop)}, {"requestId", "req_011CV" + c.alnum(18)}, {"type", "assistant"}}, nil)
}

func (g *gen) alnum(n int) string {
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = alnum[g.r.IntN(len(alnum))]
	}
	return string(b)
}

// claudeCall is one tool call and its result.
type claudeCall struct {
	id, tool string
	input    obj
	content  any // the tool_result block's content
	isError  bool
	result   any // the line's toolUseResult; nil leaves it out
}

// claudeTools are the tools a session calls, claudeSubagentTools those a
// subagent calls (it starts no subagent of its own), and claudeVariants
// the shapes of each one's result.
var (
	claudeTools         = []string{"Read", "Bash", "Edit", "Write", "Grep", "Glob", "Task", "WebFetch", "mcp__github__get_file_contents"}
	claudeSubagentTools = []string{"Read", "Bash", "Edit", "Write", "Grep", "Glob", "WebFetch", "mcp__github__get_file_contents"}
	claudeVariants      = map[string][]string{
		"Read":                           {"text", "image", "missing"},
		"Bash":                           {"stdout", "stderr", "failed", "persisted"},
		"Edit":                           {"patch"},
		"Write":                          {"create"},
		"Grep":                           {"content"},
		"Glob":                           {"files"},
		"Task":                           {"report"},
		"WebFetch":                       {"page"},
		"mcp__github__get_file_contents": {"blocks"},
	}
)

// calls returns calls of tool: in the first round one of each variant
// with a large payload, else one or two drawn at random.
func (c *claude) calls(tool string, first bool) []claudeCall {
	variants := claudeVariants[tool]
	var calls []claudeCall
	if first {
		for _, v := range variants {
			calls = append(calls, c.call(tool, v, 4200+c.r.IntN(800)))
		}
		return calls
	}
	for range 1 + c.r.IntN(2) {
		calls = append(calls, c.call(tool, variants[c.r.IntN(len(variants))], c.size()))
	}
	return calls
}

// toolTurn writes the assistant lines making calls, progress lines, and
// the results: each on its line, or with merge all on one line. first
// makes a subagent's progress show every shape.
func (c *claude) toolTurn(calls []claudeCall, merge, first bool) {
	if c.r.IntN(3) == 0 {
		c.put(c.assistant(obj{{"type", "thinking"}, {"thinking", c.prose(c.r.IntN(800) + 40)}, {"signature", c.alnum(120)}}, nil))
	}
	var source string
	for _, cl := range calls {
		c.put(c.assistant(obj{{"type", "tool_use"}, {"id", cl.id}, {"name", cl.tool}, {"input", cl.input}}, "tool_use"))
		source = c.last
	}
	for _, cl := range calls {
		switch {
		case cl.tool == "Bash" && c.r.IntN(3) == 0:
			out := cl.input[0].v.(string) + "\n" + c.log(max(c.size(), 4096))
			c.put(c.bashProgressLine(out, cl.id))
		case cl.tool == "Task":
			c.agentProgress(cl.id, first)
		}
	}
	if merge {
		c.put(c.results(calls, source))
		return
	}
	for _, cl := range calls {
		c.put(c.results([]claudeCall{cl}, source))
	}
}

// results is the user line answering calls: one tool_result block each,
// and the toolUseResult of the first.
func (c *claude) results(calls []claudeCall, source string) obj {
	blocks := make(arr, len(calls))
	for i, cl := range calls {
		blocks[i] = c.resultBlock(cl)
	}
	var tail obj
	if calls[0].result != nil {
		tail = obj{{"toolUseResult", calls[0].result}}
	}
	tail = append(tail, member{"sourceToolAssistantUUID", source})
	return c.line(obj{{"type", "user"}, {"message", obj{{"role", "user"}, {"content", blocks}}}}, tail)
}

// resultBlock returns the tool_result block of cl, its keys in one of the
// orders Claude Code writes them in.
func (c *claude) resultBlock(cl claudeCall) obj {
	id, typ, content := member{"tool_use_id", cl.id}, member{"type", "tool_result"}, member{"content", cl.content}
	isError := member{"is_error", cl.isError}
	var b obj
	switch c.r.IntN(3) {
	case 0:
		b = obj{id, typ, content}
	case 1:
		return obj{typ, content, isError, id}
	default:
		b = obj{typ, id, content}
	}
	if cl.isError || c.r.IntN(4) == 0 {
		b = append(b, isError)
	}
	return b
}

// call returns a call of tool in variant, its payload about size bytes.
func (c *claude) call(tool, variant string, size int) claudeCall {
	cl := claudeCall{id: c.toolCallID(), tool: tool}
	path := c.path()
	switch tool {
	case "Read":
		cl.input = obj{{"file_path", path}}
		switch variant {
		case "image":
			data, mime := c.image(min(size, 6000))
			b64 := base64.StdEncoding.EncodeToString(data)
			cl.input = obj{{"file_path", path + ".png"}}
			cl.content = arr{claudeImage(b64)}
			side := c.r.IntN(2000) + 100
			cl.result = obj{{"type", "image"}, {"file", obj{{"base64", b64}, {"type", mime}, {"originalSize", len(data)},
				{"dimensions", obj{{"originalWidth", side}, {"originalHeight", side}, {"displayWidth", side}, {"displayHeight", side}}}}}}
		case "missing":
			cl.content, cl.isError = "<tool_use_error>File does not exist.</tool_use_error>", true
			cl.result = "Error: File does not exist."
		default:
			body := c.code(size)
			n := strings.Count(body, "\n") + 1
			cl.content = numbered(body, 1)
			cl.result = obj{{"type", "text"}, {"file", obj{{"filePath", path}, {"content", body}, {"numLines", n}, {"startLine", 1}, {"totalLines", n}}}}
		}
	case "Bash":
		cmd := c.command()
		cl.input = obj{{"command", cmd}, {"description", "Run " + c.word() + " " + c.word()}}
		out := c.log(size)
		bash := func(stdout, stderr string) obj {
			return obj{{"stdout", stdout}, {"stderr", stderr}, {"interrupted", false}, {"isImage", false}}
		}
		switch variant {
		case "stderr":
			stderr := c.log(size)
			cl.content, cl.result = out+"\n"+stderr, bash(out, stderr)
		case "failed":
			cl.content, cl.isError = "Exit code 1\n"+out, true
			cl.result = "Error: Exit code 1\n" + out
		case "persisted":
			cl.content = persistedOutput(c.session, cl.id, out)
			cl.result = bash(out, "")
		default:
			cl.content, cl.result = out, bash(out, "")
		}
	case "Edit":
		orig := c.code(size)
		cut := strings.Index(orig, "\n") + 1
		old, neu := orig[:cut], c.code(c.r.IntN(300)+20)+"\n"
		cl.input = obj{{"file_path", path}, {"old_string", old}, {"new_string", neu}}
		cl.content = "The file " + path + " has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n" + numbered(neu, 1)
		var lines arr
		for _, l := range strings.Split(strings.TrimSuffix(old, "\n"), "\n") {
			lines = append(lines, "-"+l)
		}
		for _, l := range strings.Split(strings.TrimSuffix(neu, "\n"), "\n") {
			lines = append(lines, "+"+l)
		}
		cl.result = obj{{"filePath", path}, {"oldString", old}, {"newString", neu}, {"originalFile", orig},
			{"structuredPatch", arr{obj{{"oldStart", 1}, {"oldLines", 1}, {"newStart", 1}, {"newLines", len(lines) - 1}, {"lines", lines}}}},
			{"userModified", false}, {"replaceAll", false}}
	case "Write":
		body := c.code(size)
		cl.input = obj{{"file_path", path}, {"content", body}}
		cl.content = "File created successfully at: " + path
		cl.result = obj{{"type", "create"}, {"filePath", path}, {"content", body}, {"structuredPatch", arr{}}, {"originalFile", nil}}
	case "Grep":
		found := c.log(size)
		cl.input = obj{{"pattern", c.word()}, {"output_mode", "content"}, {"-n", true}}
		cl.content = found
		cl.result = obj{{"mode", "content"}, {"numFiles", 0}, {"filenames", arr{}}, {"content", found}, {"numLines", strings.Count(found, "\n") + 1}}
	case "Glob":
		var files arr
		var list strings.Builder
		for list.Len() < size {
			p := c.path()
			files = append(files, p)
			list.WriteString(p + "\n")
		}
		cl.input = obj{{"pattern", "**/*.go"}}
		cl.content = strings.TrimSuffix(list.String(), "\n")
		cl.result = obj{{"filenames", files}, {"durationMs", c.r.IntN(900)}, {"numFiles", len(files)}, {"truncated", false}}
	case "Task":
		prompt := c.prose(c.r.IntN(600) + 100)
		report := c.prose(size)
		cl.input = obj{{"description", "Explore the " + c.word() + " code"}, {"prompt", prompt}, {"subagent_type", "Explore"}}
		cl.content = arr{text(report)}
		cl.result = obj{{"status", "completed"}, {"prompt", prompt}, {"agentId", c.hex(7)}, {"content", arr{text(report)}},
			{"totalDurationMs", c.r.IntN(300000)}, {"totalTokens", c.r.IntN(90000)}, {"totalToolUseCount", c.r.IntN(40)},
			{"usage", obj{{"input_tokens", c.r.IntN(100)}, {"output_tokens", c.r.IntN(3000)}, {"service_tier", "standard"}}}}
	case "WebFetch":
		page := c.prose(size)
		url := "https://example.com/docs/" + c.word() + "?q=" + c.hex(6)
		cl.input = obj{{"url", url}, {"prompt", "Summarize the page"}}
		cl.content = page
		cl.result = obj{{"bytes", 3 * len(page)}, {"code", 200}, {"codeText", "OK"}, {"result", page}, {"durationMs", c.r.IntN(9000)}, {"url", url}}
	default: // an MCP tool: its result is a list of content blocks
		body := c.code(size)
		cl.input = obj{{"owner", "dev"}, {"repo", "projet"}, {"path", path}}
		cl.content = arr{text(body)}
		cl.result = arr{text(body)}
	}
	return cl
}

// numbered returns text as Claude Code's Read tool shows it: each line
// after its number and an arrow.
func numbered(text string, from int) string {
	var b strings.Builder
	for i, l := range strings.Split(text, "\n") {
		fmt.Fprintf(&b, "%6d→%s\n", from+i, l)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// persistedOutput is what Claude Code puts in a tool_result instead of
// output too large for the context: a preview and the file it saved the
// output to. It is genuine payload text to transcript-tool.
func persistedOutput(session, id, out string) string {
	preview := out[:min(len(out), 2000)]
	return "<persisted-output>\nOutput too large (" + fmt.Sprintf("%.1fKB", float64(len(out))/1024) +
		"). Full output saved to: /home/dev/.claude/projects/-home-dev-src/" + session + "/tool-results/" + id +
		".txt\n\nPreview (first 2KB):\n" + strings.ToValidUTF8(preview, "") + "\n...\n</persisted-output>"
}

// bashProgressLine is a progress line of a running command: its output so
// far, and the last lines of it.
func (c *claude) bashProgressLine(full, parent string) obj {
	lines := strings.Split(full, "\n")
	tail := strings.Join(lines[max(0, len(lines)-5):], "\n")
	data := obj{{"type", "bash_progress"}, {"output", tail}, {"fullOutput", full},
		{"elapsedTimeSeconds", c.r.IntN(120)}, {"totalLines", len(lines)}}
	return c.line(obj{{"type", "progress"}, {"data", data}, {"toolUseID", "bash-progress-" + fmt.Sprint(c.r.IntN(20))}, {"parentToolUseID", parent}}, nil)
}

// agentProgress writes the progress lines of a subagent running for tool
// call parent: its tool calls and their results, some of them large, and
// with first an image and a result made of blocks.
func (c *claude) agentProgress(parent string, first bool) {
	agent := c.hex(7)
	prompt := c.prose(c.r.IntN(300) + 40)
	progress := func(inner obj) obj {
		ts, _ := c.tick()
		data := obj{{"message", append(inner, member{"uuid", c.uuid()}, member{"timestamp", ts})},
			{"normalizedMessages", arr{}}, {"type", "agent_progress"}, {"prompt", prompt}, {"agentId", agent}}
		return c.line(obj{{"type", "progress"}, {"data", data}, {"toolUseID", "agent_msg_01" + c.alnum(22)}, {"parentToolUseID", parent}}, nil)
	}
	n := 1 + c.r.IntN(2)
	if first {
		n = 3
	}
	for i := range n {
		id := c.toolCallID()
		path := c.path()
		c.put(progress(obj{{"type", "assistant"}, {"message", c.message(obj{{"type", "tool_use"}, {"id", id}, {"name", "Read"}, {"input", obj{{"file_path", path}}}}, nil)}}))
		size := c.size()
		if first {
			size = max(size, 4400)
		}
		var content any = numbered(c.code(size), 1)
		switch {
		case first && i == 1:
			content = arr{text("Read image file [image/png]"), claudeImage(c.png(3600))}
		case first && i == 2:
			content = arr{text(c.code(size)), text(c.code(c.r.IntN(200) + 1))}
		}
		block := c.resultBlock(claudeCall{id: id, content: content})
		c.put(progress(obj{{"type", "user"}, {"message", obj{{"role", "user"}, {"content", arr{block}}}}}))
	}
}
