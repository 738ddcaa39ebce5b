package session_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/session"
)

// TestCollectHardLinks: a file under three names is one input, under the
// name found first, whether its names are given or found.
func TestCollectHardLinks(t *testing.T) {
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl"), filepath.Join(dir, "sub", "c.jsonl")
	touch(t, a)
	require.NoError(t, os.Mkdir(filepath.Dir(c), 0o755))
	require.NoError(t, os.Link(a, b))
	require.NoError(t, os.Link(a, c))
	touch(t, filepath.Join(dir, "d.jsonl"))

	for _, tc := range []struct {
		paths []string
		want  []string
	}{
		{[]string{dir}, []string{a, filepath.Join(dir, "d.jsonl")}},
		{[]string{c, b, a}, []string{c}},
		{[]string{b, dir}, []string{b, filepath.Join(dir, "d.jsonl")}},
	} {
		inputs, err := session.Collect(tc.paths)
		require.NoError(t, err)
		var got []string
		for _, in := range inputs {
			got = append(got, in.Path)
		}
		assert.Equal(t, tc.want, got, "%v", tc.paths)
	}
}
