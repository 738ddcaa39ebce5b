package format

import (
	"strings"

	"github.com/transcript-tool/transcript-tool/transcript"
)

// Request is a message of a user to the agent, as an entry records it.
type Request struct {
	// Text is the message's text, not yet cleaned: a string content, or
	// the texts of its text blocks, one per line.
	Text string
	// Fallback is set for a request to believe only in a file that
	// records no other: Codex writes each prompt as a user_message event
	// and again as a response item, which may carry context the user did
	// not write, so a file's last request is its last event, and its last
	// item only when it has no event.
	Fallback bool
}

// request calls fn for the user's message text, unless it is blank.
func request(text string, fallback bool, fn func(Request)) {
	if strings.TrimSpace(text) != "" {
		fn(Request{Text: text, Fallback: fallback})
	}
}

// texts returns the text of message content: a string, or the "text"
// members of the blocks of the given types, one per line.
func texts(content transcript.Value, types ...string) string {
	if content.Kind() == transcript.String {
		return content.Text()
	}
	var parts []string
	content.Elems(func(_ int, b transcript.Value) bool {
		t, _ := b.Get("type")
		for _, typ := range types {
			if t.IsString(typ) {
				text, _ := b.Get("text")
				parts = append(parts, text.Text())
				break
			}
		}
		return true
	})
	return strings.Join(parts, "\n")
}
