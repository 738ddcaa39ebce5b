package migrate_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/internal/testsession"
	"github.com/transcript-tool/transcript-tool/migrate"
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/session"
	"github.com/transcript-tool/transcript-tool/store/local"
)

// goroutines records the most goroutines seen while files are read.
type goroutines struct {
	mu  sync.Mutex
	max int
}

func (g *goroutines) Add(int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.max = max(g.max, runtime.NumGoroutine())
}

// TestMigrateHugeJobs: a --jobs of ten million starts a worker per input,
// not ten million.
func TestMigrateHugeJobs(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i := range 3 {
		path := filepath.Join(dir, "s"+strconv.Itoa(i)+".jsonl")
		writeFile(t, path, testsession.Pi("s"+strconv.Itoa(i), 2, payload), 0o644)
		paths = append(paths, path)
	}
	before := runtime.NumGoroutine()
	seen := &goroutines{}

	sum := migrateRun(t, migrate.Options{Jobs: 10_000_000, Progress: seen}, paths...)

	require.Equal(t, 3, sum.Migrated, sum.Results)
	assert.LessOrEqual(t, seen.max, before+3+2, "workers beyond one per input")
}

// TestMigrateRepeatedPayloadsStores: payloads met again across files, by
// two workers, and in the two stores of one run (the cache of what
// payloads became is the run's, the stores are not): each store gets the
// artifacts its transcripts name, each written once, and every file
// restores exactly.
func TestMigrateRepeatedPayloadsStores(t *testing.T) {
	dir := t.TempDir()
	orig := map[string][]byte{}
	var paths []string
	for _, root := range []string{"a", "b"} {
		for i := range 4 {
			path := filepath.Join(dir, root, "s"+strconv.Itoa(i)+".jsonl")
			orig[path] = testsession.Pi(root+strconv.Itoa(i), 3, payload)
			writeFile(t, path, orig[path], 0o644)
			paths = append(paths, path)
		}
	}

	sum := migrateRun(t, migrate.Options{Jobs: 2}, paths...)

	require.Equal(t, len(paths), sum.Migrated, sum.Results)
	a, b := objects(t, filepath.Join(dir, "a", session.StoreDirName)), objects(t, filepath.Join(dir, "b", session.StoreDirName))
	require.NotEmpty(t, a)
	assert.Equal(t, a, b, "the second store lacks what the first has")
	assert.Equal(t, len(a)+len(b), sum.Written, "objects written")
	assert.Equal(t, sum.Artifacts, sum.Written+sum.Deduplicated)
	for _, path := range paths {
		assert.Equal(t, orig[path], rehydrate(t, path, ""), path)
	}
}

// TestDoneWhileStoreHeld: Done is called for each file once its output is
// in place and while the run still holds the store's lock, so that a
// caller copying the output into a bucket does it before a collector may
// run; an error from Done fails the file.
func TestDoneWhileStoreHeld(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	writeFile(t, a, testsession.Pi("a", 2, 5000), 0o644)
	writeFile(t, b, testsession.Pi("b", 2, 5000), 0o644)
	storeDir := filepath.Join(dir, session.StoreDirName)
	var done []string
	opts := migrate.Options{Jobs: 1, Done: func(res *migrate.FileResult) error {
		data, err := os.ReadFile(res.Dest)
		require.NoError(t, err)
		assert.Contains(t, string(data), "stored as artifact", "%s: Done before its output is in place", res.Path)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		lock, err := registry.New(local.New(storeDir)).LockExclusive(ctx, nil)
		if err == nil {
			lock.Close()
		}
		assert.ErrorIs(t, err, context.DeadlineExceeded, "a collector could take the store during Done")
		done = append(done, filepath.Base(res.Path))
		if filepath.Base(res.Path) == "b.jsonl" {
			return errors.New("the bucket refused it")
		}
		return nil
	}}
	sum := migrateRun(t, opts, dir)
	assert.Equal(t, []string{"a.jsonl", "b.jsonl"}, done)
	assert.Equal(t, 1, sum.Migrated)
	assert.Equal(t, 1, sum.Failed)
}
