package migrate_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/migrate"
)

// TestStoreForRelativePath: the default store of a transcript must
// not depend on how its path is spelled. SessionRoot reads the folder
// names of the path as given, so a Codex rollout named from inside its day
// folder ("rollout-….jsonl", or "15/rollout-….jsonl" from the month) has
// "." as its session root, and its store is the day folder's artifacts/,
// where the same rollout named by its absolute path has sessions/artifacts.
// Seen from the CLI: `migrate ~/.codex/sessions/2025/09/15/rollout-A.jsonl`,
// then `cd ~/.codex/sessions/2025/09/15 && rehydrate rollout-A.jsonl`
// fails with "artifact not found"; and `migrate rollout-B.jsonl` from
// there creates 2025/09/15/artifacts, after which StoreFor's "a store
// beside the transcript" rule sends even the absolute path of A there:
// A no longer rehydrates, shows or verifies by any path. Fix: make path
// absolute (filepath.Abs) before SessionRoot/StoreFor look at it.
func TestStoreForRelativePath(t *testing.T) {
	home := t.TempDir()
	day := filepath.Join(home, ".codex", "sessions", "2025", "09", "15")
	require.NoError(t, os.MkdirAll(day, 0o700))
	name := "rollout-2025-09-15T10-00-00-11111111-1111-1111-1111-111111111111.jsonl"
	abs := filepath.Join(day, name)
	want := filepath.Join(home, ".codex", "sessions", migrate.StoreDirName)
	require.Equal(t, want, migrate.StoreFor("", abs))

	t.Chdir(day)
	got, err := filepath.Abs(migrate.StoreFor("", name))
	require.NoError(t, err)
	assert.Equal(t, want, got, "the store of the same rollout named from its day folder")

	t.Chdir(filepath.Dir(day))
	got, err = filepath.Abs(migrate.StoreFor("", filepath.Join("15", name)))
	require.NoError(t, err)
	assert.Equal(t, want, got, "the store of the same rollout named from its month folder")
}
