package externalizer

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	storepkg "github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// migratedValue returns the value at p of the one migrated line out.
func migratedValue(t *testing.T, out []byte, p Pointer) transcript.Value {
	t.Helper()
	root, err := transcript.Parse(bytes.TrimSuffix(out, []byte("\n")), 0)
	require.NoError(t, err)
	v, ok := p.Resolve(root)
	require.True(t, ok, "%s does not resolve in %s", p, out)
	return v
}

// TestPi1Sites: the entries pi 0.87 and later write. A context_edit's
// replacement content, which pi puts in the model's context instead of
// the content of an earlier message, is a site: whole when it is a
// string, and in an array the text of each text block and each image
// block, so that an assistant's tool calls stay; a compaction's system
// message and a custom_message give up their images; and the prompt
// sections and tool declarations of a system message, which are the
// model's system prompt, stay.
func TestPi1Sites(t *testing.T) {
	const header = `{"type":"session","version":3,"id":"s1","timestamp":"2026-11-26T00:00:00.000Z","cwd":"/w"}` + "\n"
	text := jsonString(t, payloadText)
	img := base64.StdEncoding.EncodeToString(pngBytes)
	image := `{"type":"image","data":"` + img + `","mimeType":"image/png"}`
	sections := jsonString(t, strings.Repeat("You are an expert coding assistant. ", 200))
	tools := `[` + strings.Repeat(`{"name":"read","description":"Read a file.","parameters":{"type":"object"}},`, 60) + `{"name":"bash"}]`
	system := `{"role":"system","content":"","sections":{"preamble":` + sections + `},"toolsAdded":` + tools + `,"timestamp":1}`
	tests := []struct {
		name, line string
		sites      []Pointer // the values replaced, in document order
		kept       []Pointer // large values left as they are
	}{
		{"context_edit string", `{"type":"context_edit","id":"e1","parentId":"p","timestamp":"t","targetId":"r1","replacement":{"content":` + text + `}}`,
			[]Pointer{{"replacement", "content"}}, nil},
		{"context_edit blocks", `{"type":"context_edit","id":"e1","parentId":"p","timestamp":"t","targetId":"a1","replacement":{"content":[{"type":"text","text":` + text +
			`},{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"ls"}},` + image + `]}}`,
			[]Pointer{{"replacement", "content", "0", "text"}, {"replacement", "content", "2"}}, nil},
		{"context_edit omission", `{"type":"context_edit","id":"e1","parentId":"p","timestamp":"t","targetId":"r1","replacement":null}`, nil, nil},
		{"compaction with a system message", `{"type":"compaction","id":"c1","parentId":"p","timestamp":"t","summary":"s","firstKeptEntryId":"c1","tokensBefore":9,"systemMessage":` +
			strings.Replace(system, `"content":""`, `"content":[{"type":"text","text":"look"},`+image+`]`, 1) + `}`,
			[]Pointer{{"systemMessage", "content", "1"}}, []Pointer{{"systemMessage", "sections"}, {"systemMessage", "toolsAdded"}}},
		{"system message", `{"type":"message","id":"m1","parentId":"p","timestamp":"t","message":` + system + `}`,
			nil, []Pointer{{"message", "sections"}, {"message", "toolsAdded"}}},
		{"custom_message image", `{"type":"custom_message","id":"m1","parentId":"p","timestamp":"t","customType":"screenshot","content":[` + image + `],"display":true}`,
			[]Pointer{{"content", "0"}}, nil},
		{"an entry type of a later pi", `{"type":"context_snapshot","id":"x1","parentId":"p","timestamp":"t","message":{"role":"toolResult","toolName":"bash","content":` + text + `}}`,
			nil, []Pointer{{"message", "content"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			input := []byte(header + tt.line + "\n")
			out, store := roundTrip(t, piFormat, 4096, input)
			checkMigrated(t, piFormat, 4096, input, out, store)
			checkNoSiteMissed(t, piFormat, 4096, out)
			line := out[len(header):]
			if len(tt.sites) == 0 {
				assert.Equal(t, tt.line+"\n", string(line), "the line is kept as it is")
				return
			}
			root, err := transcript.Parse(bytes.TrimSuffix(line, []byte("\n")), 0)
			require.NoError(t, err)
			mk, ok := markerOf(t, root)
			require.True(t, ok)
			var at []string
			for _, e := range mk.Edits {
				at = append(at, e.At)
			}
			var want []string
			for _, p := range tt.sites {
				want = append(want, p.String())
			}
			assert.Equal(t, want, at, "the sites replaced")
			for _, p := range tt.kept {
				orig := migratedValue(t, []byte(tt.line), p)
				assert.Equal(t, string(orig.Raw()), string(migratedValue(t, line, p).Raw()), "%s is kept", p)
			}
			assert.True(t, json.Valid(bytes.TrimSuffix(line, []byte("\n"))))
		})
	}
}

// TestKnows: each format tells the entries of the kinds it knows from
// those of kinds an agent added later, which stats counts as not
// understood.
func TestKnows(t *testing.T) {
	for _, tt := range []struct {
		f     Format
		line  string
		knows bool
	}{
		{piFormat, `{"type":"context_edit","id":"e","targetId":"r","replacement":null}`, true},
		{piFormat, `{"type":"usage","id":"u","kind":"cache_warm"}`, true},
		{piFormat, `{"type":"message","message":{"role":"system","content":""}}`, true},
		{piFormat, `{"type":"context_snapshot","id":"x"}`, false},
		{piFormat, `{"id":"x"}`, false},
		{claudeCodeFormat, `{"type":"content-replacement","sessionId":"s","replacements":[]}`, true},
		{claudeCodeFormat, `{"type":"progress","sessionId":"s","data":{"type":"bash_progress"}}`, true},
		{claudeCodeFormat, `{"type":"hologram","sessionId":"s"}`, false},
		{codexFormat, `{"timestamp":"t","type":"id_allocation","payload":{}}`, true},
		{codexFormat, `{"timestamp":"t","type":"world_state","payload":{"full":true}}`, true},
		{codexFormat, `{"timestamp":"t","type":"telemetry","payload":{}}`, false},
		{codexFormat, `{"id":"s","timestamp":"t","instructions":null}`, true},
		{codexFormat, `{"record_type":"state"}`, true},
		{codexFormat, `{"type":"function_call_output","call_id":"c","output":"ok"}`, true},
		{codexFormat, `{"type":"hologram"}`, false},
		{chatFormat, `{"role":"tool","content":"ok"}`, true},
		{chatFormat, `{"role":"narrator","content":"ok"}`, false},
	} {
		v, err := transcript.Parse([]byte(tt.line), 0)
		require.NoError(t, err)
		assert.Equal(t, tt.knows, tt.f.Knows(v), "%s: %s", tt.f.Name(), tt.line)
	}
}

// TestCodexOpaqueItems: the rollout items Codex 0.171 added, whose
// shapes are not known (id_allocation) or hold no payload, pass through
// as they are, however large.
func TestCodexOpaqueItems(t *testing.T) {
	text := jsonString(t, payloadText)
	input := []byte(`{"timestamp":"t","type":"session_meta","payload":{"id":"s"}}` + "\n" +
		`{"timestamp":"t","ordinal":3,"type":"id_allocation","payload":{"generated":` + text + `,"output":` + text + `}}` + "\n" +
		`{"timestamp":"t","ordinal":4,"type":"world_state","payload":{"full":true,"state":` + text + `}}` + "\n")
	out, store := roundTrip(t, codexFormat, 4096, input)
	assert.Equal(t, string(input), string(out))
	assert.Empty(t, store)
}

// TestImagePlaceholders: an image wherever an agent keeps it (a user's
// message, a compacted history, a tool's output) is stored as its bytes,
// and its placeholder is of a type the agent's API takes in its place (an
// input_image becomes an input_text, an image block a text block) and
// tells the model which of the agent's tools shows it the image again, on
// the artifact's path. The same image in several places is one artifact.
func TestImagePlaceholders(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString(pngBytes)
	url := `"data:image/png;base64,` + b64 + `"`
	codexUser := `{"type":"message","role":"user","content":[{"type":"input_text","text":"<image name=[Image #1]>"},{"type":"input_image","image_url":` + url + `,"detail":"high"},{"type":"input_text","text":"Look."}]}`
	id := storepkg.Sum(pngBytes).String()
	path := testPath(storepkg.Sum(pngBytes))
	tests := []struct {
		name   string
		f      Format
		lines  []string
		at     Pointer // of the last line's placeholder
		want   string  // its JSON
		shared int     // the artifacts of all the lines
	}{
		{"codex user message", codexFormat, []string{`{"timestamp":"t","type":"response_item","payload":` + codexUser + `}`},
			Pointer{"payload", "content", "1"},
			`{"type":"input_text","text":"[Image omitted: stored as artifact ` + id + ` (image/png, 4808 bytes); call view_image with path ` + path + ` to see it again]"}`, 1},
		{"codex compactions and the prompt's event", codexFormat, []string{
			`{"timestamp":"t","type":"response_item","payload":` + codexUser + `}`,
			`{"timestamp":"t","type":"event_msg","payload":{"type":"user_message","message":"Look.","images":[` + url + `]}}`,
			`{"timestamp":"t","type":"compacted","payload":{"message":"one","replacement_history":[` + codexUser + `]}}`,
			`{"timestamp":"t","type":"compacted","payload":{"message":"two","replacement_history":[` + codexUser + `]}}`},
			Pointer{"payload", "replacement_history", "0", "content", "1"},
			`{"type":"input_text","text":"[Image omitted: stored as artifact ` + id + ` (image/png, 4808 bytes); call view_image with path ` + path + ` to see it again]"}`, 1},
		{"codex legacy item", codexFormat, []string{`{"id":"s","timestamp":"t","instructions":null}`, codexUser},
			Pointer{"content", "1", "type"}, `"input_text"`, 1},
		{"claude-code user message", claudeCodeFormat, []string{`{"parentUuid":"u0","sessionId":"s1","type":"user","message":{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + b64 + `"}},{"type":"text","text":"Look."}]}}`},
			Pointer{"message", "content", "0"},
			`{"type":"text","text":"[Image omitted: stored as artifact ` + id + ` (image/png, 4808 bytes); call Read with file_path ` + path + ` to see it again]"}`, 1},
		{"pi user message", piFormat, []string{`{"type":"session","version":3,"id":"s"}`, `{"type":"message","id":"m1","message":{"role":"user","content":[{"type":"text","text":"Look."},{"type":"image","data":"` + b64 + `","mimeType":"image/png"}]}}`},
			Pointer{"message", "content", "1"},
			`{"type":"text","text":"[Image omitted: stored as artifact ` + id + ` (image/png, 4808 bytes); call read with path ` + path + ` to see it again]"}`, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			input := []byte(strings.Join(tt.lines, "\n") + "\n")
			out, store := roundTrip(t, tt.f, 4096, input)
			checkMigrated(t, tt.f, 4096, input, out, store)
			checkNoSiteMissed(t, tt.f, 4096, out)
			assert.Len(t, store, tt.shared)
			assert.Equal(t, pngBytes, store[storepkg.Sum(pngBytes)], "the image's bytes")
			lines := bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n"))
			assert.Equal(t, tt.want, string(migratedValue(t, lines[len(lines)-1], tt.at).Raw()))
			assert.Less(t, len(out), len(input)/5)
		})
	}

	t.Run("codex tool output", func(t *testing.T) {
		input := []byte(`{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"call_img","output":[{"type":"input_image","image_url":` + url + `,"detail":"high"}]}}` + "\n")
		out, store := roundTrip(t, codexFormat, 4096, input)
		checkMigrated(t, codexFormat, 4096, input, out, store)
		hint := migratedValue(t, out, Pointer{"payload", "output", "0", "text"}).Text()
		assert.Contains(t, hint, "\npath: "+path+"\nimage: call view_image with path "+path+" to see it again")
	})
}

// TestCodexRepeatedInstructions: the AGENTS.md text and developer
// instructions that Codex up to 0.98 wrote in every turn_context are one
// artifact each for all the turns; the base instructions of session_meta,
// which Codex sends to the model when it resumes, and 0.171's world_state
// stay. (The e2e test of the same name shows Codex resumes such a
// rollout with the same request.)
func TestCodexRepeatedInstructions(t *testing.T) {
	agents := jsonString(t, strings.Repeat("- Keep functions short and test what can fail.\n", 120))
	developer := jsonString(t, strings.Repeat("Answer as a careful reviewer. ", 200))
	base := jsonString(t, strings.Repeat("You are Codex, a coding agent. ", 300))
	turn := `{"timestamp":"t","type":"turn_context","payload":{"cwd":"/w","approval_policy":"never","sandbox_policy":{"type":"danger-full-access"},"model":"gpt-5.2-codex","effort":"high","summary":"auto","user_instructions":` +
		agents + `,"developer_instructions":` + developer + `,"truncation_policy":{"mode":"tokens","limit":10000}}}`
	kept := []string{
		`{"timestamp":"t","type":"session_meta","payload":{"id":"s","cwd":"/w","cli_version":"0.98.0","base_instructions":{"text":` + base + `}}}`,
		`{"timestamp":"t","ordinal":4,"type":"world_state","payload":{"full":true,"state":{"agents_md":{"directory":"/w","text":` + agents + `}}}}`,
	}
	input := []byte(strings.Join(append(kept, turn, turn, turn), "\n") + "\n")
	out, store := roundTrip(t, codexFormat, 4096, input)
	checkMigrated(t, codexFormat, 4096, input, out, store)
	checkNoSiteMissed(t, codexFormat, 4096, out)
	assert.Len(t, store, 2, "the two texts, once each")
	lines := strings.Split(string(out), "\n")
	assert.Equal(t, kept, lines[:2], "session_meta and world_state are kept")
	assert.NotContains(t, strings.Join(lines[2:], "\n"), agents[1:200])
	assert.Less(t, len(out), len(input)/2)
}

// TestClaudeProgressSites: the large strings of a progress line's data,
// which Claude Code skips when it loads a session, are payloads: a
// command's output so far and its last lines, a hook's prompt; the tool
// results of a subagent's message too.
func TestClaudeProgressSites(t *testing.T) {
	full := jsonString(t, payloadText)
	last := jsonString(t, strings.Repeat("the last lines of the output\n", 200))
	envelope := `"parentUuid":"a1","isSidechain":false,"userType":"external","cwd":"/w","sessionId":"s1","version":"2.1.332","gitBranch":"main","type":"progress",`
	input := []byte(strings.Join([]string{
		`{` + envelope + `"data":{"type":"bash_progress","output":` + last + `,"fullOutput":` + full + `,"elapsedTimeSeconds":3,"totalLines":120,"totalBytes":6000,"taskId":"bq1","timeoutMs":120000},"toolUseID":"bash-progress-0","parentToolUseID":"toolu_1","uuid":"p1","timestamp":"t"}`,
		`{` + envelope + `"data":{"type":"hook_progress","hookEvent":"UserPromptSubmit","hookName":"UserPromptSubmit","command":"./context.sh","promptText":` + full + `},"parentToolUseID":"toolu_1","toolUseID":"toolu_1","uuid":"p2","timestamp":"t"}`,
		`{` + envelope + `"data":{"type":"agent_progress","message":{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_9","content":` + full + `}]}},"prompt":"explore","agentId":"a9"},"toolUseID":"agent_msg_1","parentToolUseID":"toolu_1","uuid":"p3","timestamp":"t"}`,
	}, "\n") + "\n")
	out, store := roundTrip(t, claudeCodeFormat, 4096, input)
	checkMigrated(t, claudeCodeFormat, 4096, input, out, store)
	checkNoSiteMissed(t, claudeCodeFormat, 4096, out)
	assert.Equal(t, 2, len(store), "the output, once for all its copies, and its last lines")
	assert.Less(t, len(out), len(input)/5)
	for i, p := range []Pointer{{"data", "fullOutput"}, {"data", "promptText"}, {"data", "message", "message", "content", "0", "content"}} {
		line := bytes.Split(out, []byte("\n"))[i]
		assert.Contains(t, strings.ToLower(migratedValue(t, line, p).Text()), "omitted", "line %d: %s", i+1, p)
	}
}

// TestClaudePersistedOutput: when Claude Code stores a large output in
// its own tool-results/ file, the model sees a <persisted-output>
// preview, but toolUseResult.stdout still holds the first 30,000
// characters of the output: that copy is a payload; the preview, which
// is what the model reads, and the path of Claude Code's file stay.
func TestClaudePersistedOutput(t *testing.T) {
	var out strings.Builder
	for i := 1; out.Len() < 64<<10; i++ {
		fmt.Fprintf(&out, "shell output line %04d of a long build log\n", i)
	}
	stdout := out.String()[:29999]
	preview := "<persisted-output>\nOutput too large (63.3KB). Full output saved to: /home/dev/.claude/projects/-w/s1/tool-results/bd8vo77z1.txt\n\nPreview (first 2KB):\n" +
		out.String()[:2000] + "\n...\n</persisted-output>"
	input := claudeLine(jsonString(t, preview), `{"stdout":`+jsonString(t, stdout)+`,"stderr":"","interrupted":false,"isImage":false,"noOutputExpected":false,`+
		`"persistedOutputPath":"/home/dev/.claude/projects/-w/s1/tool-results/bd8vo77z1.txt","persistedOutputSize":64813}`)
	migrated, store := roundTrip(t, claudeCodeFormat, 4096, input)
	checkMigrated(t, claudeCodeFormat, 4096, input, migrated, store)
	assert.Equal(t, stdout, string(store[storepkg.Sum([]byte(stdout))]), "stdout is an artifact")
	assert.Equal(t, preview, migratedValue(t, migrated, Pointer{"message", "content", "0", "content"}).Text(), "the preview stays")
	assert.Equal(t, "/home/dev/.claude/projects/-w/s1/tool-results/bd8vo77z1.txt", migratedValue(t, migrated, Pointer{"toolUseResult", "persistedOutputPath"}).Text())
	assert.Less(t, len(migrated), len(input)/5)
}
