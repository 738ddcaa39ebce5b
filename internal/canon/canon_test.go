package canon

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPath(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	real := filepath.Join(root, "real")
	require.NoError(t, os.MkdirAll(filepath.Join(real, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(real, "sub", "s.jsonl"), nil, 0o644))
	require.NoError(t, os.Symlink(real, filepath.Join(root, "link")))
	require.NoError(t, os.Symlink(filepath.Join(real, "sub", "s.jsonl"), filepath.Join(root, "file-link")))
	t.Chdir(filepath.Join(real, "sub"))

	want := filepath.Join(real, "sub", "s.jsonl")
	for _, p := range []string{
		"s.jsonl", "./s.jsonl", "../sub/s.jsonl", want,
		filepath.Join(root, "link", "sub", "s.jsonl"),
		filepath.Join(root, "link", "sub", "..", "sub", "s.jsonl"),
		filepath.Join(root, "file-link"),
	} {
		got, err := Path(p)
		require.NoError(t, err)
		assert.Equal(t, want, got, "for %s", p)
	}

	// What does not exist yet is resolved as far as it exists.
	got, err := Path(filepath.Join(root, "link", "new", "artifacts"))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(real, "new", "artifacts"), got)
	got, err = Path("artifacts")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(real, "sub", "artifacts"), got)

	for _, u := range []string{"", "s3://bucket/prefix", "s3://b"} {
		got, err := Path(u)
		require.NoError(t, err)
		assert.Equal(t, u, got)
	}
}

func TestIsURL(t *testing.T) {
	assert.True(t, IsURL("s3://b/p"))
	assert.True(t, IsURL("gs://b"))
	assert.False(t, IsURL("./a://b"))
	assert.False(t, IsURL("dir.d://x"))
	assert.False(t, IsURL("://x"))
	assert.False(t, IsURL("/tmp/x"))
}
