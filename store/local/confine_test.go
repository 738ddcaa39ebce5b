package local

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/store"
)

// linkedObjects returns a store whose objects directory is a symbolic link
// to a directory outside it that holds one intact, two-day-old artifact
// and an old temporary file beside it, and the paths of both.
func linkedObjects(t *testing.T) (s *store.Store, d store.Digest, artifact, temp string) {
	t.Helper()
	outside := t.TempDir()
	data := []byte("an artifact outside the store")
	d = store.Sum(data)
	artifact = filepath.Join(outside, rel(store.ObjectHandle(d)))
	require.NoError(t, os.MkdirAll(filepath.Dir(artifact), 0o700))
	require.NoError(t, os.WriteFile(artifact, data, 0o600))
	temp = filepath.Join(filepath.Dir(artifact), "."+d.String()+".tmp-42")
	require.NoError(t, os.WriteFile(temp, []byte("a writer's temporary file"), 0o600))
	old := time.Now().Add(-48 * time.Hour)
	for _, p := range []string{artifact, temp} {
		require.NoError(t, os.Chtimes(p, old, old))
	}
	dir := filepath.Join(t.TempDir(), "artifacts")
	require.NoError(t, os.Mkdir(dir, 0o700))
	require.NoError(t, os.Symlink(filepath.Join(outside, store.ObjectsDir), filepath.Join(dir, store.ObjectsDir)))
	return store.New(New(dir)), d, artifact, temp
}

// TestEachRefusesLinkedObjectsDir: the objects directory itself being a
// link is refused like a linked shard, never listed through. Objects
// following it made gc delete, and verify hash, files outside the store
// (fsck now refuses such a store itself).
func TestEachRefusesLinkedObjectsDir(t *testing.T) {
	s, d, _, _ := linkedObjects(t)
	var found []store.Digest
	err := s.Each(ctx, func(d store.Digest, _ store.FileInfo) error {
		found = append(found, d)
		return nil
	}, func(string, error) {})
	assert.Empty(t, found, "an object outside the store was listed")
	assert.ErrorIs(t, err, store.ErrLinked)
	assert.NotContains(t, found, d)
}

// TestRemoveStaleTempsStaysInStore: cleaning up after killed writers never
// deletes a file outside the store through a linked objects directory.
func TestRemoveStaleTempsStaysInStore(t *testing.T) {
	s, _, artifact, temp := linkedObjects(t)
	assert.Zero(t, s.RemoveStaleTemps())
	assert.FileExists(t, temp, "a file outside the store was deleted")
	assert.FileExists(t, artifact)
}

// TestReadsNeverFollowLinkedObjectsDir: an object reached through a linked
// objects directory is neither read nor written.
func TestReadsNeverFollowLinkedObjectsDir(t *testing.T) {
	s, d, artifact, _ := linkedObjects(t)
	_, err := s.Get(ctx, d)
	assert.ErrorIs(t, err, store.ErrLinked)
	_, err = s.Resolve(ctx, d.String())
	assert.Error(t, err, "an object outside the store was resolved")
	_, _, err = s.Put(ctx, []byte("another artifact"))
	assert.ErrorIs(t, err, store.ErrLinked)
	assert.FileExists(t, artifact)
}

// TestResolveNeverLooksThroughLinks: an id or prefix names an artifact
// only when the artifact is inside the store; a linked shard directory is
// neither listed nor looked into.
func TestResolveNeverLooksThroughLinks(t *testing.T) {
	outside := t.TempDir()
	data := []byte("an artifact outside the store")
	d := store.Sum(data)
	shard := filepath.Dir(rel(store.ObjectHandle(d)))
	require.NoError(t, os.MkdirAll(filepath.Join(outside, shard), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(outside, rel(store.ObjectHandle(d))), data, 0o600))
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, store.ObjectsDir), 0o700))
	require.NoError(t, os.Symlink(filepath.Join(outside, shard), filepath.Join(dir, shard)))
	s := store.New(New(dir))

	for _, id := range []string{d.String()[:8], d.String()} {
		got, err := s.Resolve(ctx, id)
		require.Error(t, err, "%s resolved to %s, outside the store", id, got)
		assert.True(t, errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrLinked), "%s: %v", id, err)
	}
}
