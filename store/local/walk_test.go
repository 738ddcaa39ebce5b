package local

import (
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/store"
)

// TestEachRefusesWhatIsNotAnObject: misnamed files, objects in the wrong
// shard, symbolic links, named pipes and stray directories are reported,
// with their paths relative to the store, never followed; temporary files
// are skipped.
func TestEachRefusesWhatIsNotAnObject(t *testing.T) {
	s, l := newStore(t)
	d := mustPut(t, s, []byte("a real artifact"))
	other := store.Sum([]byte("another"))
	objects := filepath.Join(l.Dir(), store.ObjectsDir)
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
	piped := store.Sum([]byte("a pipe"))
	pipe := filepath.Join(objects, piped.String()[:2], piped.String())
	require.NoError(t, os.MkdirAll(filepath.Dir(pipe), 0o700))
	require.NoError(t, syscall.Mkfifo(pipe, 0o600))

	var found []store.Digest
	bad := map[string]string{}
	err := s.Each(ctx, func(d store.Digest, fi store.FileInfo) error {
		assert.NoError(t, fi.Bad)
		found = append(found, d)
		return nil
	}, func(name string, why error) { bad[name] = why.Error() })
	require.NoError(t, err)

	assert.Equal(t, []store.Digest{d}, found)
	var names []string
	for n := range bad {
		names = append(names, n)
	}
	sort.Strings(names)
	var want []string
	for _, p := range []string{filepath.Join(shard, "README"), wrongShard, misplaced, pipe} {
		want = append(want, relTo(t, l, p))
	}
	if otherShard != shard {
		want = append(want, relTo(t, l, link))
	}
	sort.Strings(want)
	assert.Equal(t, want, names)
	assert.Contains(t, bad[relTo(t, l, misplaced)], "shard")
}

// relTo returns path relative to l's folder.
func relTo(t *testing.T, l *Local, path string) string {
	t.Helper()
	r, err := filepath.Rel(l.Dir(), path)
	require.NoError(t, err)
	return r
}
