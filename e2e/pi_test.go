package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// piPins are the pi releases the tests drive: the last under the package's
// first name, and the first of its new one, which needs Node 22.
var piPins = []string{"@mariozechner/pi-coding-agent@0.73.1", "@earendil-works/pi-coding-agent@1.6.0"}

// forEachPi runs test for each pi release of piPins (and the latest
// installed, see agentPins), as a subtest named by the package.
func forEachPi(t *testing.T, test func(t *testing.T, pi agent)) {
	for _, pin := range piPins {
		name, _ := splitPin(pin)
		t.Run(strings.Split(name, "/")[0], func(t *testing.T) {
			forEachPin(t, pin, func(t *testing.T, pin string) { test(t, findAgent(t, pin, "pi")) })
		})
	}
}

// TestPi has pi write a session against the stand-in, migrates
// ~/.pi/agent/sessions in place, and resumes the session with
// `--session FILE`: pi runs in the session header's cwd, and its read
// tool and bash open the placeholder's path.
func TestPi(t *testing.T) {
	forEachPi(t, func(t *testing.T, pi agent) { runE2E(t, piCase(pi)) })
}

// piCase is pi's part in the end-to-end flow.
func piCase(pi agent) agentCase {
	return agentCase{
		Tools: agentTools{
			Shell: func(command string) toolCall {
				return toolCall{Name: "bash", Input: map[string]any{"command": command}}
			},
			Read: func(path string) toolCall {
				return toolCall{Name: "read", Input: map[string]any{"path": path}}
			},
		},
		Configure: func(t *testing.T, home, url string) {
			// A provider of its own speaking the Messages API, with
			// "image" input, or pi leaves images out of its requests.
			models := map[string]any{"providers": map[string]any{"standin": map[string]any{
				"baseUrl": url, "api": "anthropic-messages", "apiKey": "x",
				"models": []any{map[string]any{"id": "standin-model", "input": []string{"text", "image"},
					"contextWindow": 200000, "maxTokens": 8000}},
			}}}
			b, err := json.Marshal(models)
			require.NoError(t, err)
			dir := filepath.Join(home, ".pi", "agent")
			require.NoError(t, os.MkdirAll(dir, 0o700))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "models.json"), b, 0o600))
		},
		Sessions: func(home string) string { return filepath.Join(home, ".pi", "agent", "sessions") },
		Run: func(t *testing.T, r agentRun) {
			args := []string{"--offline", "--provider", "standin", "--model", "standin-model"}
			if r.Session != "" {
				args = append(args, "--session", r.Session)
			}
			runAgent(t, pi, r.Work.Dir, []string{"HOME=" + r.Home}, agentTimeout, append(args, "-p", r.Prompt)...)
		},
	}
}

// TestPiUpgradeOfMigratedSession resumes a migrated session of pi's
// first format (v1: entries without id and parentId). pi upgrades such a
// file in place on load: it re-serializes every entry with id and
// parentId added after the existing members, after transcript-tool's
// marker, and writes the header's version 3. The references must still
// resolve and rehydrate must still restore the payload.
func TestPiUpgradeOfMigratedSession(t *testing.T) {
	forEachPi(t, testPiUpgrade)
}

func testPiUpgrade(t *testing.T, pi agent) {
	c := piCase(pi)
	root := t.TempDir()
	w := newWorkload(t, root, 0)
	home := filepath.Join(root, "home")
	c.Configure(t, home, newAnthropicAPI(t, w.script(c.Tools)).URL())
	output, err := exec.Command("bash", "-c", w.ShellCommand).Output()
	require.NoError(t, err)
	session := filepath.Join(c.Sessions(home), "--project--", "v1.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(session), 0o700))
	require.NoError(t, os.WriteFile(session, piV1Session(t, w.Dir, string(output)), 0o600))

	runTool(t, "migrate", c.Sessions(home))
	c.Run(t, agentRun{Home: home, Work: w, Prompt: recallPrompt, Session: session})
	upgraded, err := os.ReadFile(session)
	require.NoError(t, err)
	require.Contains(t, string(upgraded), `"version":3`, "pi did not upgrade the session")
	require.Contains(t, string(upgraded), placeholderHead)

	assert.Contains(t, string(runTool(t, "rehydrate", session)), w.Marker, "rehydrate of the upgraded session")
	runTool(t, "verify", c.Sessions(home))
}

// piV1Session is a pi session of format v1, in project folder cwd: a
// prompt, a bash call and its result, output.
func piV1Session(t *testing.T, cwd, output string) []byte {
	t.Helper()
	usage := map[string]any{"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
		"cost": map[string]any{"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}
	assistant := func(content []any, stop string, ts int) map[string]any {
		return map[string]any{"role": "assistant", "content": content, "api": "anthropic-messages",
			"provider": "standin", "model": "standin-model", "usage": usage, "stopReason": stop, "timestamp": ts}
	}
	entries := []map[string]any{
		{"type": "session", "id": "0e2e0000-0000-4000-8000-0000000000a1", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": cwd},
		{"type": "message", "timestamp": "2025-01-01T00:00:01.000Z", "message": map[string]any{
			"role": "user", "content": []any{map[string]any{"type": "text", "text": setupPrompt}}, "timestamp": 1}},
		{"type": "message", "timestamp": "2025-01-01T00:00:02.000Z", "message": assistant([]any{map[string]any{
			"type": "toolCall", "id": "toolu_v1_1", "name": "bash", "arguments": map[string]any{"command": "make-output"}}}, "toolUse", 2)},
		{"type": "message", "timestamp": "2025-01-01T00:00:03.000Z", "message": map[string]any{
			"role": "toolResult", "toolCallId": "toolu_v1_1", "toolName": "bash",
			"content": []any{map[string]any{"type": "text", "text": output}}, "isError": false, "timestamp": 3}},
		{"type": "message", "timestamp": "2025-01-01T00:00:04.000Z", "message": assistant([]any{map[string]any{
			"type": "text", "text": "Done."}}, "stop", 4)},
	}
	var b bytes.Buffer
	for _, e := range entries {
		line, err := json.Marshal(e)
		require.NoError(t, err)
		b.Write(append(line, '\n'))
	}
	return b.Bytes()
}

// editHead starts the text a context edit puts in place of the shell
// output in TestPiContextEdit.
const editHead = "[shell output edited by an extension: its last 300 lines]"

// TestPiContextEdit resumes a migrated session holding a context_edit
// that carries tool output: pi (0.87 and later) applies context edits when
// it loads a session, so the model is shown the edit's content in place
// of the shell output it replaces, and, migrated, a placeholder whose
// path the agent opens. pi 0.73.1, which has no context edits, keeps the
// entry and resumes with the original output.
func TestPiContextEdit(t *testing.T) {
	forEachPi(t, func(t *testing.T, pi agent) {
		c := piCase(pi)
		c.Edit = appendContextEdit
		twin, migrated := runE2E(t, c)
		_, version := splitPin(pi.Pin)
		if v, err := parseVersion(version); err == nil && v.less(semver{0, 87}) {
			assert.NotContains(t, string(twin.Requests[0].Body), editHead, "pi %s has no context edits", version)
			return
		}
		// A line of the edit's text, which is not in its placeholder.
		const inEdit = "shell output line 0450 of the e2e workload"
		assert.Contains(t, string(twin.Requests[0].Body), editHead, "pi applies the context edit of the unmigrated session")
		assert.Contains(t, string(twin.Requests[0].Body), inEdit)
		assert.NotContains(t, string(migrated.Requests[0].Body), inEdit, "the edit's text is an artifact")
		seen, _ := firstPlaceholder(migrated.Requests[0].Req)
		assert.Contains(t, seen, "\nsummary: "+editHead, "the model is shown the placeholder of the edit's text")
	})
}

// appendContextEdit appends to a pi session a context_edit, as an
// extension makes one, that replaces the content of the shell output's
// tool result with the output's last 300 lines, under editHead: the
// workload's marker stays the last line.
func appendContextEdit(t *testing.T, w workload, session string) {
	t.Helper()
	data, err := os.ReadFile(session)
	require.NoError(t, err)
	var target, leaf, output string
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var e struct {
			ID      string     `json:"id"`
			Message apiMessage `json:"message"`
		}
		require.NoError(t, json.Unmarshal(line, &e))
		leaf = e.ID
		if b := e.Message.Blocks(); e.Message.Role == "toolResult" && len(b) > 0 && strings.Contains(b[0].Text, w.Marker) {
			target, output = e.ID, b[0].Text
		}
	}
	require.NotEmpty(t, target, "no tool result holds the shell output")
	lines := strings.Split(strings.TrimSuffix(output, "\n"), "\n")
	edit, err := json.Marshal(map[string]any{
		"type": "context_edit", "id": "0e2ec0de", "parentId": leaf, "timestamp": time.Now().UTC().Format(time.RFC3339Nano),
		"targetId": target, "replacement": map[string]any{"content": []any{map[string]any{
			"type": "text", "text": editHead + "\n" + strings.Join(lines[len(lines)-300:], "\n")}}},
	})
	require.NoError(t, err)
	f, err := os.OpenFile(session, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.Write(append(edit, '\n'))
	require.NoError(t, errors.Join(err, f.Close()))
}
