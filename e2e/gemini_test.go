package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// geminiPin is the Gemini CLI release the tests drive.
const geminiPin = "@google/gemini-cli@0.61.0"

// TestGemini has Gemini CLI write a session against the stand-in,
// migrates ~/.gemini/tmp in place, and resumes the session with
// `--resume ID`: the model is sent the same contents in a fraction of the
// bytes, and read_file opens the placeholder's path, in the store in the
// project's folder of ~/.gemini/tmp, which read_file may read.
func TestGemini(t *testing.T) {
	forEachPin(t, geminiPin, func(t *testing.T, pin string) {
		runE2E(t, geminiCase(findAgent(t, pin, "gemini")))
	})
}

// geminiCase is Gemini CLI's part in the end-to-end flow.
func geminiCase(gemini agent) agentCase {
	return agentCase{
		Tools: agentTools{
			Shell: func(command string) toolCall {
				return toolCall{Name: "run_shell_command", Input: map[string]any{"command": command}}
			},
			Read: func(path string) toolCall {
				return toolCall{Name: "read_file", Input: map[string]any{"file_path": path}}
			},
		},
		Configure: func(t *testing.T, home, _ string) {
			dir := filepath.Join(home, ".gemini")
			require.NoError(t, os.MkdirAll(dir, 0o700))
			// Gemini CLI keeps 40,000 characters of a tool's output
			// unless told otherwise; the test needs the large outputs
			// users' sessions hold.
			settings := `{"security":{"auth":{"selectedType":"gemini-api-key"}},"tools":{"truncateToolOutputThreshold":1000000}}`
			require.NoError(t, os.WriteFile(filepath.Join(dir, "settings.json"), []byte(settings), 0o600))
		},
		API:      newGeminiAPI,
		Sessions: func(home string) string { return filepath.Join(home, ".gemini", "tmp") },
		Run:      func(t *testing.T, r agentRun) { runGemini(t, gemini, r) },
	}
}

// runGemini runs Gemini CLI once, headless, for r's prompt, resuming
// r.Session by the id its header records when there is one.
func runGemini(t *testing.T, gemini agent, r agentRun) {
	t.Helper()
	args := []string{"--yolo", "--skip-trust", "-m", "gemini-2.5-pro"}
	if r.Session != "" {
		args = append(args, "--resume", geminiSessionID(t, r.Session))
	}
	env := []string{"HOME=" + r.Home, "GEMINI_API_KEY=stand-in", "GOOGLE_GEMINI_BASE_URL=" + r.URL}
	runAgent(t, gemini, r.Work.Dir, env, agentTimeout, append(args, "-p", r.Prompt)...)
}

// geminiSessionID returns the session id of the header of a Gemini CLI
// session file.
func geminiSessionID(t *testing.T, session string) string {
	t.Helper()
	f, err := os.Open(session)
	require.NoError(t, err)
	defer f.Close()
	var header struct {
		SessionID string `json:"sessionId"`
	}
	require.NoError(t, json.NewDecoder(f).Decode(&header))
	require.NotEmpty(t, header.SessionID, "%s: no sessionId in its header", session)
	return header.SessionID
}

// TestGeminiRewoundSession resumes a session with a rewind: the one of
// testdata/sessions that Gemini CLI 0.61.0 wrote through its terminal UI
// (/rewind is only there: headless, Gemini CLI writes no $rewindTo),
// with the $set of every message that follows the rewind. Migrated in
// place, it rehydrates to its bytes, and Gemini CLI resumes it to the
// same conversation as its unmigrated twin: the same messages, calls and
// results, and the same texts but for the placeholders.
func TestGeminiRewoundSession(t *testing.T) {
	forEachPin(t, geminiPin, func(t *testing.T, pin string) {
		c := geminiCase(findAgent(t, pin, "gemini"))
		root := t.TempDir()
		w := workload{Dir: filepath.Join(root, "project")}
		require.NoError(t, os.MkdirAll(w.Dir, 0o755))
		home := filepath.Join(root, "home")
		api := newGeminiAPI(t, func(*messagesRequest) turn { return turn{Text: "Resumed."} })
		c.Configure(t, home, api.URL())
		projects, err := json.Marshal(map[string]any{"projects": map[string]string{w.Dir: "project"}})
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(home, ".gemini", "projects.json"), projects, 0o600))
		original, err := os.ReadFile(filepath.Join("..", "testdata", "sessions", "gemini-rewind.jsonl"))
		require.NoError(t, err)
		session := filepath.Join(c.Sessions(home), "project", "chats", "session-2026-11-27T02-52-7934add8.jsonl")
		require.NoError(t, os.MkdirAll(filepath.Dir(session), 0o700))
		require.NoError(t, os.WriteFile(session, original, 0o600))
		twinHome := filepath.Join(root, "twin-home")
		copyTree(t, home, twinHome)

		t.Logf("migrate: %s", runTool(t, "migrate", c.Sessions(home)))
		migrated, err := os.ReadFile(session)
		require.NoError(t, err)
		t.Logf("session file: %d bytes, %d migrated", len(original), len(migrated))
		require.Less(t, len(migrated), len(original)/2, "migrate shrinks the session")
		assert.Equal(t, original, runTool(t, "rehydrate", session), "rehydrate gives the original bytes back")

		resume := func(home string) recordedRequest {
			twinSession := filepath.Join(c.Sessions(home), "project", "chats", filepath.Base(session))
			reqs := api.During(func() {
				c.Run(t, agentRun{Home: home, URL: api.URL(), Work: w, Prompt: "Go on after the rewind.", Session: twinSession})
			})
			require.Len(t, reqs, 1, "one request, answered with text")
			return reqs[0]
		}
		twin, after := resume(twinHome), resume(home)
		t.Logf("resumed request: %d bytes unmigrated, %d bytes migrated", len(twin.Body), len(after.Body))
		assert.Equal(t, sessionShape(twin.Req), sessionShape(after.Req), "the same messages, calls and results")
		assert.Equal(t, conversationTexts(twin.Req), conversationTexts(after.Req), "the same texts")
		assert.Contains(t, conversationTexts(after.Req), "user: Third after rewind.")
		assert.Contains(t, conversationTexts(after.Req), "user: [image]")
		assert.Contains(t, string(after.Body), placeholderHead)
		assert.Less(t, len(after.Body), len(twin.Body))
		t.Logf("verify: %s", runTool(t, "verify", c.Sessions(home)))
	})
}

// conversationTexts returns the texts of a request's messages, one
// "role: text" each, leaving out tool results and the agent's context;
// an image, and the text part that stands for a migrated one, are
// "role: [image]".
func conversationTexts(req *messagesRequest) []string {
	var texts []string
	for _, m := range req.Messages {
		for _, b := range m.Blocks() {
			switch {
			case b.Type == "image", b.Type == "text" && strings.HasPrefix(b.Text, "[Image omitted: stored as artifact "):
				texts = append(texts, m.Role+": [image]")
			case b.Type == "text" && !strings.HasPrefix(b.Text, "<session_context>"):
				texts = append(texts, m.Role+": "+b.Text)
			}
		}
	}
	return texts
}
