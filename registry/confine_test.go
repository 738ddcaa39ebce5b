package registry_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/registry"
)

// linkedObjects returns a store whose objects directory is a symbolic link
// to a directory outside it that holds one intact, two-day-old artifact
// and an old temporary file beside it, and the paths of both.
func linkedObjects(t *testing.T) (s *registry.Store, d registry.Digest, artifact, temp string) {
	t.Helper()
	outside := t.TempDir()
	data := []byte("an artifact outside the store")
	d = registry.Sum(data)
	artifact = filepath.Join(outside, registry.ObjectPath(d))
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
	require.NoError(t, os.Symlink(filepath.Join(outside, registry.ObjectsDir), filepath.Join(dir, registry.ObjectsDir)))
	return registry.Open(dir), d, artifact, temp
}

// TestObjectsRefusesLinkedObjectsDir: the objects directory itself being a
// link is refused like a linked shard, never listed through. Objects
// following it made gc delete, and verify hash, files outside the store
// (fsck now refuses such a store itself).
func TestObjectsRefusesLinkedObjectsDir(t *testing.T) {

	s, d, _, _ := linkedObjects(t)
	var found []registry.Digest
	err := s.Objects(func(o registry.Object) error {
		found = append(found, o.Digest)
		return nil
	}, func(string, error) {})
	assert.Empty(t, found, "an object outside the store was listed")
	assert.ErrorIs(t, err, registry.ErrLinked)
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

// TestResolveNeverLooksThroughLinks: an id or prefix names an artifact
// only when the artifact is inside the store; a linked shard directory is
// neither listed nor looked into.
func TestResolveNeverLooksThroughLinks(t *testing.T) {

	outside := t.TempDir()
	data := []byte("an artifact outside the store")
	d := registry.Sum(data)
	shard := filepath.Dir(registry.ObjectPath(d))
	require.NoError(t, os.MkdirAll(filepath.Join(outside, shard), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(outside, registry.ObjectPath(d)), data, 0o600))
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, registry.ObjectsDir), 0o700))
	require.NoError(t, os.Symlink(filepath.Join(outside, shard), filepath.Join(dir, shard)))
	s := registry.Open(dir)

	for _, id := range []string{d.String()[:8], d.String()} {
		got, err := s.Resolve(id)
		require.Error(t, err, "%s resolved to %s, outside the store", id, got)
		assert.True(t, errors.Is(err, registry.ErrNotFound) || errors.Is(err, registry.ErrLinked), "%s: %v", id, err)
	}
}
