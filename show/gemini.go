package show

import (
	"github.com/transcript-tool/transcript-tool/internal/display"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// gemini shows Gemini CLI sessions: the header, then each message record
// by its type, a model's tool calls followed by their results. A record
// written again as it grows is shown each time it holds something; the
// user messages that only carry results to the model, which the calls
// already showed, are one line. Edit lines are one line each: a $set of
// messages (their records follow), a rewind; a $set of metadata alone
// shows nothing.
type gemini struct{}

func (gemini) entry(e *entry) bool {
	var f [5]transcript.Value
	e.root.Fields(f[:], "sessionId", "projectHash", "$set", "$rewindTo", "id")
	switch {
	case f[0].Kind() == transcript.String && f[1].Kind() == transcript.String:
		e.header(get(e.root, "startTime"), "session", meta, "", str(e.root, "sessionId", 80), e.f.Name(), str(e.root, "kind", 20))
		e.geminiMessages(get(e.root, "messages"))
	case f[2].Kind() == transcript.Object:
		msgs, ok := f[2].Get("messages")
		if !ok {
			return true
		}
		n := 0
		msgs.Elems(func(int, transcript.Value) bool { n++; return true })
		e.header(get(f[2], "lastUpdated"), "messages set", meta, "", display.Plural(n, "message"))
		e.geminiMessages(msgs)
	case f[3].Kind() == transcript.String:
		e.header(transcript.Value{}, "rewind", meta, "", "to "+str(e.root, "$rewindTo", 80))
	case f[4].Kind() == transcript.String:
		e.geminiMessage(e.root)
	default:
		return false
	}
	return true
}

// geminiMessages shows the message records of an array.
func (e *entry) geminiMessages(msgs transcript.Value) {
	msgs.Elems(func(_ int, m transcript.Value) bool {
		e.geminiMessage(m)
		return true
	})
}

// geminiMessage shows one message record by its type.
func (e *entry) geminiMessage(msg transcript.Value) {
	var m [6]transcript.Value
	msg.Fields(m[:], "timestamp", "type", "content", "toolCalls", "thoughts", "model")
	ts, content := m[0], m[2]
	switch typ := str(msg, "type", 40); typ {
	case "user":
		results := 0
		content.Elems(func(_ int, p transcript.Value) bool {
			if _, ok := p.Get("functionResponse"); ok {
				results++
			}
			return true
		})
		if results > 0 {
			e.header(ts, "results to the model", dim, "", display.Plural(results, "call"))
			return
		}
		e.header(ts, "user", user, "")
		e.geminiParts(content, false)
	case "gemini":
		if content.Len() <= 2 && m[3].Len() <= 2 && m[4].Len() <= 2 { // "", [] or none
			return // the record as it began, written again once it holds something
		}
		e.header(ts, "assistant", agent, "", flatString(m[5].Text(), 60))
		m[4].Elems(func(_ int, t transcript.Value) bool {
			e.thinking(get(t, "description"))
			return true
		})
		e.geminiParts(content, false)
		m[3].Elems(func(_ int, c transcript.Value) bool {
			e.call(get(c, "name"), get(c, "args"))
			return true
		})
		m[3].Elems(func(_ int, c transcript.Value) bool {
			st, status := result, str(c, "status", 20)
			if status == "error" || status == "cancelled" {
				st = failed
			}
			e.header(get(c, "timestamp"), "tool result", st, "", str(c, "name", 60), status)
			e.geminiParts(get(c, "result"), true)
			return true
		})
	default: // info, error and warning notes, and types to come
		if typ == "" {
			typ = "message"
		}
		st := meta
		if typ == "error" {
			st = failed
		}
		e.header(ts, typ, st, "")
		e.geminiParts(content, true)
	}
}

// geminiParts shows content of parts of the Gemini API: a string, an
// array of parts, or one part.
func (e *entry) geminiParts(v transcript.Value, short bool) { e.contentOf(v, short, e.geminiPart) }

// geminiPart shows one part: text, a thought, a call, a function's
// response or inline data.
func (e *entry) geminiPart(p transcript.Value, short bool) {
	if e.ref(p) {
		return
	}
	var f [6]transcript.Value
	p.Fields(f[:], "text", "thought", "functionCall", "functionResponse", "inlineData", "fileData")
	switch {
	case f[0].Kind() == transcript.String && string(f[1].Raw()) == "true":
		e.thinking(f[0])
	case f[0].Kind() == transcript.String:
		e.text(f[0], short)
	case f[2].Kind() == transcript.Object:
		e.call(get(f[2], "name"), get(f[2], "args"))
	case f[3].Kind() == transcript.Object:
		resp := get(f[3], "response")
		for _, k := range []string{"output", "error"} {
			if v, ok := resp.Get(k); ok {
				e.geminiParts(v, short)
			}
		}
		e.geminiParts(get(f[3], "parts"), short)
	case f[4].Kind() == transcript.Object:
		data := get(f[4], "data")
		if e.ref(data) {
			return
		}
		size := ""
		if data.Kind() == transcript.String {
			size = display.Plural(base64Size(data.Raw()[1:data.Len()-1]), "byte")
		}
		e.item(dim, "["+join(str(f[4], "mimeType", 40), size)+"]")
	case f[5].Kind() == transcript.Object:
		e.item(dim, "[file "+str(f[5], "fileUri", 80)+"]")
	default:
		e.item(dim, "[part]")
	}
}
