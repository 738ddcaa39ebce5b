package format

import (
	"strings"

	"github.com/transcript-tool/transcript-tool/transcript"
)

// qwen is Qwen Code's session format (0.24,
// ~/.qwen/projects/<project>/chats/<session>.jsonl, a subagent's in
// projects/<project>/subagents/<session>/agent-<id>.jsonl): one record a
// line, chained by uuid and parentUuid, of type user, assistant,
// tool_result or system, each with its sessionId and provenance. A
// record's message is a content of Google's Gemini API ({role, parts}),
// as Gemini CLI, which Qwen Code forked, writes it. A tool_result record
// carries a tool's result twice: as the functionResponse parts of its
// message, which Qwen Code sends to the model, and as the responseParts of
// its toolCallResult, beside the resultDisplay shown in the terminal. A
// compression (a system record of subtype chat_compression) keeps, in
// systemPayload.compressedHistory, the contents that replace the
// history sent to the model from then on, resumed sessions included: a
// summary, the files last read embedded whole, and the latest turns,
// tool results and all.
type qwen struct{}

func (qwen) Name() string { return Qwen }

// qwenTypes are the types of Qwen Code's records.
var qwenTypes = map[string]bool{"user": true, "assistant": true, "tool_result": true, "system": true}

// Detect takes a record of a known type that carries a provenance, a
// member Claude Code's records, of the same shape otherwise, do not have.
func (qwen) Detect(entry transcript.Value) bool {
	var e [3]transcript.Value
	entry.Fields(e[:], "provenance", "sessionId", "uuid")
	return e[0].Kind() == transcript.String && e[1].Kind() == transcript.String && e[2].Kind() == transcript.String &&
		knownType(entry, "type", qwenTypes)
}

func (qwen) Session(entry transcript.Value) string {
	id, _ := entry.Get("sessionId")
	return id.Text()
}

func (qwen) Knows(entry transcript.Value) bool { return knownType(entry, "type", qwenTypes) }

func (qwen) Sites(entry transcript.Value, threshold int, dst []Site) []Site {
	if entry.Len() < threshold {
		return dst
	}
	var e [5]transcript.Value
	entry.Fields(e[:], "uuid", "timestamp", "message", "toolCallResult", "systemPayload")
	base := Site{Entry: e[0].Text(), CreatedAt: e[1].Text(), ViewTool: "read_file", ViewArg: "file_path"}
	var r [4]transcript.Value
	e[3].Fields(r[:], "callId", "responseParts", "resultDisplay", "error")
	base.ToolCallID = r[0].Text()
	base.Failed = present(r[3]) && string(r[3].Raw()) != "null"
	parts, _ := e[2].Get("parts")
	parts.Elems(func(_ int, p transcript.Value) bool {
		name, _ := Pointer{"functionResponse", "name"}.Resolve(p)
		base.Tool = name.Text()
		return base.Tool == ""
	})
	dst = partSites(parts, Pointer{"message", "parts"}, threshold, base, dst)
	dst = partSites(r[1], Pointer{"toolCallResult", "responseParts"}, threshold, base, dst)
	dst = displaySites(r[2], Pointer{"toolCallResult", "resultDisplay"}, threshold, base, dst)
	dst = compressedSites(e[4], threshold, base, dst)
	return sortSites(dst)
}

// qwenEmbedded heads the text part in which a compression embeds a file
// read before it, whole: "Recently accessed file (full current content
// embedded):\n\n## PATH\n\n```\nCONTENT\n```".
const qwenEmbedded = "Recently accessed file (full current content embedded):\n\n## "

// compressedSites finds the payloads of the contents a compression
// keeps (systemPayload.compressedHistory): those of their parts, as in a
// record's message, and the text parts that embed a file, which are as
// much a read's output as read_file's result was.
func compressedSites(payload transcript.Value, threshold int, base Site, dst []Site) []Site {
	history, _ := payload.Get("compressedHistory")
	at := Pointer{"systemPayload", "compressedHistory"}
	history.Elems(func(i int, content transcript.Value) bool {
		if content.Len() < threshold {
			return true
		}
		parts, _ := content.Get("parts")
		partsAt := at.Index(i).Key("parts")
		dst = partSites(parts, partsAt, threshold, base, dst)
		parts.Elems(func(j int, p transcript.Value) bool {
			text, _ := p.Get("text")
			if text.Kind() != transcript.String || text.Len() < threshold {
				return true
			}
			s := text.Text()
			if !strings.HasPrefix(s, qwenEmbedded) {
				return true
			}
			file, _, _ := strings.Cut(s[len(qwenEmbedded):], "\n")
			site := base
			site.Path, site.Value, site.Shape = partsAt.Index(j).Key("text"), text, ShapeToolResult
			site.Tool, site.Input = "read_file", file
			dst = append(dst, site)
			return true
		})
		return true
	})
	return dst
}

// Calls finds the functionCall parts of the model's messages.
func (qwen) Calls(entry transcript.Value, fn func(Call)) {
	var e [2]transcript.Value
	entry.Fields(e[:], "type", "message")
	if !e[0].IsString("assistant") {
		return
	}
	parts, _ := e[1].Get("parts")
	partCalls(parts, fn)
}

// Requests finds the text of the user's records; the context and
// notifications Qwen Code records as a user's carry another provenance.
func (qwen) Requests(entry transcript.Value, fn func(Request)) {
	var e [3]transcript.Value
	entry.Fields(e[:], "type", "provenance", "message")
	if !e[0].IsString("user") || !e[1].IsString("real_user") {
		return
	}
	parts, _ := e[2].Get("parts")
	request(partTexts(parts), false, fn)
}
