package migrate_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/internal/testsession"
	"github.com/transcript-tool/transcript-tool/migrate"
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/session"
	storepkg "github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/local"
)

// TestStoreLinksNeverFollowed plants symbolic links inside a store, to an
// artifact, a shard directory and the registry, all pointing at a sentinel
// tree outside it: migrate and rehydrate refuse or replace them, never read
// or write through them, and the sentinel tree is unchanged.
func TestStoreLinksNeverFollowed(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "secret")
	writeFile(t, secret, []byte("not an artifact"), 0o600)
	require.NoError(t, os.Mkdir(filepath.Join(outside, "shard"), 0o700))
	writeFile(t, filepath.Join(outside, "registry"), []byte("outside\n"), 0o600)
	writeFile(t, filepath.Join(outside, "segments", "w.jsonl"), []byte("outside\n"), 0o600)
	before := snapshot(t, outside)

	store := filepath.Join(dir, session.StoreDirName)
	objectOf := func(i int) string {
		return registry.New(local.New(store)).Path(storepkg.Sum([]byte(testsession.Text(i, payload))))
	}

	// An artifact replaced by a link: rehydrate refuses it as corrupt and
	// writes no byte of the link's target.
	a := filepath.Join(dir, "a.jsonl")
	aData := testsession.Pi("a", 1, payload)
	writeFile(t, a, aData, 0o644)
	require.Zero(t, migrateRun(t, migrate.Options{}, a).Failed)
	obj := objectOf(1)
	require.NoError(t, os.Remove(obj))
	require.NoError(t, os.Symlink(secret, obj))
	var out bytes.Buffer
	err := migrate.RehydrateTo(context.Background(), &out, session.Input{Path: a}, "", local.Open, nil)
	assert.ErrorIs(t, err, storepkg.ErrCorrupt)
	assert.NotContains(t, out.String(), "not an artifact")

	// Migrating the same payload again replaces the link by the artifact.
	b := filepath.Join(dir, "b.jsonl")
	writeFile(t, b, testsession.Pi("b", 1, payload), 0o644)
	require.Zero(t, migrateRun(t, migrate.Options{}, b).Failed)
	fi, err := os.Lstat(obj)
	require.NoError(t, err)
	assert.True(t, fi.Mode().IsRegular(), "the link was replaced by the object")
	assert.Equal(t, aData, rehydrate(t, a, ""))

	// A shard directory that is a link: the file fails, nothing is written.
	c := filepath.Join(dir, "c.jsonl")
	cData := testsession.Pi("c", 3, payload)
	writeFile(t, c, cData, 0o644)
	for i := 2; i <= 3; i++ {
		shard := filepath.Dir(objectOf(i))
		if _, err := os.Lstat(shard); os.IsNotExist(err) {
			require.NoError(t, os.Symlink(filepath.Join(outside, "shard"), shard))
		}
	}
	sum := migrateRun(t, migrate.Options{}, c)
	r := result(t, sum, c)
	assert.Equal(t, migrate.StatusFailed, r.Status)
	assert.ErrorIs(t, r.Err, storepkg.ErrLinked)
	assert.Equal(t, cData, readFile(t, c))

	// A registry that is a link: refused, the transcript left as it was.
	for i := 2; i <= 3; i++ {
		if fi, err := os.Lstat(filepath.Dir(objectOf(i))); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			require.NoError(t, os.Remove(filepath.Dir(objectOf(i))))
		}
	}
	// The segments' directory linked to a folder or a file, and the
	// single-file registry of earlier versions linked to a file.
	segs, legacy := filepath.Join(store, storepkg.SegmentsDir), filepath.Join(store, storepkg.RegistryFile)
	for _, link := range []struct{ at, to string }{
		{segs, filepath.Join(outside, "segments")},
		{segs, filepath.Join(outside, "registry")},
		{legacy, filepath.Join(outside, "registry")},
	} {
		for _, p := range []string{segs, legacy} {
			require.NoError(t, os.RemoveAll(p))
		}
		require.NoError(t, os.Symlink(link.to, link.at))
		sum = migrateRun(t, migrate.Options{}, c)
		r = result(t, sum, c)
		assert.Equal(t, migrate.StatusFailed, r.Status, "%s -> %s", link.at, link.to)
		assert.ErrorIs(t, r.Err, storepkg.ErrLinked, "%s -> %s", link.at, link.to)
		assert.Equal(t, cData, readFile(t, c))
	}

	assert.Equal(t, before, snapshot(t, outside), "nothing outside the store was touched")
}
