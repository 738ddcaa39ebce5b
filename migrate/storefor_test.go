package migrate_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/migrate"
)

// TestStoreForRelativePath: the default store of a transcript does not
// depend on how its path is spelled: a Codex rollout named from inside its
// day folder, or from its month folder, has the store of its absolute
// path, sessions/artifacts, so that what migrate wrote rehydrate finds.
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
