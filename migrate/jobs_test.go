package migrate_test

import (
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/internal/testsession"
	"github.com/transcript-tool/transcript-tool/migrate"
	"github.com/transcript-tool/transcript-tool/session"
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
