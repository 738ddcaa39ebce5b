package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCopyTree(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "copy")
	want := map[string]string{
		"a.jsonl":               "one\n",
		"objects/ab/abcdef":     strings.Repeat("x", 3<<20), // more than one buffer
		"objects/cd/cdef01":     "",
		"deep/er/still/z.jsonl": "z",
	}
	for name, data := range want {
		path := filepath.Join(src, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
		require.NoError(t, os.WriteFile(path, []byte(data), 0o600))
	}
	require.NoError(t, os.Mkdir(filepath.Join(src, "empty"), 0o700))

	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"-jobs", "3", src, dst}, &out, &errOut), errOut.String())
	require.Equal(t, "4 files, 3145733 bytes\n", out.String())
	for name, data := range want {
		got, err := os.ReadFile(filepath.Join(dst, name))
		require.NoError(t, err)
		require.Equal(t, data, string(got), name)
	}
	require.DirExists(t, filepath.Join(dst, "empty"))

	// The destination must be new: nothing is overwritten.
	errOut.Reset()
	require.Equal(t, 1, run([]string{src, dst}, &out, &errOut))
	require.Contains(t, errOut.String(), "exists")
}
