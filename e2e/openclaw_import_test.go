package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/agentdb"
	"github.com/transcript-tool/transcript-tool/internal/openclawgen"
)

// TestOpenClawImport is what happens to the JSONL sessions of an OpenClaw
// before 2026.8: transcript-tool migrates one of them in place, as a
// user did then, with the store of agents/<id>/sessions; OpenClaw's own
// `doctor --fix` imports both into its database (moving the files to its
// archive folder), the migrated lines as they are. The database's
// sessions then use that store: rehydrate gives the imported session back
// as it was before migrate, a migrate of the state folder moves the other
// one's payloads into the same store, and check finds every reference
// good.
func TestOpenClawImport(t *testing.T) {
	forEachPin(t, openclawPin, func(t *testing.T, pin string) {
		oc := findAgent(t, pin, "openclaw")
		root := t.TempDir()
		home := filepath.Join(root, "home")
		state := filepath.Join(home, ".openclaw")
		sessions := filepath.Join(state, "agents", "main", "sessions")
		require.NoError(t, os.MkdirAll(sessions, 0o700))
		legacy := []openclawgen.Session{
			openclawgen.Workload("0e2e0000-0000-4000-8000-00000000000a", "agent:main:main", 2, 30000),
			openclawgen.Workload("0e2e0000-0000-4000-8000-00000000000b", "agent:main:other", 1, 20000),
		}
		index := map[string]any{}
		originals := map[string]string{}
		for _, s := range legacy {
			// Sessions of before 2026.8 are of version 3.
			text := strings.Replace(strings.Join(s.Lines, "\n")+"\n", `"version":4`, `"version":3`, 1)
			originals[s.ID] = text
			require.NoError(t, os.WriteFile(filepath.Join(sessions, s.ID+".jsonl"), []byte(text), 0o600))
			index[s.Key] = map[string]any{"sessionId": s.ID, "updatedAt": 1795735300000}
		}
		b, err := json.Marshal(index)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(sessions, "sessions.json"), b, 0o600))
		t.Logf("migrate: %s", runTool(t, "migrate", filepath.Join(sessions, legacy[0].ID+".jsonl")))
		migratedA, err := os.ReadFile(filepath.Join(sessions, legacy[0].ID+".jsonl"))
		require.NoError(t, err)

		project := filepath.Join(root, "project")
		require.NoError(t, os.MkdirAll(project, 0o700))
		out := runAgent(t, oc, project, []string{"HOME=" + home}, openclawTimeout, "doctor", "--fix", "--non-interactive")
		t.Logf("openclaw doctor --fix: %s", lastLines(string(out), 5))
		left, _ := filepath.Glob(filepath.Join(sessions, "*.jsonl"))
		require.Empty(t, left, "doctor --fix left the JSONL sessions in place")

		db := filepath.Join(state, "agents", "main", "agent", agentdb.FileName)
		rows := sessionRows(t, db)
		require.Len(t, rows, 2, "doctor --fix imported the sessions")
		assert.Equal(t, string(migratedA), string(rows[legacy[0].ID]), "the migrated lines were imported as they are")
		store := filepath.Join(sessions, "artifacts")
		name := func(s openclawgen.Session) string { return "sqlite://" + db + "#" + s.ID }
		assert.Equal(t, originals[legacy[0].ID], string(runTool(t, "rehydrate", name(legacy[0]))))

		t.Logf("migrate: %s", runTool(t, "migrate", state))
		check := string(runTool(t, "check", state))
		assert.Contains(t, check, "references checked against "+store+"\n")
		assert.Contains(t, check, "no violations in 2 files")
		for _, s := range legacy {
			assert.Equal(t, originals[s.ID], string(runTool(t, "rehydrate", name(s))), "rehydrate %s", s.ID)
		}
		objects, err := filepath.Glob(filepath.Join(store, "objects", "*", "*"))
		require.NoError(t, err)
		assert.Len(t, objects, 3, "one store holds the artifacts of both sessions")
		t.Logf("verify: %s", runTool(t, "verify", state))
	})
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
