package format

import (
	"strings"

	"github.com/transcript-tool/transcript-tool/transcript"
)

// gemini is Gemini CLI's session format (0.40 on,
// ~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl, a subagent's
// in chats/<parent session>/<id>.jsonl): a header line of metadata
// ({sessionId, projectHash, startTime, lastUpdated, kind}), then a line
// per message record ({id, type, content, toolCalls}), written again
// under the same id as the message grows, and edit lines that its reader
// applies in order: {"$set": {...}} merges into the metadata, a "messages"
// member replacing every message so far, and {"$rewindTo": id} drops
// that message and the ones after it. Each line stands alone, an edit
// line's messages included: the tool finds the sites of a $set as of a
// message line, and never drops, reorders or merges a line that a rewind
// made dead (the reader needs them all to reach the same state).
//
// A tool's result is kept twice: in the toolCalls[].result of the
// model's message, as the parts the agent sends back (a functionResponse
// whose response.output holds the text, images as inlineData parts), and
// again as the content of the user message that carries them to the
// model; resultDisplay holds what the terminal shows: the output text, a
// file's diff, or a shell's screen as lines of styled tokens.
type gemini struct{}

func (gemini) Name() string { return Gemini }

// geminiTypes are the types of Gemini CLI's message records.
var geminiTypes = map[string]bool{"user": true, "gemini": true, "info": true, "error": true, "warning": true}

func (gemini) Detect(entry transcript.Value) bool {
	var e [5]transcript.Value
	entry.Fields(e[:], "sessionId", "projectHash", "$set", "$rewindTo", "type")
	return e[0].Kind() == transcript.String && e[1].Kind() == transcript.String ||
		e[2].Kind() == transcript.Object || e[3].Kind() == transcript.String || e[4].IsString("gemini")
}

func (gemini) Session(entry transcript.Value) string {
	var e [2]transcript.Value
	entry.Fields(e[:], "sessionId", "projectHash")
	if e[1].Kind() != transcript.String {
		return ""
	}
	return e[0].Text()
}

func (g gemini) Knows(entry transcript.Value) bool {
	if _, ok := entry.Get("id"); ok {
		return knownType(entry, "type", geminiTypes)
	}
	return g.Detect(entry)
}

func (gemini) Sites(entry transcript.Value, threshold int, dst []Site) []Site {
	n := len(dst)
	geminiMessages(entry, func(msg transcript.Value, at Pointer) {
		dst = geminiMessage(msg, at, threshold, dst)
	})
	sortSites(dst[n:])
	return dst
}

// geminiMessages calls fn for the message records of entry, each with its
// path: the entry itself, or those of the "messages" of a $set or of a
// header.
func geminiMessages(entry transcript.Value, fn func(msg transcript.Value, at Pointer)) {
	var e [3]transcript.Value
	entry.Fields(e[:], "id", "$set", "messages")
	switch {
	case e[0].Kind() == transcript.String:
		fn(entry, nil)
	case e[1].Kind() == transcript.Object:
		msgs, _ := e[1].Get("messages")
		msgs.Elems(func(i int, m transcript.Value) bool {
			fn(m, Pointer{"$set", "messages"}.Index(i))
			return true
		})
	case e[2].Kind() == transcript.Array:
		e[2].Elems(func(i int, m transcript.Value) bool {
			fn(m, Pointer{"messages"}.Index(i))
			return true
		})
	}
}

// geminiMessage finds the payloads of a message record at path at: the
// tool results and images of its content, and the result and display of
// each of its tool calls.
func geminiMessage(msg transcript.Value, at Pointer, threshold int, dst []Site) []Site {
	if msg.Kind() != transcript.Object || msg.Len() < threshold {
		return dst
	}
	var m [4]transcript.Value
	msg.Fields(m[:], "id", "timestamp", "content", "toolCalls")
	base := Site{Entry: m[0].Text(), CreatedAt: m[1].Text(), ViewTool: "read_file", ViewArg: "file_path"}
	if m[2].Kind() == transcript.Array {
		dst = partSites(m[2], at.Key("content"), threshold, base, dst)
	}
	m[3].Elems(func(i int, call transcript.Value) bool {
		if call.Len() < threshold || call.Kind() != transcript.Object {
			return true
		}
		var c [6]transcript.Value
		call.Fields(c[:], "id", "name", "args", "status", "result", "resultDisplay")
		s := base
		s.ToolCallID, s.Tool = c[0].Text(), c[1].Text()
		s.Input = Call{Input: c[2]}.MainArgument()
		s.Failed = c[3].IsString("error")
		here := at.Key("toolCalls").Index(i)
		switch r := c[4]; r.Kind() {
		case transcript.String:
			t := s
			t.Path, t.Shape = here.Key("result"), ShapeToolResult
			dst = memberSites(call, "result", threshold, t, dst)
		case transcript.Array:
			dst = partSites(r, here.Key("result"), threshold, s, dst)
		case transcript.Object:
			dst = partSite(r, here.Key("result"), threshold, s, dst)
		}
		dst = displaySites(c[5], here.Key("resultDisplay"), threshold, s, dst)
		return true
	})
	return dst
}

// displaySites finds the payloads of a tool's resultDisplay at path at,
// what the terminal shows of its result: a string whole, a shell's
// screen (lines of styled tokens, which the terminal renders line by
// line) whole, the strings of an object (a file's diff and contents, a
// subagent's progress).
func displaySites(d transcript.Value, at Pointer, threshold int, base Site, dst []Site) []Site {
	if d.Len() < threshold {
		return dst
	}
	s := base
	s.Path, s.Value = at, d
	switch d.Kind() {
	case transcript.String:
		return append(dst, s)
	case transcript.Array:
		s.Shape = ShapeLines
		return append(dst, s)
	case transcript.Object:
		return fieldSites(d, at, threshold, base, 2, false, dst)
	}
	return dst
}

// partSites finds the payloads of an array of parts of Google's Gemini
// API (Gemini CLI's and Qwen Code's content and tool results).
func partSites(parts transcript.Value, at Pointer, threshold int, base Site, dst []Site) []Site {
	parts.Elems(func(i int, p transcript.Value) bool {
		dst = partSite(p, at.Index(i), threshold, base, dst)
		return true
	})
	return dst
}

// partSite finds the payloads of one part at path at: a functionResponse's
// output or error text, the images it carries, and an inlineData part,
// which becomes a text part ({"text": ...}) naming the artifact: the
// Gemini API takes no part of any other shape.
func partSite(p transcript.Value, at Pointer, threshold int, base Site, dst []Site) []Site {
	if p.Len() < threshold || p.Kind() != transcript.Object {
		return dst
	}
	var f [2]transcript.Value
	p.Fields(f[:], "functionResponse", "inlineData")
	if fr := f[0]; fr.Kind() == transcript.Object {
		var r [4]transcript.Value
		fr.Fields(r[:], "id", "name", "response", "parts")
		if id := r[0].Text(); id != "" {
			base.ToolCallID = id
		}
		if name := r[1].Text(); name != "" {
			base.Tool = name
		}
		resp := at.Key("functionResponse").Key("response")
		for _, key := range []string{"output", "error"} {
			s := base
			s.Path, s.Shape = resp.Key(key), ShapeToolResult
			if key == "error" {
				s.Failed = true
			}
			dst = memberSites(r[2], key, threshold, s, dst)
		}
		// Audio and video a read_file tool read, which the agent sends
		// on the next turn.
		binary, _ := r[2].Get("__binary_injection__")
		dst = partSites(binary, resp.Key("__binary_injection__"), threshold, base, dst)
		return partSites(r[3], at.Key("functionResponse").Key("parts"), threshold, base, dst)
	}
	if data, _ := f[1].Get("data"); data.Kind() == transcript.String && data.Len() >= threshold {
		s := base
		s.Path, s.Value, s.Shape = at, p, ShapeTextPart
		dst = append(dst, s)
	}
	return dst
}

// Calls finds the toolCalls of the model's messages, and the
// functionCall parts of their content.
func (gemini) Calls(entry transcript.Value, fn func(Call)) {
	geminiMessages(entry, func(msg transcript.Value, _ Pointer) {
		var m [3]transcript.Value
		msg.Fields(m[:], "type", "toolCalls", "content")
		if !m[0].IsString("gemini") {
			return
		}
		m[1].Elems(func(_ int, c transcript.Value) bool {
			var f [3]transcript.Value
			c.Fields(f[:], "id", "name", "args")
			fn(Call{ID: f[0].Text(), Name: f[1].Text(), Input: f[2]})
			return true
		})
		partCalls(m[2], fn)
	})
}

// partCalls calls fn for the functionCall parts of an array of parts.
func partCalls(parts transcript.Value, fn func(Call)) {
	parts.Elems(func(_ int, p transcript.Value) bool {
		if fc, ok := p.Get("functionCall"); ok {
			var f [3]transcript.Value
			fc.Fields(f[:], "id", "name", "args")
			fn(Call{ID: f[0].Text(), Name: f[1].Text(), Input: f[2]})
		}
		return true
	})
}

// Requests finds the text of user message lines; the messages a $set
// repeats are not requests again, and the context the agent writes as a
// user message of its own (<session_context>, <hook_context>) is none.
func (gemini) Requests(entry transcript.Value, fn func(Request)) {
	var e [3]transcript.Value
	entry.Fields(e[:], "id", "type", "content")
	if e[0].Kind() != transcript.String || !e[1].IsString("user") {
		return
	}
	text := partTexts(e[2])
	if t := strings.TrimSpace(text); strings.HasPrefix(t, "<session_context>") || strings.HasPrefix(t, "<hook_context>") {
		return
	}
	request(text, false, fn)
}

// partTexts returns the text of content of parts: a string, or the "text"
// members of its parts, one per line.
func partTexts(content transcript.Value) string {
	if content.Kind() == transcript.String {
		return content.Text()
	}
	var parts []string
	content.Elems(func(_ int, p transcript.Value) bool {
		if t, ok := p.Get("text"); ok && t.Kind() == transcript.String {
			if thought, _ := p.Get("thought"); !isTrueValue(thought) {
				parts = append(parts, t.Text())
			}
		}
		return true
	})
	return strings.Join(parts, "\n")
}
