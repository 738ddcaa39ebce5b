package registry_test

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/registry"
)

// TestObjectsRefusesWhatIsNotAnObject: misnamed files, objects in the
// wrong shard, symbolic links and stray directories are reported, never
// followed; temporary files are skipped.
func TestObjectsRefusesWhatIsNotAnObject(t *testing.T) {
	dir := t.TempDir()
	s := registry.Open(dir)
	d, _, err := s.Put([]byte("a real artifact"))
	require.NoError(t, err)
	other := registry.Sum([]byte("another"))
	objects := filepath.Join(dir, registry.ObjectsDir)
	outside := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(outside, []byte("outside the store"), 0o600))

	shard := filepath.Join(objects, d.String()[:2])
	require.NoError(t, os.WriteFile(filepath.Join(shard, "README"), nil, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(shard, ".tmp-123"), nil, 0o600))
	wrongShard := filepath.Join(objects, "zz")
	require.NoError(t, os.Mkdir(wrongShard, 0o700))
	otherShard := filepath.Join(objects, other.String()[:2])
	if otherShard == shard {
		otherShard = filepath.Join(objects, "00")
	}
	require.NoError(t, os.MkdirAll(otherShard, 0o700))
	link := filepath.Join(otherShard, other.String())
	require.NoError(t, os.Symlink(outside, link))
	misplaced := filepath.Join(shard, other.String())
	require.NoError(t, os.WriteFile(misplaced, []byte("another"), 0o600))

	var found []registry.Digest
	bad := map[string]string{}
	err = s.Objects(func(o registry.Object) error {
		found = append(found, o.Digest)
		return nil
	}, func(path string, why error) { bad[path] = why.Error() })
	require.NoError(t, err)

	assert.Equal(t, []registry.Digest{d}, found)
	var paths []string
	for p := range bad {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	want := []string{filepath.Join(shard, "README"), wrongShard, misplaced}
	if otherShard != shard {
		want = append(want, link)
	}
	sort.Strings(want)
	assert.Equal(t, want, paths)
	assert.Contains(t, bad[misplaced], "shard")
}
