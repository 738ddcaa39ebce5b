package externalizer

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	storepkg "github.com/transcript-tool/transcript-tool/store"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/format"
	"github.com/transcript-tool/transcript-tool/summary"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// The formats, for the tests of one of them.
var (
	piFormat, _         = format.Lookup(format.Pi)
	claudeCodeFormat, _ = format.Lookup(format.ClaudeCode)
	codexFormat, _      = format.Lookup(format.Codex)
	chatFormat, _       = format.Lookup(format.Chat)
)

// TestDetect: the first lines of each format, and lines of none.
func TestDetect(t *testing.T) {
	const envelope = `"isSidechain":false,"userType":"external","cwd":"/home/dev","version":"2.1.6","gitBranch":"main"`
	tests := []struct {
		name, line, want string
	}{
		{"pi v3 header", `{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/home/dev"}`, "pi"},
		{"pi v1 header", `{"type":"session","id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/home/dev","provider":"anthropic","modelId":"m"}`, "pi"},
		{"pi header, keys reordered", `{"id":"s1","cwd":"/home/dev","type":"session"}`, "pi"},
		{"claude summary", `{"type":"summary","summary":"Fix the build","leafUuid":"u1"}`, "claude-code"},
		{"claude file-history-snapshot", `{"type":"file-history-snapshot","messageId":"m1","snapshot":{"messageId":"m1","trackedFileBackups":{},"timestamp":"2026-01-26T05:08:25.570Z"},"isSnapshotUpdate":false}`, "claude-code"},
		{"claude queue-operation", `{"type":"queue-operation","operation":"enqueue","timestamp":"2026-01-26T05:08:25.570Z","sessionId":"s1","content":"also run the tests"}`, "claude-code"},
		{"claude user", `{"parentUuid":null,` + envelope + `,"sessionId":"s1","type":"user","message":{"role":"user","content":"hi"},"uuid":"u1","timestamp":"t"}`, "claude-code"},
		{"claude subagent user", `{"parentUuid":null,"isSidechain":true,"userType":"external","cwd":"/home/dev","sessionId":"s1","version":"2.1.6","gitBranch":"main","agentId":"a1b2c3d","slug":"sleepy-rolling-otter","type":"user","message":{"role":"user","content":"Explore the code"},"uuid":"u1","timestamp":"t"}`, "claude-code"},
		{"claude assistant with parentUuid only", `{"parentUuid":"u0","type":"assistant","message":{"role":"assistant","content":[]}}`, "claude-code"},
		{"claude progress", `{"parentUuid":"u0",` + envelope + `,"sessionId":"s1","type":"progress","data":{"type":"hook_progress"},"uuid":"u1","timestamp":"t"}`, "claude-code"},
		{"claude system", `{"parentUuid":"u0",` + envelope + `,"sessionId":"s1","type":"system","subtype":"turn_duration","durationMs":1}`, "claude-code"},
		{"claude 2.1.328 attachment", `{"parentUuid":"u0","isSidechain":false,"attachment":{"type":"date","date":"2026-11-25"},"type":"attachment","uuid":"u1","timestamp":"t","sessionId":"s1"}`, "claude-code"},
		{"claude 2.1.328 api-request-blob", `{"type":"api-request-blob","sessionId":"s1","hash":"4b2f","message":{"role":"user","content":[]}}`, "claude-code"},
		{"claude 2.1.328 atis-latch", `{"type":"atis-latch","atis":"","sessionId":"s1"}`, "claude-code"},
		{"claude 2.1.328 last-prompt", `{"type":"last-prompt","lastPrompt":"setup","leafUuid":"u1","sessionId":"s1"}`, "claude-code"},
		{"claude teleported-from", `{"type":"teleported-from","sessionId":"s1","remoteSessionId":"r1"}`, "claude-code"},
		{"claude teleported-from alone", `{"type":"teleported-from","remoteSessionId":"r1"}`, "claude-code"},
		{"codex session_meta", `{"timestamp":"2025-09-15T10:00:00.000Z","type":"session_meta","payload":{"id":"s1","timestamp":"2025-09-15T10:00:00.000Z","cwd":"/home/dev","originator":"codex_cli_rs","cli_version":"0.46.0","instructions":null}}`, "codex"},
		{"codex response_item", `{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":"ok"}}`, "codex"},
		{"codex event_msg", `{"timestamp":"t","type":"event_msg","payload":{"type":"exec_command_end","call_id":"call_1","stdout":"ok"}}`, "codex"},
		{"codex turn_context", `{"timestamp":"t","type":"turn_context","payload":{"cwd":"/home/dev","model":"gpt-5-codex"}}`, "codex"},
		{"codex compacted", `{"timestamp":"t","type":"compacted","payload":{"message":"summary"}}`, "codex"},
		{"legacy codex", `{"id":"s1","timestamp":"2025-04-20T10:00:00.000Z","instructions":"You are Codex."}`, "codex"},
		{"legacy codex, null instructions", `{"id":"s1","timestamp":"2025-04-20T10:00:00.000Z","instructions":null,"git":{"branch":"main"}}`, "codex"},
		{"gemini header", `{"sessionId":"7934add8-8bfd-4870-a558-4cd2ea1b3c52","projectHash":"63f92974","startTime":"2026-11-27T02:52:47.188Z","lastUpdated":"2026-11-27T02:52:47.188Z","kind":"main"}`, "gemini"},
		{"gemini $set", `{"$set":{"lastUpdated":"2026-11-27T02:52:48.954Z"}}`, "gemini"},
		{"gemini $rewindTo", `{"$rewindTo":"bcf329ee-a41c-44ef-8fa9-340f20d185b1"}`, "gemini"},
		{"gemini model message", `{"id":"d7a4","timestamp":"t","type":"gemini","content":"","thoughts":[],"model":"gemini-2.5-pro"}`, "gemini"},
		{"qwen user", `{"uuid":"07ecc9d4","parentUuid":null,"sessionId":"25fdec6d","timestamp":"t","type":"user","provenance":"real_user","cwd":"/w","version":"0.24.4","message":{"role":"user","parts":[{"text":"go"}]}}`, "qwen"},
		{"qwen tool_result", `{"uuid":"29270f3d","parentUuid":"30a8e7c5","sessionId":"25fdec6d","timestamp":"t","type":"tool_result","provenance":"tool_result","message":{"role":"user","parts":[]}}`, "qwen"},
		{"qwen system", `{"uuid":"52794d09","parentUuid":"07ecc9d4","sessionId":"25fdec6d","timestamp":"t","type":"system","provenance":"system","subtype":"attribution_snapshot"}`, "qwen"},
		{"chat system", `{"role":"system","content":"You are helpful."}`, "chat"},
		{"chat user", `{"role": "user", "content": "hi"}`, "chat"},
		{"chat tool", `{"role":"tool","tool_call_id":"call_1","name":"read_file","content":"ok"}`, "chat"},
		{"chat function", `{"role":"function","name":"read_file","content":"ok"}`, "chat"},
		{"chat developer", `{"role":"developer","content":"be brief"}`, "chat"},
		{"chat messages", `{"id":"conv-1","messages":[{"role":"user","content":"hi"}]}`, "chat"},
		{"chat empty messages", `{"messages":[]}`, "chat"},

		{"empty object", `{}`, ""},
		{"foreign object", `{"hello":"world"}`, ""},
		{"pi entry without a header", `{"type":"message","id":"e1","message":{"role":"toolResult","content":"x"}}`, ""},
		{"claude user without session or parent", `{"type":"user","message":{"role":"user","content":"hi"}}`, ""},
		{"claude-like type without session", `{"type":"cost-state","totalCostUSD":0}`, ""},
		{"codex type without payload", `{"timestamp":"t","type":"session_meta"}`, ""},
		{"codex payload of an unknown type", `{"timestamp":"t","type":"telemetry","payload":{}}`, ""},
		{"legacy codex state record", `{"record_type":"state"}`, ""},
		{"legacy codex header with a type", `{"id":"s1","timestamp":"t","instructions":"x","type":"other"}`, ""},
		{"bare codex response item", `{"type":"function_call_output","call_id":"call_1","output":"ok"}`, ""},
		{"chat role of no chat", `{"role":"toolResult","content":"x"}`, ""},
		{"chat role not a string", `{"role":1,"content":"x"}`, ""},
		{"messages not a list", `{"messages":{"role":"user"}}`, ""},
		{"gemini header without projectHash", `{"sessionId":"s1","startTime":"t"}`, ""},
		{"$set not an object", `{"$set":"x"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := transcript.Parse([]byte(tt.line), 0)
			require.NoError(t, err)
			f, ok := format.Detect(v)
			if tt.want == "" {
				assert.False(t, ok, "detected as %v", f)
				return
			}
			require.True(t, ok, "not detected")
			assert.Equal(t, tt.want, f.Name())
			named, ok := format.Lookup(tt.want)
			require.True(t, ok)
			assert.Equal(t, named, f)
		})
	}
}

// jsonString encodes s as a JSON string.
func jsonString(t testing.TB, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	require.NoError(t, err)
	return string(b)
}

// payloadText is a tool's output, larger than the default threshold.
var payloadText = strings.Repeat("ok  \tgithub.com/dev/projet/internal/store\t0.123s\n", 120)

// pngBytes are bytes that start like a PNG image.
var pngBytes = append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{0, 1, 2, 3, 250, 251, 252, 253}, 600)...)

// claudeLine is a Claude Code user line with the given tool_result content
// and toolUseResult.
func claudeLine(content, result string) []byte {
	return []byte(`{"parentUuid":"u0","isSidechain":false,"sessionId":"s1","type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_01","type":"tool_result","content":` +
		content + `}]},"uuid":"u1","timestamp":"2026-01-26T05:08:25.570Z","toolUseResult":` + result + "}\n")
}

// TestClaudeToolUseResultDuplicatesStoredOnce: Claude Code keeps a tool's
// output both in the tool_result the model saw and in toolUseResult. Both
// copies leave the line, and the store holds the payload once.
func TestClaudeToolUseResultDuplicatesStoredOnce(t *testing.T) {
	text := jsonString(t, payloadText)
	block := `[{"type":"text","text":` + text + `}]`
	img := jsonString(t, base64.StdEncoding.EncodeToString(pngBytes))
	tests := []struct {
		name, content, result string
	}{
		{"Bash stdout", text, `{"stdout":` + text + `,"stderr":"","interrupted":false,"isImage":false}`},
		{"Grep content", text, `{"mode":"content","numFiles":0,"filenames":[],"content":` + text + `,"numLines":120}`},
		{"error string", text, text},
		{"Task report in content blocks", block, `{"status":"completed","prompt":"explore","agentId":"a1b2c3d","content":` + block + `,"totalTokens":9}`},
		{"MCP content blocks", block, block},
		{"Read image", `[{"type":"image","source":{"type":"base64","media_type":"image/png","data":` + img + `}}]`,
			`{"type":"image","file":{"base64":` + img + `,"type":"image/png","originalSize":4808}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			input := claudeLine(tt.content, tt.result)
			out, store := roundTrip(t, claudeCodeFormat, 4096, input)
			checkMigrated(t, claudeCodeFormat, 4096, input, out, store)
			assert.Equal(t, 1, len(store), "the payload is stored %d times, not once", len(store))
			assert.Less(t, len(out), len(input)/2, "a copy of the payload is left inline")
		})
	}
}

// TestImagesStoredAsBytes: an image is stored as its decoded bytes, so
// that the artifact is the image file, wherever a format keeps it.
func TestImagesStoredAsBytes(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString(pngBytes)
	tests := []struct {
		name   string
		format Format
		line   string
	}{
		{"pi image block", piFormat, `{"type":"message","message":{"role":"user","content":[{"type":"image","data":"` + b64 + `","mimeType":"image/png"}]}}`},
		{"claude image block", claudeCodeFormat, `{"parentUuid":"u0","sessionId":"s1","type":"user","message":{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + b64 + `"}}]}}`},
		{"claude toolUseResult.file.base64", claudeCodeFormat, `{"parentUuid":"u0","sessionId":"s1","type":"user","message":{"role":"user","content":[]},"toolUseResult":{"type":"image","file":{"base64":"` + b64 + `","type":"image/png"}}}`},
		{"codex input_image data URL", codexFormat, `{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":[{"type":"input_image","image_url":"data:image/png;base64,` + b64 + `"}]}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			input := []byte(tt.line + "\n")
			out, store := roundTrip(t, tt.format, 4096, input)
			checkMigrated(t, tt.format, 4096, input, out, store)
			require.Equal(t, 1, len(store), "artifacts")
			for _, data := range store {
				assert.True(t, bytes.Equal(pngBytes, data), "stored as %.40q, not as the image's bytes", data)
			}
		})
	}
}

// TestCodexArrayOutput: an output that is a list of items becomes a list
// of one input_text item holding the hint, wherever the output sits, so
// that Codex still deserialises it; the line restores exactly.
func TestCodexArrayOutput(t *testing.T) {
	items := `[{"type":"input_text","text":` + jsonString(t, payloadText) + `},{"type":"input_image","image_url":"data:image/png;base64,` +
		base64.StdEncoding.EncodeToString(pngBytes) + `"}]`
	tests := []struct {
		name, line string
		at         Pointer
	}{
		{"function_call_output", `{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":` + items + `}}`,
			Pointer{"payload", "output"}},
		{"custom_tool_call_output", `{"timestamp":"t","type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"call_1","output":` + items + `}}`,
			Pointer{"payload", "output"}},
		{"compacted history", `{"timestamp":"t","type":"compacted","payload":{"message":"m","replacement_history":[{"type":"message","role":"user","content":[]},{"type":"function_call_output","call_id":"call_1","output":` + items + `}]}}`,
			Pointer{"payload", "replacement_history", "1", "output"}},
		{"legacy item", `{"type":"function_call_output","call_id":"call_1","output":` + items + `}`,
			Pointer{"output"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			input := []byte(tt.line + "\n")
			out, store := roundTrip(t, codexFormat, 4096, input)
			checkMigrated(t, codexFormat, 4096, input, out, store)
			root, err := transcript.Parse(bytes.TrimSuffix(out, []byte("\n")), 0)
			require.NoError(t, err)
			output, ok := tt.at.Resolve(root)
			require.True(t, ok)
			require.Equal(t, transcript.Array, output.Kind(), "%s", output.Raw())
			checkTextBlock(t, codexFormat, output, tt.name)
			item, _ := output.Index(0)
			hint, _ := item.Get("text")
			assert.True(t, strings.HasPrefix(hint.Text(), "[Tool result omitted: stored as artifact]\nid: "), "hint %q", hint.Text())
			var items []map[string]any
			require.NoError(t, json.Unmarshal(output.Raw(), &items), "Codex reads the output as a list of items")
		})
	}
}

// TestClaudeRequestBlob: Claude Code 2.1.328 records request messages by
// hash in api-request-blob lines; their tool results are payload sites,
// one artifact with the same result on its user line. The request shape
// of an api-request-shape line is one too.
func TestClaudeRequestBlob(t *testing.T) {
	result := `[{"tool_use_id":"toolu_1","type":"tool_result","content":` + jsonString(t, payloadText) + `}]`
	input := []byte(`{"type":"api-request-blob","sessionId":"s1","hash":"4b2f","message":{"role":"user","content":` + result + "}}\n" +
		`{"parentUuid":"u0","isSidechain":false,"type":"user","message":{"role":"user","content":` + result + `},"uuid":"u1","timestamp":"t","sessionId":"s1"}` + "\n")
	shape := `{"system":[{"type":"text","text":"You are Claude Code."}],"tools":[` + strings.Repeat(`{"name":"Bash","description":"Runs a command.","input_schema":{"type":"object"}},`, 80) + `{}]}`
	input = append(input, `{"type":"api-request-shape","sessionId":"s1","shapeHash":"35c2","timestamp":"t","version":"2.1.328","shape":`+shape+"}\n"...)
	out, store := roundTrip(t, claudeCodeFormat, 4096, input)
	checkMigrated(t, claudeCodeFormat, 4096, input, out, store)
	assert.Len(t, store, 2)
	assert.Contains(t, store, storepkg.Sum([]byte(shape)), "the request shape, as its JSON")
	assert.Equal(t, 2, bytes.Count(out, []byte(`"content":"[Tool result omitted: stored as artifact]`)), "%s", out)
	assert.Contains(t, string(out), `"shape":{"artifact":"[Omitted `)
}

// TestCodexOutputHeader: Codex 0.169 writes a command's output twice, in
// an item_completed event as it is and in the function_call_output after
// a header with a chunk id of its own; the header stays inline, ahead of
// the hint, and both copies are one artifact of the output alone. A
// header-like start that is no header stores the whole string.
func TestCodexOutputHeader(t *testing.T) {
	body := payloadText + "\"quoted\" and é\n"
	header := "Chunk ID: d4d682\nWall time: 0.0012 seconds\nProcess exited with code 0\nOriginal token count: 1712\nOutput:\n"
	output := func(call, s string) string {
		return `{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"` + call + `","output":` + jsonString(t, s) + `}}`
	}
	completed := `{"timestamp":"t","type":"event_msg","payload":{"type":"item_completed","thread_id":"th","turn_id":"tu","item":{"type":"CommandExecution","id":"call_1","command":"seq 1 9","aggregated_output":` +
		jsonString(t, body) + `,"exit_code":0,"status":"completed"}}}`
	notHeader := "Chunk ID: d4d682\n" + strings.Repeat("x", 2000) + "\nOutput:\n" + body
	input := []byte(completed + "\n" + output("call_1", header+body) + "\n" +
		output("call_2", strings.Replace(header, "d4d682", "9f00aa", 1)+body) + "\n" + output("call_3", notHeader) + "\n")

	out, store := roundTrip(t, codexFormat, 4096, input)
	checkMigrated(t, codexFormat, 4096, input, out, store)
	assert.Len(t, store, 2, "the output once, and the string that has no header whole")
	assert.Contains(t, store, storepkg.Sum([]byte(body)))
	assert.Contains(t, store, storepkg.Sum([]byte(notHeader)))

	lines := bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n"))
	require.Len(t, lines, 4)
	event, err := transcript.Parse(lines[0], 0)
	require.NoError(t, err)
	agg, ok := Pointer{"payload", "item", "aggregated_output"}.Resolve(event)
	require.True(t, ok)
	assert.True(t, strings.HasPrefix(agg.Text(), "[Omitted "), "%q", agg.Text())
	for i, chunk := range []string{"d4d682", "9f00aa"} {
		root, err := transcript.Parse(lines[1+i], 0)
		require.NoError(t, err)
		o, _ := Pointer{"payload", "output"}.Resolve(root)
		want := strings.Replace(header, "d4d682", chunk, 1) + "[Tool result omitted: stored as artifact]\nid: " + storepkg.Sum([]byte(body)).String()
		assert.True(t, strings.HasPrefix(o.Text(), want), "%q", o.Text())
		assert.Contains(t, o.Text(), "\nsummary: "+summary.Describe([]byte(body), MediaText)+"\n", "the summary describes the output, not the header")
	}
}

// TestDuplicateKeySites: a tool result whose content (or output) is
// there twice keeps the last, as every reader does; the shadowed one,
// which no reader sees, is externalized too, whichever of the two is
// large, and the line restores exactly.
func TestDuplicateKeySites(t *testing.T) {
	big := jsonString(t, payloadText)
	small := `"ok"`
	for _, tc := range []struct {
		name   string
		f      Format
		line   func(first, last string) string
		shadow Pointer
	}{
		{"pi", piFormat, func(first, last string) string {
			return `{"type":"message","id":"r1","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":` + first + `,"content":` + last + `,"isError":false}}`
		}, Pointer{"message", "content"}},
		{"claude-code", claudeCodeFormat, func(first, last string) string {
			return `{"parentUuid":null,"type":"user","sessionId":"s1","uuid":"u1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":` + first + `,"content":` + last + `}]}}`
		}, Pointer{"message", "content", "0", "content"}},
		{"codex", codexFormat, func(first, last string) string {
			return `{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":` + first + `,"output":` + last + `}}`
		}, Pointer{"payload", "output"}},
		{"chat", chatFormat, func(first, last string) string {
			return `{"role":"tool","tool_call_id":"c1","content":` + first + `,"content":` + last + `}`
		}, Pointer{"content"}},
	} {
		for _, order := range [][2]string{{big, small}, {small, big}, {big, big}} {
			input := []byte(tc.line(order[0], order[1]) + "\n")
			if tc.name == "pi" {
				input = append([]byte(`{"type":"session","version":3,"id":"s1","timestamp":"t","cwd":"/w"}`+"\n"), input...)
			}
			out, store := roundTrip(t, tc.f, 4096, input)
			checkMigrated(t, tc.f, 4096, input, out, store)
			assert.Len(t, store, 1, "%s: the large content, shadowed or not, once", tc.name)
			assert.NotContains(t, string(out), big[1:200], "%s: a copy of the payload is still inline", tc.name)
			if order[0] == big {
				assert.Contains(t, string(out), `"dup":1`, "%s: the shadowed member is named", tc.name)
			}
		}
	}
}
