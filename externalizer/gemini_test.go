package externalizer

import (
	"bytes"
	"encoding/base64"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/format"
	storepkg "github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/transcript"
)

var geminiFormat, _ = format.Lookup(format.Gemini)

// TestGeminiSession: a session Gemini CLI 0.61.0 wrote through its
// terminal UI (a read, a command, a rewind, a read of a PNG, a write).
// Every line is kept in its place, the rewind and the metadata edits as
// they are; the sites inside the $set that the rewind wrote are migrated
// as those of the message lines; a shell's screen becomes one line of one
// token, the image part a text part that tells the model to read_file
// the image, stored as its PNG bytes.
func TestGeminiSession(t *testing.T) {
	input, err := os.ReadFile(sessionsDir + "/gemini-rewind.jsonl")
	require.NoError(t, err)
	out, store := roundTrip(t, geminiFormat, 4096, input)
	checkMigrated(t, geminiFormat, 4096, input, out, store)
	checkNoSiteMissed(t, geminiFormat, 4096, out)
	before := bytes.Split(input, []byte("\n"))
	after := bytes.Split(out, []byte("\n"))
	require.Len(t, after, len(before), "a line is lost or added")
	changed := map[int]bool{}
	for i := range before {
		if !bytes.Equal(before[i], after[i]) {
			changed[i+1] = true
		}
	}
	assert.Equal(t, map[int]bool{7: true, 8: true, 16: true, 22: true, 27: true, 28: true, 32: true}, changed, "the lines changed")
	assert.Equal(t, `{"$rewindTo":"bcf329ee-a41c-44ef-8fa9-340f20d185b1"}`, string(after[20]))

	value := func(line int, p Pointer) string { return string(migratedValue(t, after[line-1], p).Raw()) }
	for _, at := range []struct {
		line int
		p    Pointer
	}{{16, Pointer{"toolCalls", "0", "resultDisplay"}}, {22, Pointer{"$set", "messages", "6", "toolCalls", "0", "resultDisplay"}}} {
		assert.True(t, strings.HasPrefix(value(at.line, at.p), `[[{"text":"[Omitted `), "line %d %s: %s", at.line, at.p, value(at.line, at.p))
	}
	for _, at := range []Pointer{{"$set", "messages", "1", "toolCalls", "0", "result", "0", "functionResponse", "response", "output"},
		{"$set", "messages", "3", "content", "0", "functionResponse", "response", "output"}} {
		assert.Contains(t, value(22, at), `[Tool result omitted: stored as artifact]\nid: `, "line 22 %s", at)
	}
	assert.Contains(t, value(7, Pointer{"toolCalls", "0", "result", "0", "functionResponse", "response", "output"}), `\ntool: read_file\n`)

	root, err := transcript.Parse(before[26], 0)
	require.NoError(t, err)
	data, ok := Pointer{"toolCalls", "0", "result", "1", "inlineData", "data"}.Resolve(root)
	require.True(t, ok)
	png, err := base64.StdEncoding.DecodeString(data.Text())
	require.NoError(t, err)
	d := storepkg.Sum(png)
	assert.Equal(t, png, store[d], "the image is stored as its bytes")
	assert.Equal(t, `{"text":"[Image omitted: stored as artifact `+d.String()+` (image/png, 3992 bytes); call read_file with file_path `+testPath(d)+` to see it again]"}`,
		value(27, Pointer{"toolCalls", "0", "result", "1"}))
	assert.Equal(t, value(27, Pointer{"toolCalls", "0", "result", "1"}), value(28, Pointer{"content", "1"}))
	assert.Less(t, len(out), len(input)/3)
}

// TestQwenSession: a session Qwen Code 0.24.4 wrote headless (a read, a
// command, a write). The tool results its messages carry, the shell's
// output and text and the file's diff and contents of their
// resultDisplay move; the records Claude Code's are shaped like are read
// as Qwen Code's.
func TestQwenSession(t *testing.T) {
	input, err := os.ReadFile(sessionsDir + "/qwen-session.jsonl")
	require.NoError(t, err)
	f, ok := detectFormat(input)
	require.True(t, ok)
	require.Equal(t, format.Qwen, f.Name())
	out, store := roundTrip(t, f, 4096, input)
	checkMigrated(t, f, 4096, input, out, store)
	checkNoSiteMissed(t, f, 4096, out)
	lines := bytes.Split(out, []byte("\n"))
	value := func(line int, p Pointer) string { return migratedValue(t, lines[line-1], p).Text() }
	assert.Contains(t, value(6, Pointer{"message", "parts", "0", "functionResponse", "response", "output"}), "[Tool result omitted: stored as artifact]\nid: ")
	assert.Contains(t, value(10, Pointer{"message", "parts", "0", "functionResponse", "response", "output"}), "\ntool: run_shell_command\n")
	for _, k := range []string{"output", "text"} {
		assert.True(t, strings.HasPrefix(value(10, Pointer{"toolCallResult", "resultDisplay", k}), "[Omitted "), k)
	}
	assert.Len(t, store, 4, "the shell's output and text are one artifact")
	assert.Less(t, len(out), len(input)/2)
}

// TestQwenCompressedSession: a session Qwen Code 0.24.4 wrote headless (a
// read of a 9 KB file, a command) and then compressed with /compress.
// The chat_compression record's compressedHistory, which Qwen Code sends
// the model instead of the history on every later request, embeds the
// file whole in a text part: it moves as a read of that file, and the
// summary and the rest of the record stay. It was left inline before.
func TestQwenCompressedSession(t *testing.T) {
	input, f := readSession(t, sessionsDir+"/qwen-compressed.jsonl")
	require.Equal(t, format.Qwen, f.Name())
	out, store := roundTrip(t, f, 4096, input)
	lines := bytes.Split(out, []byte("\n"))
	at := Pointer{"systemPayload", "compressedHistory", "2", "parts", "0", "text"}
	inLines := bytes.Split(input, []byte("\n"))
	root, err := transcript.Parse(inLines[14], 0)
	require.NoError(t, err)
	embedded, ok := at.Resolve(root)
	require.True(t, ok)
	require.True(t, strings.HasPrefix(embedded.Text(), "Recently accessed file (full current content embedded):"))
	placeholder := migratedValue(t, lines[14], at).Text()
	t.Logf("the embedded file became:\n%s", placeholder)
	assert.True(t, strings.HasPrefix(placeholder, "[Tool result omitted: stored as artifact]\nid: "), placeholder)
	assert.Contains(t, placeholder, "\ntool: read_file\n")
	assert.Contains(t, placeholder, "/tmp/qcompress/project/notes.txt")
	d := storepkg.Sum([]byte(embedded.Text()))
	assert.Equal(t, embedded.Text(), string(store[d]), "the embedded file's text is the artifact")
	summary := migratedValue(t, lines[14], Pointer{"systemPayload", "compressedHistory", "0", "parts", "0", "text"}).Text()
	assert.True(t, strings.HasPrefix(summary, "Stand-in\n\nResume the prior task"), "the summary stays: %.80q", summary)
	assert.Less(t, len(lines[14]), len(inLines[14])/4)
}
