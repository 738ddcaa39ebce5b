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

// codexHome makes a Codex home with one rollout worth migrating, a thread
// history database file and the thread's writer lock held, as a running
// Codex holds it; it returns the rollout, its bytes and the held lock.
func codexHome(t *testing.T, home string) (rollout string, orig []byte, lock *os.File) {
	t.Helper()
	const id = "01a21453-e78e-72b0-a8ce-8367cce475c9"
	rollout = filepath.Join(home, "sessions", "2026", "11", "25", "rollout-2026-11-25T20-09-32-"+id+".jsonl")
	orig = []byte(`{"timestamp":"t","type":"session_meta","payload":{"id":"` + id + `","cwd":"/w"}}` + "\n" +
		`{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"` + strings.Repeat("line of output\\n", 400) + `"}}` + "\n")
	require.NoError(t, os.MkdirAll(filepath.Dir(rollout), 0o700))
	writeFile(t, rollout, orig, 0o600)
	writeFile(t, filepath.Join(home, "thread_history_1.sqlite"), nil, 0o600)
	require.NoError(t, os.Mkdir(filepath.Join(home, "thread-writer-locks"), 0o700))
	lock, err := os.Create(filepath.Join(home, "thread-writer-locks", id+".lock"))
	require.NoError(t, err)
	t.Cleanup(func() { lock.Close() })
	require.NoError(t, syscall.Flock(int(lock.Fd()), syscall.LOCK_EX))
	return rollout, orig, lock
}

// TestMigrateCodexThreadInUse: a rollout whose thread a Codex process
// holds open (its writer lock) is left untouched, with an error that says
// so; once the lock is free, a thread history the reset cannot read
// leaves it untouched too.
func TestMigrateCodexThreadInUse(t *testing.T) {
	home := t.TempDir()
	rollout, orig, lock := codexHome(t, home)

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

// TestMigrateOutOwnDirGuardsCodexState: --out naming the folder the
// rollouts are in (--out . from inside ~/.codex/sessions) rewrites each in
// place, and so guards Codex's state as an in-place run does: a thread
// Codex holds open is left untouched.
func TestMigrateOutOwnDirGuardsCodexState(t *testing.T) {
	home := t.TempDir()
	rollout, orig, _ := codexHome(t, home)
	sessions := filepath.Join(home, "sessions")

	sum := migrateRun(t, migrate.Options{Out: sessions}, sessions)
	r := result(t, sum, rollout)
	assert.Equal(t, rollout, r.Dest, "--out names the rollouts' own folder")
	assert.Equal(t, migrate.StatusFailed, r.Status, "a thread Codex has open is not rewritten")
	assert.ErrorIs(t, r.Err, agentstate.ErrThreadInUse)
	assert.Equal(t, orig, readFile(t, rollout), "the rollout is left untouched")
}
