package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCodexRepeatedInstructions decides which instructions a Codex rollout
// repeats are payloads: turn_context's user_instructions (the AGENTS.md
// text) and developer_instructions, which Codex up to about 0.98 wrote
// on every turn, are, only because Codex resumes the rollout with the
// same request whether they are moved or not: the request of a resume of
// the migrated rollout must equal that of its unmigrated twin, but for
// the ids Codex makes anew for each run (the new prompt's message id, the
// turn's metadata). session_meta's base_instructions are not: Codex sends
// them as the first developer message, so moving them would change the
// request (measured: 49 522 bytes became 32 459).
func TestCodexRepeatedInstructions(t *testing.T) {
	forEachPin(t, codexPin, func(t *testing.T, pin string) {
		run := newCodexHome(t, pin)
		var agents strings.Builder
		for i := 1; agents.Len() < 8<<10; i++ {
			fmt.Fprintf(&agents, "- Rule %d of the project: keep functions short, name things plainly, test what can fail.\n", i)
		}
		require.NoError(t, os.WriteFile(filepath.Join(run.work, "AGENTS.md"), []byte(agents.String()), 0o644))
		run.exec(t, []responsesStep{reply(assistantMessage("First done."))}, "First task.")
		require.Len(t, run.resume(t, "Second task.", reply(assistantMessage("Second done."))), 1)
		developer := strings.Repeat("Answer in the voice of a careful reviewer. ", 120)
		turns := addInstructions(t, run.rollout, agents.String(), developer)
		require.GreaterOrEqual(t, turns, 2, "turn_context lines")

		resume := func() []recordedRequest { return run.resume(t, "Third task.", reply(assistantMessage("Third done."))) }
		twin, original, migrated := run.twinThenMigrate(t, resume)
		after := resume()
		require.Len(t, twin, 1)
		require.Len(t, after, 1)
		t.Logf("request resuming the rollout: %d bytes unmigrated, %d migrated", len(twin[0].Body), len(after[0].Body))
		assert.Equal(t, sameRequest(t, twin[0]), sameRequest(t, after[0]), "Codex resumes the migrated rollout with the request of its twin")

		// Each text is one artifact for all the turns; base_instructions
		// stay inline, and so does Codex 0.171's world_state, which holds
		// the AGENTS.md text once.
		u, _ := json.Marshal(agents.String())
		d, _ := json.Marshal(developer)
		inTurns := func(rollout []byte, text []byte) int {
			n := 0
			for _, l := range bytes.Split(rollout, []byte("\n")) {
				if bytes.Contains(l, []byte(`"type":"turn_context"`)) {
					n += bytes.Count(l, text)
				}
			}
			return n
		}
		assert.Equal(t, turns, inTurns(original, u))
		assert.Zero(t, inTurns(migrated, u), "the AGENTS.md text is moved from every turn")
		assert.Zero(t, inTurns(migrated, d), "the developer instructions are moved from every turn")
		firstLine := func(b []byte) []byte { return b[:bytes.IndexByte(b, '\n')] }
		assert.Equal(t, firstLine(original), firstLine(migrated), "session_meta, base_instructions and all, is kept")
		ids := map[string]bool{}
		for _, m := range regexp.MustCompile(`"(?:user|developer)_instructions":"\[Omitted \d+ bytes \([^)]*\): artifact ([0-9a-f]{64})`).FindAllSubmatch(migrated, -1) {
			ids[string(m[1])] = true
		}
		assert.Len(t, ids, 2, "one artifact of each text for the %d turns", turns)
	})
}

// sameRequest is what must not change in a request of a resume: the body
// but for its client metadata and the id of its last input item, the new
// prompt, which Codex makes anew (a UUIDv7) for each run.
func sameRequest(t *testing.T, r recordedRequest) map[string]any {
	t.Helper()
	var body map[string]any
	require.NoError(t, json.Unmarshal(r.Body, &body))
	delete(body, "client_metadata")
	input, _ := body["input"].([]any)
	require.NotEmpty(t, input)
	last, _ := input[len(input)-1].(map[string]any)
	delete(last, "id")
	return body
}

// addInstructions adds to each turn_context line of a rollout the
// user_instructions and developer_instructions members Codex 0.98 wrote
// there, and returns how many lines it changed. The other lines are kept
// byte for byte.
func addInstructions(t *testing.T, rollout, user, developer string) int {
	t.Helper()
	data, err := os.ReadFile(rollout)
	require.NoError(t, err)
	u, err := json.Marshal(user)
	require.NoError(t, err)
	d, err := json.Marshal(developer)
	require.NoError(t, err)
	const at = `"type":"turn_context","payload":{`
	n := bytes.Count(data, []byte(at))
	data = bytes.ReplaceAll(data, []byte(at), []byte(at+`"user_instructions":`+string(u)+`,"developer_instructions":`+string(d)+`,`))
	require.NoError(t, os.WriteFile(rollout, data, 0o600))
	return n
}
