// Package testsession builds pi session transcripts for tests: small,
// deterministic, with tool results of a chosen size, so that tests and
// command-line scripts can make inputs without checking in large files.
//
// Every function returns the same bytes for the same arguments; payloads of
// different tool results differ, so that no two are deduplicated.
package testsession

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Text returns the payload of tool result i: size bytes of numbered ASCII
// lines that need no JSON escape other than the newline.
func Text(i, size int) string {
	var b strings.Builder
	b.Grow(size + 80)
	for n := 1; b.Len() < size; n++ {
		fmt.Fprintf(&b, "file%d.txt line %d: the quick brown fox jumps over the lazy dog\n", i, n)
	}
	return b.String()[:size]
}

// Header returns the header line of a pi v3 session, without its newline.
func Header(id string) string {
	return fmt.Sprintf(`{"type":"session","version":3,"id":%s,"timestamp":"2025-01-01T00:00:00.000Z","cwd":"/home/user/project"}`, quote(id))
}

// ToolCall returns the assistant entry that calls tool i, without its
// newline.
func ToolCall(i int) string {
	return fmt.Sprintf(`{"type":"message","id":"a%04d","parentId":null,"timestamp":"%s","message":{"role":"assistant","content":[{"type":"toolCall","id":"call_%d","name":"read","arguments":{"path":"file%d.txt"}}],"timestamp":%d}}`,
		i, timestamp(2*i), i, i, millis(2*i))
}

// ToolResult returns the toolResult entry answering tool call i, whose
// content is one text block holding Text(i, size), without its newline.
func ToolResult(i, size int) string {
	return fmt.Sprintf(`{"type":"message","id":"r%04d","parentId":"a%04d","timestamp":"%s","message":{"role":"toolResult","toolCallId":"call_%d","toolName":"read","content":[{"type":"text","text":%s}],"isError":false,"timestamp":%d}}`,
		i, i, timestamp(2*i+1), i, quote(Text(i, size)), millis(2*i+1))
}

// Pi returns a session with header id, a user prompt, and n tool calls each
// answered by a tool result of size bytes of text. Every line ends with a
// newline.
func Pi(id string, n, size int) []byte {
	var b bytes.Buffer
	b.WriteString(Header(id) + "\n")
	b.WriteString(`{"type":"message","id":"u0000","parentId":null,"timestamp":"2025-01-01T00:00:00.500Z","message":{"role":"user","content":[{"type":"text","text":"read the files"}],"timestamp":1735689600500}}` + "\n")
	for i := 1; i <= n; i++ {
		b.WriteString(ToolCall(i) + "\n")
		b.WriteString(ToolResult(i, size) + "\n")
	}
	return b.Bytes()
}

func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// timestamp and millis give entry n a time n seconds after the session
// started.
func timestamp(n int) string {
	return fmt.Sprintf("2025-01-01T%02d:%02d:%02d.000Z", n/3600%24, n/60%60, n%60)
}

func millis(n int) int64 { return 1735689600000 + int64(n)*1000 }
