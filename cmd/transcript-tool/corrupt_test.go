package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/internal/testsession"
	storepkg "github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/local"
)

// TestCorruptArtifact damages the artifact of a session's second tool
// result in every way a disk or a person can: verify names the artifact
// and the line that needs it (status 1), rehydrate fails naming the line
// and writes no wrong byte (to stdout none at all, with --out
// no file, in place the migrated file left as it was), and cat, show
// --rehydrate and check refuse it.
func TestCorruptArtifact(t *testing.T) {
	other := []byte(testsession.Text(9, 5000))
	damages := []struct {
		name string
		// damage changes the artifact's file obj, whose bytes were data,
		// and returns what verify must say about the store: a
		// regular expression.
		damage func(t *testing.T, obj string, data []byte) string
	}{
		{"one bit flipped", func(t *testing.T, obj string, data []byte) string {
			data = bytes.Clone(data)
			data[len(data)/2] ^= 0x01
			require.NoError(t, os.WriteFile(obj, data, 0o600))
			return corrupt(obj)
		}},
		{"truncated", func(t *testing.T, obj string, data []byte) string {
			require.NoError(t, os.Truncate(obj, int64(len(data)/2)))
			return corrupt(obj)
		}},
		{"emptied", func(t *testing.T, obj string, data []byte) string {
			require.NoError(t, os.Truncate(obj, 0))
			return corrupt(obj)
		}},
		{"a byte appended", func(t *testing.T, obj string, data []byte) string {
			require.NoError(t, os.WriteFile(obj, append(bytes.Clone(data), '\n'), 0o600))
			return corrupt(obj)
		}},
		{"another artifact's bytes under its name", func(t *testing.T, obj string, data []byte) string {
			require.NoError(t, os.WriteFile(obj, other, 0o600))
			return corrupt(obj)
		}},
		{"renamed", func(t *testing.T, obj string, data []byte) string {
			wrong := filepath.Join(filepath.Dir(obj), storepkg.Sum(other).String())
			require.NoError(t, os.Rename(obj, wrong))
			return `(?m)^error: ` + regexp.QuoteMeta(wrong) + `: artifact in shard ` + filepath.Base(filepath.Dir(obj)) + `, not ..$`
		}},
		{"moved to another shard", func(t *testing.T, obj string, data []byte) string {
			moved := filepath.Join(filepath.Dir(filepath.Dir(obj)), "00", filepath.Base(obj))
			require.NoError(t, os.MkdirAll(filepath.Dir(moved), 0o700))
			require.NoError(t, os.Rename(obj, moved))
			return `(?m)^error: ` + regexp.QuoteMeta(moved) + `: artifact in shard 00, not ..$`
		}},
		{"a directory", func(t *testing.T, obj string, data []byte) string {
			require.NoError(t, os.Remove(obj))
			require.NoError(t, os.Mkdir(obj, 0o700))
			return `(?m)^error: ` + regexp.QuoteMeta(obj) + `: not a regular file$`
		}},
	}
	for _, dm := range damages {
		t.Run(dm.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "s.jsonl")
			orig := testsession.Pi("s", 3, 5000)
			writeFile(t, path, orig)
			require.Equal(t, exitOK, runCLI(t, "migrate", path).code)
			migrated := readFile(t, path)
			store := filepath.Join(dir, "artifacts")
			text := []byte(testsession.Text(2, 5000))
			d := storepkg.Sum(text)
			obj := filepath.Join(store, local.ObjectPath(d))
			says := dm.damage(t, obj, text)
			offset := len(bytes.Join(bytes.SplitAfter(migrated, []byte("\n"))[:5], nil))
			at := regexp.QuoteMeta(fmt.Sprintf("s.jsonl:6: byte %d: ", offset))

			r := runCLI(t, "verify", path)
			assert.Equal(t, exitProblems, r.code, r.stdout+r.stderr)
			assert.Regexp(t, says, r.stdout)
			assert.Regexp(t, `(?m)^error: .*`+at+`((missing|corrupt) artifact: |.*is a directory$)`, r.stdout)
			assert.NotContains(t, r.stdout, "s.jsonl:4:", "the other lines are intact")
			assert.NotContains(t, r.stdout, ": 0 errors")

			r = runCLI(t, "rehydrate", path)
			assert.Equal(t, exitProblems, r.code)
			assert.Regexp(t, `transcript-tool: error: .*`+at, r.stderr)
			assert.Empty(t, r.stdout, "rehydrate wrote bytes of a file that does not restore")

			out := filepath.Join(dir, "out")
			r = runCLI(t, "rehydrate", "--out", out, path)
			assert.Equal(t, exitProblems, r.code)
			assert.Regexp(t, `transcript-tool: error: .*`+at, r.stderr)
			assert.Contains(t, r.stdout, "restored 0 of 1 file (1 failed)")
			entries, _ := os.ReadDir(out)
			assert.Empty(t, entries, "rehydrate --out left a file behind")

			r = runCLI(t, "rehydrate", "--in-place", path)
			assert.Equal(t, exitProblems, r.code)
			assert.Regexp(t, `transcript-tool: error: .*`+at, r.stderr)
			assert.Equal(t, migrated, readFile(t, path), "rehydrate --in-place changed the file")
			assert.Len(t, mustReadDir(t, dir), 3, "no temporary file left beside the transcript")

			r = runCLI(t, "cat", "--store", store, d.String())
			assert.Equal(t, exitUsage, r.code)
			assert.Empty(t, r.stdout)
			assert.Regexp(t, `artifact (corrupt|not found)|is a directory|not a regular file`, r.stderr)

			r = runCLI(t, "show", "--rehydrate", path)
			assert.Equal(t, exitProblems, r.code)
			assert.Regexp(t, `transcript-tool: error: .*`+at, r.stderr)
			assert.Contains(t, r.stdout, "line 6: cannot rehydrate (")

			r = runCLI(t, "check", "--store", store, path)
			assert.Equal(t, exitProblems, r.code)
			assert.Contains(t, r.stdout, "s.jsonl:6: reference does not restore: ")
		})
	}
}

// corrupt is what verify says of an object whose bytes do not hash to its
// name.
func corrupt(obj string) string {
	return `(?m)^error: ` + regexp.QuoteMeta(obj) + `: corrupt artifact: ` + regexp.QuoteMeta(obj) + `: artifact corrupt: its bytes do not hash to its name$`
}

func mustReadDir(t *testing.T, dir string) []os.DirEntry {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	return entries
}
