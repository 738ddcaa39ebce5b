package recall

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/externalizer"
	"github.com/transcript-tool/transcript-tool/registry"
	storepkg "github.com/transcript-tool/transcript-tool/store"
)

// quote returns s as a JSON string.
func quote(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// marker returns a marker member naming the artifacts ids, replacing the
// value at at.
func marker(at string, ids ...storepkg.Digest) string {
	var parts []string
	for _, d := range ids {
		parts = append(parts, `{"id":"`+d.String()+`","form":"js"}`)
	}
	return `"` + externalizer.MarkerKey + `":{"v":1,"sha256":"` + strings.Repeat("ab", 32) +
		`","edits":[{"at":` + quote(at) + `,"parts":[` + strings.Join(parts, ",") + `]}]}`
}

// line makes the lines of a session in one format.
type lines struct {
	format string
	b      strings.Builder
	n      int
}

func (l *lines) add(s string) {
	l.b.WriteString(s + "\n")
	l.n++
}

// header writes the line that carries the session id.
func (l *lines) header(id string) {
	switch l.format {
	case "pi":
		l.add(`{"type":"session","version":3,"id":` + quote(id) + `,"timestamp":"2025-01-01T00:00:00Z","cwd":"/x"}`)
	case "claude-code":
		l.add(`{"type":"system","timestamp":"2025-01-01T00:00:00Z","sessionId":` + quote(id) + `}`)
	case "codex":
		l.add(`{"timestamp":"2025-01-01T00:00:00Z","type":"session_meta","payload":{"id":` + quote(id) + `,"cwd":"/x"}}`)
	case "chat":
		l.add(`{"id":` + quote(id) + `,"messages":[{"role":"system","content":"be brief"}]}`)
	}
}

func (l *lines) user(text string, sec int) {
	ts := fmt.Sprintf("2025-01-01T00:%02d:%02dZ", sec/60%60, sec%60)
	switch l.format {
	case "pi":
		l.add(`{"type":"message","id":"u","timestamp":"` + ts + `","message":{"role":"user","content":[{"type":"text","text":` + quote(text) + `}]}}`)
	case "claude-code":
		l.add(`{"type":"user","timestamp":"` + ts + `","sessionId":"s","message":{"role":"user","content":` + quote(text) + `}}`)
	case "codex":
		l.add(`{"timestamp":"` + ts + `","type":"event_msg","payload":{"type":"user_message","message":` + quote(text) + `}}`)
	case "chat":
		l.add(`{"role":"user","content":` + quote(text) + `}`)
	}
}

func (l *lines) call(tool, id string) {
	switch l.format {
	case "pi":
		l.add(`{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","id":` + quote(id) + `,"name":` + quote(tool) + `,"arguments":{}}]}}`)
	case "claude-code":
		l.add(`{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":` + quote(id) + `,"name":` + quote(tool) + `,"input":{}}]}}`)
	case "codex":
		l.add(`{"type":"response_item","payload":{"type":"function_call","name":` + quote(tool) + `,"arguments":"{}","call_id":` + quote(id) + `}}`)
	case "chat":
		l.add(`{"role":"assistant","content":null,"tool_calls":[{"id":` + quote(id) + `,"type":"function","function":{"name":` + quote(tool) + `,"arguments":"{}"}}]}`)
	}
}

// result writes a migrated tool result naming ids.
func (l *lines) result(callID string, ids ...storepkg.Digest) {
	const omitted = `"[Tool result omitted: stored as artifact]"`
	switch l.format {
	case "pi":
		l.add(`{"type":"message","message":{"role":"toolResult","toolCallId":` + quote(callID) + `,"content":` + omitted + `},` + marker("/message/content", ids...) + `}`)
	case "claude-code":
		l.add(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":` + quote(callID) + `,"content":` + omitted + `}]},` + marker("/message/content/0/content", ids...) + `}`)
	case "codex":
		l.add(`{"type":"response_item","payload":{"type":"function_call_output","call_id":` + quote(callID) + `,"output":` + omitted + `},` + marker("/payload/output", ids...) + `}`)
	case "chat":
		l.add(`{"role":"tool","tool_call_id":` + quote(callID) + `,"content":` + omitted + `,` + marker("/content", ids...) + `}`)
	}
}

var formats = []string{"pi", "claude-code", "codex", "chat"}

// putObject writes an artifact into the store's layout without the
// fsyncs of Store.Put, which tests do not need.
func putObject(t testing.TB, store *registry.Store, data []byte) storepkg.Digest {
	t.Helper()
	d := storepkg.Sum(data)
	require.NoError(t, os.MkdirAll(filepath.Dir(store.Path(d)), 0o700))
	require.NoError(t, os.WriteFile(store.Path(d), data, 0o600))
	return d
}

// writeRegistry writes records as the store's registry.
func writeRegistry(t testing.TB, store *registry.Store, recs []registry.Record) {
	t.Helper()
	var b strings.Builder
	for _, r := range recs {
		line, err := json.Marshal(r)
		require.NoError(t, err)
		b.Write(line)
		b.WriteByte('\n')
	}
	require.NoError(t, os.MkdirAll(store.Dir(), 0o700))
	require.NoError(t, os.WriteFile(store.RegistryPath(), []byte(b.String()), 0o600))
}

// words are the vocabulary of random text: ASCII, accents, CJK, emoji
// (multi-code-point sequences), RTL and combining marks, and what must be
// cleaned: control characters, escapes, invalid UTF-8.
var words = []string{
	"error", "the", "build", "café", "naïve", "日本語", "テスト", "русский", "Ελληνικά", "👩‍💻", "🚀", "e\u0301",
	"שלום", "\t", "\n", "\x1b[31m", "\x00", "\u2028", "\u202e", "\xff", "FAIL", "panic:", "{", "}", `"`,
}

func randomText(rng *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(words[rng.IntN(len(words))])
		b.WriteByte(' ')
	}
	return b.String()
}

// randomArtifact returns the bytes of a random artifact: text, JSON or
// binary.
func randomArtifact(rng *rand.Rand) ([]byte, string) {
	switch rng.IntN(4) {
	case 0:
		return []byte(`{"output":` + quote(randomText(rng, 1+rng.IntN(50))) + `,"metadata":{"exit_code":` + fmt.Sprint(rng.IntN(3)) + `}}`), externalizer.MediaJSON
	case 1:
		b := make([]byte, 1+rng.IntN(300))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b, "application/octet-stream"
	}
	var b strings.Builder
	for range 1 + rng.IntN(40) {
		b.WriteString(randomText(rng, rng.IntN(30)) + "\n")
	}
	return []byte(b.String()), externalizer.MediaText
}
