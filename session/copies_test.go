package session

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/internal/safefile"
)

// TestCopies: a run's folder of local copies is removed by the next run
// once no run holds it (its run was killed), never while one does; one
// still being made is left to its run unless it is stale.
func TestCopies(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	mk := func(name string, age time.Duration) string {
		dir := filepath.Join(tmp, name)
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "bkt", "k"), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "bkt", "k", "r.jsonl"), []byte("{}\n"), 0o600))
		when := time.Now().Add(-age)
		require.NoError(t, os.Chtimes(dir, when, when))
		return dir
	}
	killed := mk(scratchPrefix+"1", 0)
	making := mk(scratchPrefix+"2"+scratchNew, 0)
	stale := mk(scratchPrefix+"3"+scratchNew, 2*safefile.StaleAge)
	other := mk("transcript-tool-other", 2*safefile.StaleAge)

	live, err := NewCopies()
	require.NoError(t, err)
	assert.Equal(t, tmp, filepath.Dir(live.Dir))
	assert.NoDirExists(t, killed, "a killed run's folder was left")
	assert.NoDirExists(t, stale)
	assert.DirExists(t, making, "a folder still being made was removed")
	assert.DirExists(t, other)

	next, err := NewCopies()
	require.NoError(t, err)
	assert.DirExists(t, live.Dir, "a live run's folder was removed")
	assert.NotEqual(t, live.Dir, next.Dir)
	require.NoError(t, next.Remove())
	assert.NoDirExists(t, next.Dir)

	// The run ends without removing its folder, as a killed one would:
	// its lock goes with it.
	live.lock.Close()
	again, err := NewCopies()
	require.NoError(t, err)
	assert.NoDirExists(t, live.Dir, "the folder of a run that ended was left")
	require.NoError(t, again.Remove())
}
