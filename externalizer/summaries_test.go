package externalizer

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/format"
	"github.com/transcript-tool/transcript-tool/internal/display"
	"github.com/transcript-tool/transcript-tool/summary"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// summariesDir holds one golden file per kind of summary.
const summariesDir = goldenDir + "/summaries"

// made is an artifact a migration made, and the line it came from.
type made struct {
	line int
	a    Artifact
}

// migrated rewrites input line by line with one Externalizer, as migrate
// does, and returns the artifacts it made.
func migrated(t testing.TB, f Format, threshold int, input []byte) []made {
	t.Helper()
	store := memStore{}
	x := &Externalizer{Format: f, Threshold: threshold, PathFor: testPath, Put: store.put, Open: store.open}
	var out []made
	r := transcript.NewReader(bytes.NewReader(input))
	for {
		l, err := r.Next()
		if err != nil {
			return out
		}
		res, err := x.Rewrite(l.Text, transcript.JSONStart(l))
		require.NoError(t, err, "line %d", l.Num)
		for _, a := range res.Artifacts {
			out = append(out, made{l.Num, a})
		}
	}
}

// TestSummaryGolden writes the summary of every artifact that migrating
// the bundled sessions makes, one golden file per kind of summary
// (testdata/golden/summaries/KIND.txt, rewritten by -update), each line
// the session and line, the site, the tool and the summary.
func TestSummaryGolden(t *testing.T) {
	byKind := map[summary.Kind]*bytes.Buffer{}
	for _, name := range sessionFiles(t) {
		input, f := readSession(t, name)
		for _, m := range migrated(t, f, 4096, input) {
			b := byKind[m.a.kind]
			if b == nil {
				b = &bytes.Buffer{}
				byKind[m.a.kind] = b
			}
			tool := m.a.Tool
			if tool == "" {
				tool = "-"
			}
			fmt.Fprintf(b, "%s:%d %s %s: %s\n", filepath.Base(name), m.line, m.a.Site, tool, m.a.Summary)
		}
	}
	for _, k := range []summary.Kind{summary.KindRead, summary.KindShell, summary.KindDiff, summary.KindJSON, summary.KindImage, summary.KindText} {
		require.Contains(t, byKind, k, "no %s summary in the bundled sessions", k)
	}
	for k, b := range byKind {
		golden := filepath.Join(summariesDir, string(k)+".txt")
		if *update {
			require.NoError(t, os.MkdirAll(summariesDir, 0o755))
			require.NoError(t, os.WriteFile(golden, b.Bytes(), 0o644))
			continue
		}
		want, err := os.ReadFile(golden)
		require.NoError(t, err, "run go test ./externalizer -update")
		if !bytes.Equal(b.Bytes(), want) {
			t.Errorf("%s summaries differ from %s (go test ./externalizer -update rewrites it):\n%s", k, golden, firstDiff(want, b.Bytes()))
		}
	}
	files, err := filepath.Glob(filepath.Join(summariesDir, "*.txt"))
	require.NoError(t, err)
	for _, file := range files {
		assert.Contains(t, byKind, summary.Kind(strings.TrimSuffix(filepath.Base(file), ".txt")), "%s: a kind no summary is any more", file)
	}
}

// TestSummariesCorpus migrates ../shared/corpus, when it is there, and
// checks what the summaries say: each kind a real session holds is
// found, no summary of a successful call speaks of errors (a Markdown
// spec with an "Error Handling" heading is no failure), and every
// artifact of a tool's output names its tool.
func TestSummariesCorpus(t *testing.T) {
	files, _ := filepath.Glob("../../shared/corpus/*/*.jsonl")
	if len(files) == 0 {
		t.Skip("no ../shared/corpus")
	}
	kinds := map[summary.Kind]int{}
	for _, name := range files {
		input, err := os.ReadFile(name)
		require.NoError(t, err)
		f, ok := detectFormat(input)
		if !ok {
			continue
		}
		for _, m := range migrated(t, f, 4096, input) {
			where := fmt.Sprintf("%s:%d %s", filepath.Base(name), m.line, m.a.Site)
			kinds[m.a.kind]++
			checkSummary(t, where, m.a)
		}
	}
	t.Logf("summaries by kind: %v", kinds)
	for _, k := range []summary.Kind{summary.KindRead, summary.KindShell, summary.KindDiff, summary.KindText} {
		assert.Positive(t, kinds[k], "no %s summary", k)
	}
}

// checkSummary checks an artifact's summary and tool name: one clean
// line within summary.Max; no error word for a call that did not fail;
// the tool named for the output of a call.
func checkSummary(t *testing.T, where string, a Artifact) {
	t.Helper()
	assert.NotEmpty(t, a.Summary, where)
	assert.Equal(t, display.Line(a.Summary, summary.Max), a.Summary, "%s: not one clean line within summary.Max", where)
	if !a.ctx.Failed && !format.FailedExit(a.ctx.Exit) {
		assert.False(t, summary.LooksLikeError([]byte(a.Summary)), "%s: %q, of a call that did not fail", where, a.Summary)
	}
	if a.ToolCallID != "" {
		assert.NotEmpty(t, a.Tool, "%s: the output of call %s names no tool", where, a.ToolCallID)
	}
}

// TestToolNamedFromCall: the sites of Claude Code, Codex and chat that
// know their call only by id are named after the call, seen on an
// earlier line or earlier on the same one, and summarized with its
// argument.
func TestToolNamedFromCall(t *testing.T) {
	out := strings.Repeat("output line\n", 500)
	tests := []struct {
		name  string
		f     Format
		lines []string
		tool  []string
		sum   []string
	}{
		{"claude-code: tool_result and toolUseResult", claudeCodeFormat, []string{
			`{"type":"assistant","sessionId":"s","uuid":"a","message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"/p/README.md"}}]}}`,
			`{"type":"user","sessionId":"s","uuid":"b","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","is_error":false,"content":` + jsonString(t, "     1→# Title\n"+out) + `}]},"toolUseResult":{"type":"text","file":{"filePath":"/p/README.md","content":` + jsonString(t, "# Title\n"+out) + `}}}`,
		}, []string{"Read", "Read"}, []string{"read /p/README.md (501 lines): # Title", "read /p/README.md (501 lines): # Title"}},
		{"claude-code: a failed Bash", claudeCodeFormat, []string{
			`{"type":"assistant","sessionId":"s","uuid":"a","message":{"content":[{"type":"tool_use","id":"toolu_2","name":"Bash","input":{"command":"make test"}}]}}`,
			`{"type":"user","sessionId":"s","uuid":"b","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_2","is_error":true,"content":` + jsonString(t, "Exit code 2\n"+out+"make: *** [test] Error 1\n") + `}]}}`,
		}, []string{"Bash"}, []string{`$ make test — exit 2: "make: *** [test] Error 1" (502 lines)`}},
		{"claude-code: Bash marked as no error exited 0; not marked, no status", claudeCodeFormat, []string{
			`{"type":"assistant","sessionId":"s","uuid":"a","message":{"content":[{"type":"tool_use","id":"toolu_3","name":"Bash","input":{"command":"ls"}},{"type":"tool_use","id":"toolu_4","name":"Bash","input":{"command":"ls -a"}}]}}`,
			`{"type":"user","sessionId":"s","uuid":"b","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_3","is_error":false,"content":` + jsonString(t, out) + `}]}}`,
			`{"type":"user","sessionId":"s","uuid":"c","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_4","content":` + jsonString(t, "."+out) + `}]}}`,
		}, []string{"Bash", "Bash"}, []string{"$ ls — exit 0 (500 lines)", "$ ls -a (500 lines)"}},
		{"codex: function_call, its output's header", codexFormat, []string{
			`{"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"cat log\"}","call_id":"call_1"}}`,
			`{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":` + jsonString(t, "Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 0\nOutput:\n"+out) + `}}`,
		}, []string{"exec_command"}, []string{"$ cat log — exit 0 (500 lines)"}},
		{"codex: a compacted history's own calls", codexFormat, []string{
			`{"timestamp":"t","type":"compacted","payload":{"message":"m","replacement_history":[{"type":"local_shell_call","call_id":"c9","action":{"type":"exec","command":["bash","-lc","ls -l"]}},{"type":"function_call_output","call_id":"c9","output":` + jsonString(t, out) + `}]}}`,
		}, []string{"local_shell"}, []string{"$ ls -l (500 lines)"}},
		{"chat: tool_calls in a messages array", chatFormat, []string{
			`{"messages":[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"notes.md\"}"}}]},{"role":"tool","tool_call_id":"c1","content":` + jsonString(t, "\n## Notes\n"+out) + `}]}`,
		}, []string{"read_file"}, []string{"read notes.md (502 lines): ## Notes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			input := []byte(strings.Join(tt.lines, "\n") + "\n")
			var tools, sums []string
			for _, m := range migrated(t, tt.f, 4096, input) {
				tools, sums = append(tools, m.a.Tool), append(sums, m.a.Summary)
			}
			assert.Equal(t, tt.tool, tools)
			assert.Equal(t, tt.sum, sums)
			roundTrip(t, tt.f, 4096, input)
		})
	}
}
