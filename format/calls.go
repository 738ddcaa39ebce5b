package format

import (
	"bytes"
	"strings"

	"github.com/transcript-tool/transcript-tool/internal/display"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// Call is one tool call of an entry, as its format records it.
type Call struct {
	ID   string
	Name string
	// Input is the call's arguments: an object, a string holding the
	// JSON of one (Codex's function_call, chat's function.arguments), or
	// any other value (a custom tool's free-form input).
	Input transcript.Value
	// Relayed is set for a call that the entry records again rather than
	// makes: a subagent's call that a Claude Code progress line passes on,
	// a call of a Codex compacted history, made before the compaction.
	// Its results are still named by it; a count of the session's calls
	// leaves it out.
	Relayed bool
}

// Bounds on the main argument of a call, which only shapes summaries.
const (
	maxCallInput = 200 // code points of a call's main argument kept for its results' summaries
	// maxArguments bounds the arguments string decoded to find the main
	// argument in.
	maxArguments = 64 << 10
)

// argumentKeys are the names under which tools take their main argument,
// in order of preference: the command a shell tool runs, the file a read
// tool reads.
var argumentKeys = []string{"command", "cmd", "file_path", "path", "filePath", "notebook_path"}

// MainArgument returns the main argument of the call's input (the command
// run, the file read) as one line of at most 200 code points, or "": what
// the summaries of its results are told of it.
func (c Call) MainArgument() string {
	input := c.Input
	if input.Kind() == transcript.String && input.Len() <= maxArguments {
		// Arguments written as a JSON string.
		text := input.Text()
		if v, err := transcript.Parse([]byte(text), 0); err == nil && v.Kind() == transcript.Object {
			input = v
		}
	}
	vals := make([]transcript.Value, len(argumentKeys))
	input.Fields(vals, argumentKeys...)
	for _, v := range vals {
		if s := argumentText(v); s != "" {
			return s
		}
	}
	return ""
}

// argumentText returns a string argument, or a command given as an array
// of words (the script of `bash -lc SCRIPT`, else the words joined), as
// one line of at most maxCallInput code points.
func argumentText(v transcript.Value) string {
	var s string
	switch v.Kind() {
	case transcript.String:
		s = cutText(v, maxCallInput*4)
	case transcript.Array:
		var words []string
		v.Elems(func(_ int, e transcript.Value) bool {
			words = append(words, cutText(e, maxCallInput*4))
			return len(words) < 64
		})
		if n := len(words); n == 3 && (words[1] == "-c" || words[1] == "-lc") {
			s = words[2]
		} else {
			s = strings.Join(words, " ")
		}
	}
	if i := strings.Index(s, transcript.StubMark); i >= 0 {
		s = s[:i] // the rest of a long line's cut string
	}
	return display.Line(s, maxCallInput)
}

// cutText returns the start of a string value's text: its first n bytes
// of JSON, decoded.
func cutText(v transcript.Value, n int) string {
	if v.Kind() != transcript.String {
		return ""
	}
	if v.Len() <= n {
		return v.Text()
	}
	raw := v.Raw()
	cut := transcript.TextCut(raw[1:n])
	lit := append(append([]byte{'"'}, raw[1:1+cut]...), '"')
	text, err := transcript.Decode(lit)
	if err != nil {
		return ""
	}
	return string(text)
}

// callMarker is implemented by the formats whose calls are known to hold
// some bytes: a line without them makes none, and is not parsed to find
// its calls.
type callMarker interface {
	callMarker() []byte
}

func (pi) callMarker() []byte         { return []byte(`"toolCall"`) }
func (claudeCode) callMarker() []byte { return []byte(`"tool_use"`) }
func (codex) callMarker() []byte      { return []byte(`_call"`) } // function_call, custom_tool_call, local_shell_call
func (chat) callMarker() []byte       { return []byte(`_call`) }  // tool_calls, function_call
func (copilot) callMarker() []byte    { return []byte(`"toolCallId"`) }
func (gemini) callMarker() []byte     { return []byte(`Call`) } // toolCalls, functionCall
func (qwen) callMarker() []byte       { return []byte(`"functionCall"`) }

// MayCall reports whether line text may hold a tool call of format f, so
// that a line without one is not parsed to find its calls.
// Escapes can hide a marker (\u0074oolCall): the calls of such a line,
// which no agent writes, are missed when it is shorter than the
// threshold, and their results named by what they say themselves.
func MayCall(f Format, text []byte) bool {
	m, ok := f.(callMarker)
	return !ok || bytes.Contains(text, m.callMarker())
}

// contentCalls calls fn for the tool call blocks of an array of content
// blocks: blocks of type typ with id, name and input members (pi's
// toolCall, Claude Code's tool_use), relayed or not.
func contentCalls(content transcript.Value, typ, input string, relayed bool, fn func(Call)) {
	content.Elems(func(_ int, b transcript.Value) bool {
		var m [4]transcript.Value
		if b.Fields(m[:], "type", "id", "name", input); m[0].IsString(typ) {
			fn(Call{ID: m[1].Text(), Name: m[2].Text(), Input: m[3], Relayed: relayed})
		}
		return true
	})
}

// exitCode returns the text of an exit status recorded as an integer, or
// "".
func exitCode(v transcript.Value) string {
	if v.Kind() != transcript.Number {
		return ""
	}
	return ExitText(string(v.Raw()))
}

// ExitText returns s, an exit status written out, when it is an integer,
// or "".
func ExitText(s string) string {
	s = strings.TrimSpace(s)
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || len(s) > 11 || strings.Trim(digits, "0123456789") != "" {
		return ""
	}
	return s
}

// FailedExit reports whether exit status s is known and not 0.
func FailedExit(s string) bool { return s != "" && s != "0" }
