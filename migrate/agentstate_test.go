package migrate_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/agentstate"
	"github.com/transcript-tool/transcript-tool/migrate"
)

// TestMigrateCodexThreadInUse: a rollout whose thread a Codex process
// holds open (its writer lock) is left untouched, in place and by
// rehydrate --in-place, with an error that says so; the same rollout
// migrates once the lock is free.
func TestMigrateCodexThreadInUse(t *testing.T) {
	const id = "01a21453-e78e-72b0-a8ce-8367cce475c9"
	home := t.TempDir()
	rollout := filepath.Join(home, "sessions", "2026", "11", "25", "rollout-2026-11-25T20-09-32-"+id+".jsonl")
	orig := []byte(`{"timestamp":"t","type":"session_meta","payload":{"id":"` + id + `","cwd":"/w"}}` + "\n" +
		`{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"` + strings.Repeat("line of output\\n", 400) + `"}}` + "\n")
	require.NoError(t, os.MkdirAll(filepath.Dir(rollout), 0o700))
	writeFile(t, rollout, orig, 0o600)
	writeFile(t, filepath.Join(home, "thread_history_1.sqlite"), nil, 0o600)
	require.NoError(t, os.Mkdir(filepath.Join(home, "thread-writer-locks"), 0o700))
	lock, err := os.Create(filepath.Join(home, "thread-writer-locks", id+".lock"))
	require.NoError(t, err)
	defer lock.Close()
	require.NoError(t, syscall.Flock(int(lock.Fd()), syscall.LOCK_EX))

	sum := migrateRun(t, migrate.Options{}, filepath.Join(home, "sessions"))
	r := result(t, sum, rollout)
	assert.Equal(t, migrate.StatusFailed, r.Status)
	assert.ErrorIs(t, r.Err, agentstate.ErrThreadInUse)
	assert.Contains(t, r.Err.Error(), "left untouched")
	assert.Equal(t, orig, readFile(t, rollout))

	require.NoError(t, syscall.Flock(int(lock.Fd()), syscall.LOCK_UN))
	sum = migrateRun(t, migrate.Options{}, filepath.Join(home, "sessions"))
	r = result(t, sum, rollout)
	// The empty file is no thread history database: the reset refuses it,
	// and the rollout stays as it was.
	assert.Equal(t, migrate.StatusFailed, r.Status)
	assert.ErrorIs(t, r.Err, agentstate.ErrUnknownSchema)
	assert.Equal(t, orig, readFile(t, rollout))
}
