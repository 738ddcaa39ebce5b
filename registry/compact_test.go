package registry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/local"
)

func rec(hash string) registry.Record {
	return registry.Record{Hash: strings.Repeat(hash, 64), Size: 1, Media: "text/plain", Site: "/c", CreatedAt: "t"}
}

func recLine(t *testing.T, r registry.Record) string {
	t.Helper()
	b, err := json.Marshal(r)
	require.NoError(t, err)
	return string(b) + "\n"
}

// hashes reads the registry of s: the first letter of each record's hash,
// and the line numbers of bad lines.
func hashes(t *testing.T, s *registry.Store) (recs []string, bad []int) {
	t.Helper()
	require.NoError(t, s.Records(context.Background(), func(r registry.Record) error {
		recs = append(recs, r.Hash[:1])
		return nil
	}, func(e *registry.BadLineError) { bad = append(bad, e.Line) }))
	return recs, bad
}

// registryFiles lists the registry's files in the store at dir: the
// single-file registry, if there, and the segments.
func registryFiles(t *testing.T, dir string) []string {
	t.Helper()
	segs, err := filepath.Glob(filepath.Join(dir, store.SegmentsDir, "*.jsonl"))
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(dir, store.RegistryFile)); err == nil {
		segs = append([]string{filepath.Join(dir, store.RegistryFile)}, segs...)
	}
	return segs
}

// TestCompact merges the single-file registry and every segment into one
// segment without the refused records, keeps lines that do not parse as
// they are, removes what it merged, and leaves a registry that other
// Stores append to.
func TestCompact(t *testing.T) {
	dir := t.TempDir()
	s1, s2 := registry.New(local.New(dir)), registry.New(local.New(dir))
	writeLegacy(t, dir, recLine(t, rec("0"))+"{not json\n")
	require.NoError(t, s1.Append(context.Background(), []registry.Record{rec("a"), rec("b")}))
	require.NoError(t, s2.Append(context.Background(), []registry.Record{rec("c")}))
	f, err := os.OpenFile(s2.SegmentPath(), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("{not json either\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	merged := registryFiles(t, dir)
	require.Len(t, merged, 3)

	n, err := s1.Compact(context.Background(), func(r registry.Record) bool { return r.Hash != strings.Repeat("a", 64) })
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	for _, path := range merged {
		assert.NoFileExists(t, path, "merged, yet not removed")
	}
	files := registryFiles(t, dir)
	require.Len(t, files, 1, "one segment")
	compacted := files[0]

	// The segment holds a header naming what it merged, then the lines.
	data, err := os.ReadFile(compacted)
	require.NoError(t, err)
	lines := strings.SplitAfter(string(data), "\n")
	var h struct {
		Compacts []struct {
			File   string
			Size   int64
			SHA256 string
		}
	}
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &h))
	require.Len(t, h.Compacts, 3)
	assert.Equal(t, store.RegistryFile, h.Compacts[0].File)
	assert.Equal(t, []string{recLine(t, rec("0")), "{not json\n", recLine(t, rec("b")), recLine(t, rec("c")), "{not json either\n", ""}, lines[1:])

	// s2 remembers the old files' records; it must append to a new
	// segment.
	require.NoError(t, s2.Append(context.Background(), []registry.Record{rec("d"), rec("b")}))
	assert.NotEqual(t, compacted, s2.SegmentPath())

	recs, bad := hashes(t, s1)
	assert.Equal(t, []string{"0", "b", "c", "d"}, recs, "a dropped, b not appended twice, d appended to a new segment")
	assert.Equal(t, []int{3, 6}, bad, "the bad lines are kept, numbered in the compacted segment")

	fi, err := os.Stat(compacted)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	for _, d := range []string{dir, filepath.Join(dir, store.SegmentsDir)} {
		leftovers, _ := filepath.Glob(filepath.Join(d, ".*"))
		assert.Empty(t, leftovers, "no temporary file left")
	}

	// Merged again, with nothing to drop, into one segment; which, alone,
	// is then left as it is.
	n, err = s1.Compact(context.Background(), func(registry.Record) bool { return true })
	require.NoError(t, err)
	assert.Zero(t, n)
	files = registryFiles(t, dir)
	require.Len(t, files, 1)
	again, err := os.ReadFile(files[0])
	require.NoError(t, err)
	n, err = s1.Compact(context.Background(), func(registry.Record) bool { return true })
	require.NoError(t, err)
	assert.Zero(t, n)
	assert.Equal(t, files, registryFiles(t, dir))
	after, err := os.ReadFile(files[0])
	require.NoError(t, err)
	assert.Equal(t, again, after)
	recs, _ = hashes(t, s1)
	assert.Equal(t, []string{"0", "b", "c", "d"}, recs)
}

// TestCompactNothing: a store without a registry has nothing to compact,
// and compacting makes none.
func TestCompactNothing(t *testing.T) {
	dir := t.TempDir()
	n, err := registry.New(local.New(dir)).Compact(context.Background(), func(registry.Record) bool { return true })
	require.NoError(t, err)
	assert.Zero(t, n)
	assert.NoDirExists(t, filepath.Join(dir, store.SegmentsDir))
}

func writeLegacy(t *testing.T, dir, data string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, store.RegistryFile), []byte(data), 0o600))
}

// countLines returns the number of lines of the file at path.
func countLines(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return bytes.Count(data, []byte("\n"))
}
