package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// copilotPin is the GitHub Copilot CLI release the tests drive.
const copilotPin = "@github/copilot@1.0.102"

// copilotMarker ends the file the model views first, and nothing else.
const copilotMarker = "MARKER-copilot-large-view-5d1e"

// Copilot keeps a tool's output whole up to 20 KB (above, view refuses
// the file and bash saves its output to a file): the session holds many
// outputs under that, as a long session does.
const (
	copilotViews    = 8
	copilotCommands = 6
)

// TestCopilotResumesMigratedSession has Copilot CLI, in its BYOK mode
// against a stand-in Responses API on loopback, write a session of large
// file views and command outputs; migrates it in place with the default
// store; and resumes it next to an unmigrated twin: the model is shown the
// same items in at most a quarter of the bytes, and opens a placeholder's
// path with Copilot's own view tool to get the file back.
func TestCopilotResumesMigratedSession(t *testing.T) {
	forEachPin(t, copilotPin, testCopilotResume)
}

func testCopilotResume(t *testing.T, pin string) {
	run := newCopilotRun(t, pin)
	var steps []responsesStep
	for i := range copilotViews {
		path := filepath.Join(run.work, fmt.Sprintf("notes-%d.txt", i))
		var b strings.Builder
		for n := 1; b.Len() < 17<<10; n++ {
			fmt.Fprintf(&b, "note %d.%04d: the file the model viewed, long enough to be a payload\n", i, n)
		}
		if i == 0 {
			b.WriteString(copilotMarker + "\n")
		}
		require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
		steps = append(steps, reply(copilotCall(fmt.Sprintf("call_view%d", i), "view", map[string]any{"path": path})))
	}
	for i := range copilotCommands {
		cmd := fmt.Sprintf("seq -f 'row %%05g of command %d' 1 %d", i, 700)
		steps = append(steps, reply(copilotCall(fmt.Sprintf("call_bash%d", i), "bash", map[string]any{"command": cmd, "description": "rows"})))
	}
	// An image, which Copilot keeps once in a session.binary_asset event.
	image := filepath.Join(run.work, "noise.png")
	require.NoError(t, os.WriteFile(image, noisePNG(t, 48, 48), 0o644))
	steps = append(steps, reply(copilotCall("call_image", "view", map[string]any{"path": image})))
	steps = append(steps, reply(assistantMessage("I viewed the files and ran the commands.")))
	run.exec(t, steps, "-p", "View the notes and run the commands.")

	// The resumed turn: the model views the path of the first view's
	// placeholder, when there is one, then ends the turn.
	recall := func(req recordedRequest) []map[string]any {
		if _, done := req.functionOutput("call_recall"); done {
			return []map[string]any{assistantMessage("I read the stored file.")}
		}
		out, ok := req.functionOutput("call_view0")
		require.True(t, ok, "the resumed request holds the first view's output")
		if m := pathLine.FindStringSubmatch(out); m != nil {
			return []map[string]any{copilotCall("call_recall", "view", map[string]any{"path": m[1]})}
		}
		return []map[string]any{assistantMessage("The file is above.")}
	}
	resume := func() []recordedRequest { return run.resume(t, "Show me the first file again.", recall, recall) }
	sessions := filepath.Join(run.home, ".copilot", "session-state")
	before, original, migrated := twinThenMigrate(t, run.home, run.events, sessions, resume)
	require.Less(t, len(migrated), len(original), "migrate shrinks the session")
	png, err := os.ReadFile(image)
	require.NoError(t, err)
	b64 := base64.StdEncoding.EncodeToString(png)
	require.Contains(t, string(original), b64[:200], "Copilot keeps the image in the session")
	assert.NotContains(t, string(migrated), b64[:200], "the image is an artifact")

	after := resume()
	placeholder, _ := after[0].functionOutput("call_view0")
	t.Logf("the model saw, for the first view:\n%s", placeholder)
	require.Equal(t, 1, len(before), "unmigrated, the model answers at once")
	require.Equal(t, 2, len(after), "migrated, the model views the artifact, then answers")

	// (a) The model is shown the same items, whatever their size, (b) in
	// at most a quarter of the bytes.
	assertLeaner(t, before[0], after[0], copilotMarker)
	for i := range copilotCommands {
		out, _ := after[0].functionOutput(fmt.Sprintf("call_bash%d", i))
		assert.Contains(t, out, placeholderHead, "command %d's output is a placeholder", i)
	}
	// (c) view of the placeholder's path gives the model the artifact.
	m := pathLine.FindStringSubmatch(placeholder)
	require.NotNil(t, m, "the placeholder has a path: line")
	path := m[1]
	require.True(t, filepath.IsAbs(path), "the placeholder's path is absolute: %s", path)
	require.Equal(t, filepath.Join(filepath.Dir(run.events), "artifacts"), filepath.Dir(filepath.Dir(filepath.Dir(path))),
		"the default store is in the session's folder")
	artifact, err := os.ReadFile(path)
	require.NoError(t, err)
	view, ok := after[1].functionOutput("call_recall")
	require.True(t, ok, "Copilot returns the view's output to the model")
	t.Logf("view %s gave the model %d bytes, beginning:\n%.300s", path, len(view), view)
	assert.Contains(t, view, string(artifact), "the model reads the whole artifact")
	assert.Contains(t, view, copilotMarker+"\n")
	// (d) Copilot appended the resumed turns to the migrated session and
	// rewrote nothing of it; the prompt it builds anew no longer matches
	// the placeholder its system.message became, so it wrote the prompt
	// again.
	resumed, err := os.ReadFile(run.events)
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(resumed, migrated), "Copilot resumed the migrated session and appended to it")
	assert.Contains(t, string(resumed[len(migrated):]), `"type":"system.message"`, "Copilot writes its prompt again")
	t.Logf("verify: %s", runTool(t, "verify", filepath.Dir(filepath.Dir(run.events))))
}

// copilotCall is a model output item calling one of Copilot's tools.
func copilotCall(callID, name string, args map[string]any) map[string]any {
	b, _ := json.Marshal(args)
	return map[string]any{"type": "function_call", "call_id": callID, "name": name, "arguments": string(b)}
}

// copilotRun is a home in which Copilot CLI wrote one session.
type copilotRun struct {
	copilot           agent
	api               *responsesAPI
	home, work, cache string
	events            string // the session's events.jsonl
}

// newCopilotRun returns a new home and working folder for Copilot CLI
// release pin, and its stand-in, with no session yet.
func newCopilotRun(t *testing.T, pin string) copilotRun {
	t.Helper()
	a := findAgent(t, pin, "copilot")
	// The native binary unpacks its 235 MB of JavaScript and assets on
	// first run: once for all tests, beside the install.
	cache := filepath.Join(agentFolder(pin), "copilot-cache")
	return copilotRun{copilot: a, api: newResponsesAPI(t), home: t.TempDir(), work: t.TempDir(), cache: cache}
}

// exec runs Copilot with args against the stand-in answering steps, and
// sets r.events to the session it wrote.
func (r *copilotRun) exec(t *testing.T, steps []responsesStep, args ...string) {
	t.Helper()
	r.api.Play(steps, func() { r.run(t, args...) })
	sessions, err := filepath.Glob(filepath.Join(r.home, ".copilot", "session-state", "*", "events.jsonl"))
	require.NoError(t, err)
	require.Len(t, sessions, 1, "Copilot writes one session")
	r.events = sessions[0]
}

// resume runs `copilot --resume` of r's session with prompt against the
// stand-in answering steps, and returns the requests it made.
func (r copilotRun) resume(t *testing.T, prompt string, steps ...responsesStep) []recordedRequest {
	t.Helper()
	return r.api.Play(steps, func() { r.run(t, "--resume="+filepath.Base(filepath.Dir(r.events)), "-p", prompt) })
}

// run runs Copilot in BYOK mode against the stand-in, offline, with its
// home in r.home and nothing of the developer's own. COPILOT_OFFLINE
// keeps it from GitHub's services (no login is asked for with a
// provider of one's own), and the prompt limit is raised so that it does
// not compact the long session.
func (r copilotRun) run(t *testing.T, args ...string) {
	t.Helper()
	env := []string{
		"HOME=" + r.home, "COPILOT_CACHE_HOME=" + r.cache, "COPILOT_OFFLINE=true", "COPILOT_AUTO_UPDATE=false",
		"COPILOT_PROVIDER_BASE_URL=" + r.api.URL() + "/v1", "COPILOT_PROVIDER_API_KEY=stand-in",
		"COPILOT_PROVIDER_WIRE_API=responses", "COPILOT_MODEL=stand-in", "COPILOT_PROVIDER_MAX_PROMPT_TOKENS=1000000",
	}
	runAgent(t, r.copilot, r.work, env, 2*time.Minute, append([]string{"--allow-all"}, args...)...)
}
