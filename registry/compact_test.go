package registry_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/registry"
)

func rec(hash string) registry.Record {
	return registry.Record{Hash: strings.Repeat(hash, 64), Size: 1, Media: "text/plain", Site: "/c", CreatedAt: "t"}
}

// TestCompact drops the refused records, keeps lines that do not parse
// as they are, and leaves a registry that another Store appends to.
func TestCompact(t *testing.T) {
	dir := t.TempDir()
	s1, s2 := registry.Open(dir), registry.Open(dir)
	require.NoError(t, s1.Append([]registry.Record{rec("a"), rec("b")}))
	require.NoError(t, s2.Append([]registry.Record{rec("c")}))
	path := s1.RegistryPath()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("{not json\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())

	n, err := s1.Compact(func(r registry.Record) bool { return r.Hash != strings.Repeat("a", 64) })
	require.NoError(t, err)
	assert.Equal(t, 1, n)

	// s2 remembers the old file's records; it must append to the new one.
	require.NoError(t, s2.Append([]registry.Record{rec("d"), rec("b")}))

	var hashes []string
	var bad []int
	require.NoError(t, s1.Records(func(r registry.Record) error {
		hashes = append(hashes, r.Hash[:1])
		return nil
	}, func(e *registry.BadLineError) { bad = append(bad, e.Line) }))
	assert.Equal(t, []string{"b", "c", "d"}, hashes, "a dropped, b not appended twice, d appended to the new file")
	assert.Equal(t, []int{3}, bad, "the bad line is kept where it was")

	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".*"))
	assert.Empty(t, leftovers, "no temporary file left")

	n, err = s1.Compact(func(registry.Record) bool { return true })
	require.NoError(t, err)
	assert.Zero(t, n)
}
