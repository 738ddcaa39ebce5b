package migrate_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/migrate"
)

// TestMigrateOutOwnDirGuardsCodexState: `migrate --out DIR` where
// DIR is the folder the transcripts are found in (--out . from inside
// ~/.codex/sessions, say) writes every transcript to its own path: an
// in-place rewrite. Rehydrate sees this (sameFile: "an --out that names the
// transcript's own directory replaces it too") and takes the agent state;
// migrate decides "in place" from opts.Out == "" alone, so it neither
// takes the Codex thread's writer lock nor resets its thread history:
// here it rewrites a rollout whose thread a Codex process holds open, and
// would leave the byte offsets of thread_history_1.sqlite stale (the bug
// 7f1c5fa fixes for plain in-place runs). Fix: treat a dest that is the
// source file (sameFile) as in place in migrateFile too (agent state,
// temporary files, and backup).
func TestMigrateOutOwnDirGuardsCodexState(t *testing.T) {
	const id = "01a21453-e78e-72b0-a8ce-8367cce475c9"
	home := t.TempDir()
	sessions := filepath.Join(home, "sessions")
	rollout := filepath.Join(sessions, "2026", "11", "25", "rollout-2026-11-25T20-09-32-"+id+".jsonl")
	orig := []byte(`{"timestamp":"t","type":"session_meta","payload":{"id":"` + id + `","cwd":"/w"}}` + "\n" +
		`{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"` + strings.Repeat("line of output\\n", 400) + `"}}` + "\n")
	writeFile(t, rollout, orig, 0o600)
	writeFile(t, filepath.Join(home, "thread_history_1.sqlite"), nil, 0o600)
	require.NoError(t, os.Mkdir(filepath.Join(home, "thread-writer-locks"), 0o700))
	lock, err := os.Create(filepath.Join(home, "thread-writer-locks", id+".lock"))
	require.NoError(t, err)
	defer lock.Close()
	require.NoError(t, syscall.Flock(int(lock.Fd()), syscall.LOCK_EX))

	sum := migrateRun(t, migrate.Options{Out: sessions}, sessions)
	r := result(t, sum, rollout)
	assert.Equal(t, rollout, r.Dest, "--out names the rollouts' own folder")
	assert.Equal(t, migrate.StatusFailed, r.Status, "a thread Codex has open is not rewritten")
	assert.True(t, bytes.Equal(orig, readFile(t, rollout)), "the rollout is left untouched")
}
