package show

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/format"
	"github.com/transcript-tool/transcript-tool/registry"
	storepkg "github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/local"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// formatCase is one rendering of a few hand-written entries.
type formatCase struct {
	name  string
	lines []string
	want  string
}

func runFormatCases(t *testing.T, format string, cases []formatCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			input := strings.Join(tc.lines, "\n") + "\n"
			assert.Equal(t, tc.want, render(t, []byte(input), Options{Format: format}))
		})
	}
}

func TestPi(t *testing.T) {
	runFormatCases(t, "pi", []formatCase{
		{"user text and image",
			[]string{`{"type":"message","timestamp":"2025-01-02T03:04:05.678Z","message":{"role":"user","content":[{"type":"text","text":"\n\nhi\nthere\n"},{"type":"image","data":"QUJD","mimeType":"image/png"}]}}`},
			"2025-01-02 03:04:05 user\n  hi\n  there\n  [image image/png, 3 bytes]\n"},
		{"user content as a string",
			[]string{`{"type":"message","message":{"role":"user","content":"plain"}}`},
			"user\n  plain\n"},
		{"assistant thinking, text and tool calls",
			[]string{`{"type":"message","message":{"role":"assistant","model":"m1","content":[{"type":"thinking","thinking":"  hmm,\n  let me see  "},{"type":"text","text":"Sure."},{"type":"toolCall","id":"c1","name":"read","arguments":{ "path" : "a b.go" ,"n":[1, 2]}}]}}`},
			"assistant · m1\n  thinking: hmm, let me see\n  Sure.\n  → read {\"path\":\"a b.go\",\"n\":[1,2]}\n"},
		{"long tool arguments are cut",
			[]string{`{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","name":"write","arguments":{"content":"` + strings.Repeat("x", 200) + `"}}]}}`},
			"assistant\n  → write {\"content\":\"" + strings.Repeat("x", 108) + "…\n"},
		{"tool result shortened",
			[]string{`{"type":"message","message":{"role":"toolResult","toolName":"bash","content":[{"type":"text","text":"1\n2\n3\n4\n5\n6\n7\n"}]}}`},
			"tool result · bash\n  1\n  2\n  3\n  4\n  5\n  … (2 more lines, 14 bytes)\n"},
		{"one line more",
			[]string{`{"type":"message","message":{"role":"toolResult","toolName":"bash","content":"1\n2\n3\n4\n5\n6"}}`},
			"tool result · bash\n  1\n  2\n  3\n  4\n  5\n  … (1 more line, 11 bytes)\n"},
		{"tool result error",
			[]string{`{"type":"message","message":{"role":"toolResult","toolName":"read","isError":true,"content":[{"type":"text","text":"ENOENT"}]}}`},
			"tool result · read · error\n  ENOENT\n"},
		{"tool result named by its call",
			[]string{
				`{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","id":"c9","name":"grep","arguments":{}}]}}`,
				`{"type":"message","message":{"role":"toolResult","toolCallId":"c9","content":"found"}}`,
			},
			"assistant\n  → grep {}\ntool result · grep\n  found\n"},
		{"bash execution",
			[]string{`{"type":"message","message":{"role":"bashExecution","command":"make\ntest","output":"boom\n","exitCode":2,"cancelled":true}}`},
			"bash · $ make test\n  boom\n  exit 2, cancelled\n"},
		{"aborted assistant",
			[]string{`{"type":"message","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"overloaded"}}`},
			"assistant\n  stopped: error, overloaded\n"},
		{"session events",
			[]string{
				`{"type":"session","version":2,"id":"s1","timestamp":"2025-01-01T00:00:00Z","cwd":"/w"}`,
				`{"type":"model_change","provider":"openai","modelId":"gpt-5"}`,
				`{"type":"thinking_level_change","thinkingLevel":"low"}`,
				`{"type":"compaction","summary":"done so far","tokensBefore":1200}`,
				`{"type":"label","label":"checkpoint"}`,
				`{"type":"custom","customType":"ext-state","data":{}}`,
			},
			"2025-01-01 00:00:00 session · s1 · pi v2 · cwd /w\nmodel · openai/gpt-5\nthinking level · low\ncompaction · 1200 tokens before\n  done so far\nlabel · checkpoint\ncustom · ext-state\n"},
		{"custom role",
			[]string{`{"type":"message","message":{"role":"hookMessage","customType":"lint","content":"all clear"}}`},
			"hookMessage · lint\n  all clear\n"},
		{"pi 1.x context edits and usage",
			[]string{
				`{"type":"context_edit","id":"e1","targetId":"r1","replacement":{"content":[{"type":"text","text":"shorter"}]}}`,
				`{"type":"context_edit","id":"e2","targetId":"r2","replacement":null}`,
				`{"type":"usage","id":"u1","kind":"cache_warm","provider":"anthropic","model":"claude-sonnet-4-5","usage":{}}`,
			},
			"context edit · replaces r1\n  shorter\ncontext edit · omits r2\nusage · cache_warm · claude-sonnet-4-5\n"},
		{"unknown entry",
			[]string{`{"type":"tomorrow","x":1}`},
			"line 1: pi entry of unknown type \"tomorrow\" (25 bytes)\n"},
		{"message that is no object",
			[]string{`{"type":"message","message":"just text"}`},
			"message\n  just text\n"},
	})
}

func TestClaudeCode(t *testing.T) {
	runFormatCases(t, "claude-code", []formatCase{
		{"2.1.328 line types",
			[]string{
				`{"parentUuid":"u0","attachment":{"type":"skill_listing","content":"- dataviz: charts"},"type":"attachment","uuid":"u1","timestamp":"2026-11-25T20:09:19Z","sessionId":"s1"}`,
				`{"type":"api-request-shape","sessionId":"s1","shapeHash":"35c2","timestamp":"2026-11-25T20:09:19Z","shape":{"system":[]}}`,
				`{"type":"api-request-blob","sessionId":"s1","hash":"4b2f","message":{"role":"user","content":[]}}`,
				`{"type":"api-request","sessionId":"s1","id":"r1","timestamp":"2026-11-25T20:09:19Z","querySource":"sdk","shapeHash":"35c2"}`,
				`{"type":"tools-used","tools":["Bash","Read"],"sessionId":"s1"}`,
				`{"type":"last-prompt","lastPrompt":"run the tests","leafUuid":"u1","sessionId":"s1"}`,
				`{"type":"cost-state","sessionId":"s1","totalCostUSD":0.004}`,
				`{"type":"atis-latch","atis":"","sessionId":"s1"}`,
			},
			"2026-11-25 20:09:19 attachment · skill_listing · 54 B\n2026-11-25 20:09:19 api-request-shape · 121 B\napi-request-blob · 97 B\n2026-11-25 20:09:19 api-request · sdk · 123 B\ntools used · [\"Bash\",\"Read\"]\nlast prompt · run the tests\n"},
		{"one message over several lines shares a header",
			[]string{
				`{"type":"assistant","timestamp":"2026-01-01T00:00:00Z","message":{"id":"msg_1","model":"opus","role":"assistant","content":[{"type":"thinking","thinking":"plan"}]}}`,
				`{"type":"assistant","timestamp":"2026-01-01T00:00:01Z","message":{"id":"msg_1","model":"opus","role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}]}}`,
				`{"type":"user","timestamp":"2026-01-01T00:00:02Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"a\nb"}],"is_error":true}]},"toolUseResult":{"stdout":"a\nb"}}`,
				`{"type":"assistant","timestamp":"2026-01-01T00:00:03Z","message":{"id":"msg_2","model":"opus","role":"assistant","content":[{"type":"text","text":"Done."},{"type":"redacted_thinking","data":"x"}]}}`,
			},
			"2026-01-01 00:00:00 assistant · opus\n  thinking: plan\n  → Bash {\"command\":\"ls\"}\n2026-01-01 00:00:02 tool result · Bash · error\n  a\n  b\n2026-01-01 00:00:03 assistant · opus\n  Done.\n  thinking (redacted)\n"},
		{"user text, meta and compact summary",
			[]string{
				`{"type":"user","message":{"role":"user","content":"hello"},"uuid":"u1"}`,
				`{"type":"user","isMeta":true,"message":{"role":"user","content":[{"type":"text","text":"1\n2\n3\n4\n5\n6"}]},"uuid":"u2"}`,
				`{"type":"user","isCompactSummary":true,"message":{"role":"user","content":"earlier: x"},"uuid":"u3"}`,
			},
			"user\n  hello\nuser (meta)\n  1\n  2\n  3\n  4\n  5\n  … (1 more line, 11 bytes)\ncompaction\n  earlier: x\n"},
		{"image with base64 source and with a URL",
			[]string{`{"type":"user","message":{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"QUJDRA=="}},{"type":"image","source":{"type":"url","url":"https://example.com/a.png"}}]},"uuid":"u"}`},
			"user\n  [image image/jpeg, 4 bytes]\n  [image https://example.com/a.png]\n"},
		{"progress, system, summary and skipped lines",
			[]string{
				`{"type":"file-history-snapshot","messageId":"m","snapshot":{}}`,
				`{"type":"progress","data":{"type":"hook_progress","hookName":"PostToolUse:Read"}}`,
				`{"type":"progress","data":{"type":"bash_progress","output":"1\n2\n3"}}`,
				`{"type":"progress","data":{"type":"agent_progress","message":{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t2","name":"Grep","input":{"pattern":"x"}}]}}}}`,
				`{"type":"progress","data":{"type":"agent_progress","message":{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t2","content":"x"}]}}}}`,
				`{"type":"system","subtype":"api_error","level":"error","timestamp":"2026-01-01T00:00:00Z"}`,
				`{"type":"summary","summary":"Fixed the build","leafUuid":"x"}`,
			},
			"progress · hook_progress · PostToolUse:Read\nprogress · bash_progress · 3 lines of output\nprogress · agent_progress · → Grep {\"pattern\":\"x\"}\nprogress · agent_progress · result of Grep\n2026-01-01 00:00:00 system · api_error · error\nsummary · Fixed the build\n"},
	})
}

func TestCodex(t *testing.T) {
	runFormatCases(t, "codex", []formatCase{
		{"Codex 0.171 items",
			[]string{
				`{"timestamp":"2026-11-26T00:00:00Z","ordinal":7,"type":"id_allocation","payload":{"next_item_ordinal":42,"generated":[1,2]}}`,
				`{"timestamp":"2026-11-26T00:00:01Z","ordinal":8,"type":"token_usage_record","payload":{"input_tokens":9}}`,
			},
			"2026-11-26 00:00:00 id allocation · {\"next_item_ordinal\":42,\"generated\":[1,2]}\n2026-11-26 00:00:01 token usage record · {\"input_tokens\":9}\n"},
		{"results named by calls made and by calls of a compacted history",
			[]string{
				`{"timestamp":"t1","type":"response_item","payload":{"type":"local_shell_call","call_id":"c","action":{"type":"exec","command":["ls"]}}}`,
				`{"timestamp":"t2","type":"compacted","payload":{"message":"","replacement_history":[{"type":"local_shell_call","call_id":"c"},{"type":"function_call","call_id":"d","name":"exec_command"}]}}`,
				`{"timestamp":"t3","type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":"x"}}`,
				`{"timestamp":"t4","type":"response_item","payload":{"type":"function_call_output","call_id":"d","output":"y"}}`,
			},
			"t1 assistant\n  → shell ls\nt2 compaction\n  (history replaced by 2 items)\nt3 tool result · shell\n  x\nt4 tool result · exec_command\n  y\n"},
		{"a turn",
			[]string{
				`{"timestamp":"2025-09-01T00:00:00Z","type":"session_meta","payload":{"id":"r1","cli_version":"0.40.0","cwd":"/w","instructions":"be brief"}}`,
				`{"timestamp":"2025-09-01T00:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"go"},{"type":"input_image","image_url":"data:image/gif;base64,QUJD"}]}}`,
				`{"timestamp":"2025-09-01T00:00:01Z","type":"event_msg","payload":{"type":"user_message","message":"go"}}`,
				`{"timestamp":"2025-09-01T00:00:02Z","type":"response_item","payload":{"type":"reasoning","summary":[],"encrypted_content":"x"}}`,
				`{"timestamp":"2025-09-01T00:00:02Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"c1"}}`,
				`{"timestamp":"2025-09-01T00:00:03Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"{\"output\":\"a\\nb\\n\",\"metadata\":{\"exit_code\":3}}"}}`,
				`{"timestamp":"2025-09-01T00:00:04Z","type":"event_msg","payload":{"type":"turn_aborted","reason":"interrupted"}}`,
				`{"timestamp":"2025-09-01T00:00:05Z","type":"event_msg","payload":{"type":"error","message":"stream closed"}}`,
			},
			"2025-09-01 00:00:00 session · r1 · codex 0.40.0 · cwd /w\n  be brief\n2025-09-01 00:00:01 user\n  go\n  [image image/gif, 3 bytes]\n" +
				"2025-09-01 00:00:02 assistant\n  thinking (encrypted)\n  → shell {\"command\":[\"ls\"]}\n" +
				"2025-09-01 00:00:03 tool result · shell · exit 3\n  a\n  b\n2025-09-01 00:00:04 event · turn_aborted · interrupted\n2025-09-01 00:00:05 error · stream closed\n"},
		{"output that is not wrapped, and an array",
			[]string{
				`{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":"{\"not\":\"wrapped\"}"}}`,
				`{"timestamp":"t","type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"c","output":[{"type":"input_text","text":"seen"}]}}`,
			},
			"t tool result\n  {\"not\":\"wrapped\"}\nt tool result\n  seen\n"},
		{"legacy items, whose assistant items share a header",
			[]string{
				`{"id":"L","timestamp":"2025-04-01T00:00:00Z","instructions":""}`,
				`{"record_type":"state"}`,
				`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hi"}]}`,
				`{"type":"web_search_call","action":{"type":"search","query":"go 1.26"}}`,
				`{"type":"something_new"}`,
			},
			"2025-04-01 00:00:00 session · L · codex\nassistant\n  hi\n  → web search go 1.26\nline 5: codex entry of unknown type \"something_new\" (24 bytes)\n"},
	})
}

func TestChat(t *testing.T) {
	runFormatCases(t, "chat", []formatCase{
		{"messages",
			[]string{
				`{"role":"developer","content":"rules"}`,
				`{"role":"user","content":[{"type":"text","text":"see"},{"type":"image_url","image_url":"https://example.com/x.png"}],"created_at":1700000000123}`,
				`{"role":"assistant","content":"","tool_calls":[{"id":"k1","type":"function","function":{"name":"f","arguments":"not json"}}]}`,
				`{"role":"tool","tool_call_id":"k1","content":[{"type":"text","text":"out"}]}`,
			},
			"developer\n  rules\n2023-11-14 22:13:20 user\n  see\n  [image https://example.com/x.png]\nassistant\n  → f not json\ntool result · f\n  out\n"},
		{"a conversation",
			[]string{`{"id":"c","messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"}]}`},
			"conversation · c · 2 messages\nuser\n  q\nassistant\n  a\n"},
	})
}

func TestNotes(t *testing.T) {
	input := "\uFEFF{\"role\":\"user\",\"content\":\"bom\"}\r\nnot json\r\n\r\n42\r\n{\"a\":1}"
	assert.Equal(t, "user\n  bom\nline 2: not JSON (8 bytes): not json\nline 4: JSON number, not an entry: 42\nline 5: chat entry of unknown kind (7 bytes)\n",
		render(t, []byte(input), Options{Format: "chat"}))
	assert.Equal(t, "line 1: entry of unknown format (7 bytes)\n", render(t, []byte(`{"a":1}`), Options{}))

	err := Render(&strings.Builder{}, strings.NewReader("{}"), Options{Format: "nope"})
	assert.ErrorContains(t, err, `unknown format "nope"`)
}

func TestFull(t *testing.T) {
	input := `{"type":"message","message":{"role":"assistant","content":[{"type":"thinking","thinking":"a\nb"},{"type":"toolCall","name":"w","arguments":{"s":"` + strings.Repeat("y", 150) + `"}}]}}` + "\n" +
		`{"type":"message","message":{"role":"toolResult","toolName":"w","content":"1\n2\n3\n4\n5\n6\n7"}}`
	want := "assistant\n  thinking:\n    a\n    b\n  → w {\"s\":\"" + strings.Repeat("y", 150) + "\"}\ntool result · w\n  1\n  2\n  3\n  4\n  5\n  6\n  7\n"
	assert.Equal(t, want, render(t, []byte(input), Options{Format: "pi", Full: true}))
}

func TestColor(t *testing.T) {
	input := []byte(`{"type":"message","message":{"role":"user","content":"\u001b[31mred\u001b[0m"}}`)
	colored := render(t, input, Options{Format: "pi", Color: true})
	assert.Equal(t, "\x1b[1;32muser\x1b[0m\n  red\n", colored)
	plain := render(t, input, Options{Format: "pi"})
	assert.Equal(t, "user\n  red\n", plain)
}

// TestReferences shows a migrated entry's references, and rehydrates it
// when the store holds its artifacts; a missing artifact is reported and
// the entry shown as migrated.
func TestReferences(t *testing.T) {
	store := registry.New(local.New(t.TempDir()))
	payload := strings.Repeat("0123456789\n", 150)
	original := []byte(`{"type":"message","message":{"role":"toolResult","toolName":"read","content":"` + strings.ReplaceAll(payload, "\n", `\n`) + `","details":{"diff":"` + strings.Repeat("d", 1500) + `"}}}` + "\n")
	migrated := migrateAll(t, "pi", original, 100, store)
	require.NotEqual(t, string(original), string(migrated))

	text := storepkg.Sum([]byte(payload))
	diff := storepkg.Sum([]byte(strings.Repeat("d", 1500)))
	shown := render(t, migrated, Options{Format: "pi", Store: store})
	assert.Equal(t, "tool result · read\n"+
		"  ⧉ artifact "+text.String()[:12]+" · 1650 bytes text · "+store.Path(text)+"\n"+
		"  /message/details/diff: ⧉ artifact "+diff.String()[:12]+" · 1500 bytes text · "+store.Path(diff)+"\n", shown)

	assert.Contains(t, render(t, migrated, Options{Format: "pi"}), "⧉ artifact "+text.String()[:12]+" · text\n",
		"without a store, a reference has no size or path")

	plain := render(t, original, Options{Format: "pi"})
	assert.Equal(t, plain, render(t, migrated, Options{Format: "pi", Store: store, Rehydrate: true}))

	require.NoError(t, os.Remove(store.Path(diff)))
	var problems []int
	got := render(t, migrated, Options{Format: "pi", Store: store, Rehydrate: true, Problem: func(l transcript.Line, err error) {
		problems = append(problems, l.Num)
		assert.ErrorIs(t, err, storepkg.ErrNotFound)
	}})
	assert.Equal(t, []int{1}, problems)
	assert.True(t, strings.HasPrefix(got, "line 1: cannot rehydrate (artifact for /message/details/diff: "), got)
	assert.Contains(t, got, "/message/details/diff: ⧉ artifact "+diff.String()[:12]+" · not in store text · ")
}

// TestPlaceholderLookalike shows genuine text that looks like a
// placeholder as text, and an entry's own member called like the marker
// as no reference.
func TestPlaceholderLookalike(t *testing.T) {
	id := strings.Repeat("ab", 32)
	input := `{"type":"message","message":{"role":"toolResult","toolName":"read","content":"[Tool result omitted: stored as artifact]\nid: ` + id + `"},"transcriptTool":{"v":1,"sha256":"0","edits":[{"at":"/message/content","parts":[{"id":"` + id + `","form":"js"}]}]}}`
	assert.Equal(t, "tool result · read\n  [Tool result omitted: stored as artifact]\n  id: "+id+"\n", render(t, []byte(input), Options{Format: "pi"}))
}

type failWriter struct{ n int }

func (w *failWriter) Write(b []byte) (int, error) {
	w.n++
	return 0, errors.New("pipe closed")
}

type countReader struct {
	r *strings.Reader
	n int
}

func (c *countReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += n
	return n, err
}

func TestWriteError(t *testing.T) {
	var b strings.Builder
	for i := range 100000 {
		b.WriteString(`{"role":"user","content":"message ` + strconv.Itoa(i) + `"}` + "\n")
	}
	w := &failWriter{}
	r := &countReader{r: strings.NewReader(b.String())}
	err := Render(w, r, Options{Format: "chat"})
	assert.EqualError(t, err, "pipe closed")
	assert.Equal(t, 1, w.n)
	assert.Less(t, r.n, b.Len()/4, "reading stops soon after the first failed write")
}

// TestCallsBounded: the calls remembered are bounded, the newest kept.
func TestCallsBounded(t *testing.T) {
	p := &printer{}
	for i := range format.MaxCalls + 10 {
		p.rememberCall("id"+strconv.Itoa(i), "tool")
	}
	assert.Equal(t, format.MaxCalls, p.calls.Len())
	assert.Equal(t, "tool", p.toolOf("id"+strconv.Itoa(format.MaxCalls+9)))
	assert.Empty(t, p.toolOf("id0"))
}

// TestGemini: entries of Gemini CLI by hand, and the session Gemini CLI
// 0.61.0 wrote with a rewind, whose every line is known and which shows,
// migrated and rehydrated, as the original.
func TestGemini(t *testing.T) {
	runFormatCases(t, "gemini", []formatCase{
		{"a turn",
			[]string{
				`{"sessionId":"s1","projectHash":"h","startTime":"2026-11-27T02:52:47.188Z","lastUpdated":"2026-11-27T02:52:47.188Z","kind":"main"}`,
				`{"$set":{"lastUpdated":"2026-11-27T02:52:48.954Z"}}`,
				`{"id":"u1","timestamp":"2026-11-27T02:52:48.954Z","type":"user","content":[{"text":"read it"}]}`,
				`{"id":"g1","timestamp":"2026-11-27T02:52:50.595Z","type":"gemini","content":"","thoughts":[],"model":"gemini-2.5-pro"}`,
				`{"id":"g1","timestamp":"2026-11-27T02:52:50.595Z","type":"gemini","content":"","thoughts":[{"subject":"S","description":"look first"}],"model":"gemini-2.5-pro","toolCalls":[{"id":"c1","name":"read_file","args":{"file_path":"/w/a.png"},"result":[{"functionResponse":{"id":"c1","name":"read_file","response":{"output":"Binary content provided (1 item(s))."}}},{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="}}],"status":"success"}]}`,
				`{"id":"u2","timestamp":"2026-11-27T02:52:51.431Z","type":"user","content":[{"functionResponse":{"id":"c1","name":"read_file","response":{"output":"Binary content provided (1 item(s))."}}}]}`,
				`{"$rewindTo":"u2"}`,
				`{"id":"e1","timestamp":"2026-11-27T02:52:52.000Z","type":"error","content":"quota"}`,
			},
			"2026-11-27 02:52:47 session · s1 · gemini · main\n2026-11-27 02:52:48 user\n  read it\n" +
				"2026-11-27 02:52:50 assistant · gemini-2.5-pro\n  thinking: look first\n  → read_file {\"file_path\":\"/w/a.png\"}\n" +
				"tool result · read_file · success\n  Binary content provided (1 item(s)).\n  [image/png, 8 bytes]\n" +
				"2026-11-27 02:52:51 results to the model · 1 call\nrewind · to u2\n2026-11-27 02:52:52 error\n  quota\n"},
	})

	plain := agentSession(t, "gemini-rewind.jsonl", "gemini")
	assert.Contains(t, plain, "\nrewind · to bcf329ee-a41c-44ef-8fa9-340f20d185b1\n")
	assert.Contains(t, plain, " messages set · 8 messages\n")
}

// agentSession renders the session name of testdata/sessions, which an
// agent wrote, in format and returns it: every line is known, and the
// session migrated shows references, and rehydrated the original.
func agentSession(t *testing.T, name, format string) string {
	t.Helper()
	input, err := os.ReadFile("../testdata/sessions/" + name)
	require.NoError(t, err)
	store := registry.New(local.New(t.TempDir()))
	plain := render(t, input, Options{Format: format, Store: store})
	assert.NotContains(t, plain, "\nline ", "an entry the renderer does not know")
	migrated := migrateAll(t, format, input, 4096, store)
	refs := render(t, migrated, Options{Format: format, Store: store})
	assert.Contains(t, refs, "⧉ artifact ")
	assert.NotContains(t, refs, "omitted: stored as artifact", "placeholders are shown as references")
	assert.Equal(t, plain, render(t, migrated, Options{Format: format, Store: store, Rehydrate: true}))
	return plain
}

// TestQwen: the session Qwen Code 0.24.4 wrote, every line known, shown
// migrated and rehydrated as the original.
func TestQwen(t *testing.T) {
	plain := agentSession(t, "qwen-session.jsonl", "qwen")
	assert.Contains(t, plain, " user · real_user\n  Read, count, write.\n")
	assert.Contains(t, plain, " tool result · run_shell_command\n  Command: seq 1 1500\n")
	assert.Contains(t, plain, " system · ui_telemetry\n")
}

// TestEveryFormatRendered: each format declared in package format has a
// renderer, so that a format added there is not shown as notes of
// unknown entries; no renderer is for a format not declared.
func TestEveryFormatRendered(t *testing.T) {
	declared := map[string]bool{}
	for _, f := range format.Formats() {
		declared[f.Name()] = true
		assert.Contains(t, renderers, f.Name())
	}
	for name := range renderers {
		assert.True(t, declared[name], "renderer of undeclared format %q", name)
	}
}
