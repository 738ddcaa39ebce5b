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
