package format

import (
	"github.com/transcript-tool/transcript-tool/transcript"
)

// The names of the formats, as the command line gives them and as
// Format.Name returns them.
const (
	// Pi is the name of pi's and OpenClaw's session format.
	Pi = "pi"
	// ClaudeCode is the name of Claude Code's transcript format.
	ClaudeCode = "claude-code"
	// Codex is the name of the Codex CLI's rollout format.
	Codex = "codex"
	// Chat is the name of the format of chat-completions style messages.
	Chat = "chat"
	// Copilot is the name of GitHub Copilot CLI's session event format.
	Copilot = "copilot"
	// Gemini is the name of Gemini CLI's session format.
	Gemini = "gemini"
	// Qwen is the name of Qwen Code's session format.
	Qwen = "qwen"
)

// Format says where one agent's transcript entries keep their payloads,
// their tool calls and their users' requests.
type Format interface {
	// Name is the format's name on the command line.
	Name() string
	// Detect reports whether entry, one of the first entries of a file,
	// shows that the file is in this format.
	Detect(entry transcript.Value) bool
	// Session returns the session id that entry carries, or "".
	Session(entry transcript.Value) string
	// Knows reports whether entry is of a kind the format knows: false
	// for an entry of a type the agent added after the format was
	// written, which the tool passes through as it is and stats counts
	// as not understood.
	Knows(entry transcript.Value) bool
	// Sites appends to dst the payload sites of entry whose JSON bytes
	// reach threshold, in document order, none inside another.
	Sites(entry transcript.Value, threshold int, dst []Site) []Site
	// Calls calls fn for each tool call entry records, in document
	// order: the names and arguments that the results answering them,
	// on later lines or later in the same one, know only by call id.
	Calls(entry transcript.Value, fn func(Call))
	// Requests calls fn for each message of a user that entry records
	// and that holds text besides white space, in document order.
	Requests(entry transcript.Value, fn func(Request))
}

// Shape says what a site's placeholder looks like.
type Shape uint8

const (
	// ShapePlain replaces the value with a one-line hint of its own JSON
	// type: a string, an array holding that string, or an object.
	ShapePlain Shape = iota
	// ShapeToolResult replaces a tool result's content with the seed
	// design's "[Tool result omitted: stored as artifact]" text: a string
	// for a string, one text block for an array.
	ShapeToolResult
	// ShapeImageBlock replaces an image content block with a text block.
	ShapeImageBlock
	// ShapeTextPart replaces a part of Google's Gemini API (an inlineData
	// part) with a text part, {"text": hint}: the API takes no "type".
	ShapeTextPart
	// ShapeLines replaces a terminal's screen kept as lines of styled
	// tokens (Gemini CLI's resultDisplay of a shell) with one line of one
	// token, [[{"text": hint}]], which the terminal renders as it does
	// the others.
	ShapeLines
)

// Site is one payload inside an entry.
type Site struct {
	Path  Pointer
	Value transcript.Value
	Shape Shape
	// Tool is the name of the tool whose output the site holds, and
	// ToolCallID the id of the call it answers; a site that names only
	// the call is given the call's name from the line that made it.
	Tool       string
	ToolCallID string
	Entry      string
	CreatedAt  string
	// RefParent, when not nil, is the object whose "details" object gains
	// an artifactRef for this site (OpenClaw PR #9415).
	RefParent Pointer
	// TextType is the "type" of the text block that stands in for an
	// array or object payload: "text" unless the format names it
	// otherwise (Codex: "input_text").
	TextType string
	// ViewTool is the tool of the format's agent that shows the model an
	// image file, and ViewArg the argument that takes its path (Codex:
	// view_image, path): a placeholder of an image tells the model to
	// call it on the artifact's path to see the image again. "" for a
	// format of no one agent.
	ViewTool, ViewArg string
	// Image is set for a string site that holds base64 image data of
	// media type Media (Claude Code's toolUseResult.file.base64), so that
	// it is stored as the image's bytes, as the same image in a content
	// block is.
	Image bool
	Media string
	// Head is the length of the start of a string site's JSON, after its
	// opening quote, that stays inline ahead of the placeholder: a header
	// the agent wrote around the output (Codex's "Chunk ID: …\nOutput:\n"),
	// so that only the output is stored and identical outputs are one
	// artifact. It must end between escapes.
	Head int
	// Dup is 0 for the value Path names, which is the last member of its
	// name, as readers take it; n > 0 for the nth member of that name
	// before it, a duplicate key (see memberSites).
	Dup int
	// Input is the call's main argument (the command run, the file
	// read) where the result records it, or else the call's; Exit the
	// command's exit status where the result records it (pi and Claude
	// Code mark a command that exits non-zero as an error, so a result
	// they mark as no error is "0"); Failed is set when the result is
	// marked as an error. They only shape the artifact's summary.
	Input  string
	Exit   string
	Failed bool
}

// qwen comes before claudeCode, whose records of the same shape lack
// a provenance.
var formats = []Format{pi{}, qwen{}, claudeCode{}, codex{}, gemini{}, chat{}, copilot{}}

// Formats returns every known format, in detection order.
func Formats() []Format { return formats }

// Lookup returns the format called name.
func Lookup(name string) (Format, bool) {
	for _, f := range formats {
		if f.Name() == name {
			return f, true
		}
	}
	return nil, false
}

// Detect returns the first format that recognises entry.
func Detect(entry transcript.Value) (Format, bool) {
	for _, f := range formats {
		if f.Detect(entry) {
			return f, true
		}
	}
	return nil, false
}

// knownType reports whether the string member key of entry is one of
// types: none is longer than 64 bytes, so a longer one is not decoded.
func knownType(entry transcript.Value, key string, types map[string]bool) bool {
	t, _ := entry.Get(key)
	return t.Kind() == transcript.String && t.Len() <= 64+len(`""`) && types[t.Text()]
}
