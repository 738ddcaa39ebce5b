package agentdb

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/internal/openclawgen"
)

// TestReplaceReclaims: a database made with auto_vacuum=INCREMENTAL, as
// OpenClaw makes them, shrinks on disk once large rows were replaced by
// short ones, rather than keep the freed pages until OpenClaw reclaims
// them.
func TestReplaceReclaims(t *testing.T) {
	s := openclawgen.Workload("66666666-6666-4666-8666-666666666666", "agent:main:main", 4, 400000)
	for i, l := range s.Lines {
		// A \u escape keeps the row text, as OpenClaw stores JSON with one.
		s.Lines[i] = strings.ReplaceAll(l, "quick brown", `quick\u001bbrown`)
	}
	state := t.TempDir()
	require.NoError(t, openclawgen.Write(state, "main", []openclawgen.Session{s}))
	d, err := Open(openclawgen.DBPath(state, "main"))
	require.NoError(t, err)
	size := func() int64 {
		var n int64
		for _, f := range []string{d.Path, d.Path + "-wal"} {
			if fi, err := os.Stat(f); err == nil {
				n += fi.Size()
			}
		}
		return n
	}
	before := size()
	var short []string
	for _, l := range s.Lines {
		if i := strings.Index(l, `"text":"file`); i >= 0 && strings.Contains(l, `"role":"toolResult"`) {
			end := strings.Index(l, `"}],"details"`)
			l = l[:i] + `"text":"stored elsewhere` + l[end:]
		}
		short = append(short, l)
	}
	file := filepath.Join(t.TempDir(), "s.jsonl")
	snap, err := d.Fetch(context.Background(), s.ID, &strings.Builder{})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, []byte(strings.Join(short, "\n")+"\n"), 0o600))
	n, err := d.Replace(context.Background(), snap, file)
	require.NoError(t, err)
	assert.Equal(t, 4, n)
	after := size()
	t.Logf("database: %d bytes, %d after the replace", before, after)
	assert.Less(t, after, before/4)
}
