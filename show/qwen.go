package show

import (
	"github.com/transcript-tool/transcript-tool/format"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// qwen shows Qwen Code sessions: the user's and the model's records, a
// tool_result record's result by the call it answers, and a system
// record as one line of its subtype.
type qwen struct{}

func (qwen) entry(e *entry) bool {
	var f [5]transcript.Value
	e.root.Fields(f[:], "timestamp", "type", "message", "toolCallResult", "model")
	ts, parts := f[0], get(f[2], "parts")
	switch str(e.root, "type", 40) {
	case "user":
		e.header(ts, "user", user, "", str(e.root, "provenance", 40))
		e.geminiParts(parts, false)
	case "assistant":
		e.header(ts, "assistant", agent, "", flatString(f[4].Text(), 60))
		e.geminiParts(parts, false)
	case "tool_result":
		st, status := result, ""
		if err := get(f[3], "error"); err.Kind() != transcript.Invalid && string(err.Raw()) != "null" {
			st, status = failed, "error"
		}
		name, _ := format.Pointer{"0", "functionResponse", "name"}.Resolve(parts)
		e.header(ts, "tool result", st, "", flatString(name.Text(), 60), status)
		e.geminiParts(parts, true)
	case "system":
		e.header(ts, "system", meta, "", str(e.root, "subtype", 60))
	default:
		return false
	}
	return true
}
