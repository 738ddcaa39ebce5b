package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deepSession returns a pi session whose lines nest 4096, 10,000 and
// 10,000,000 levels deep, in arrays and objects, balanced and never
// closed, between two ordinary tool results that migrate externalizes,
// and the numbers of the deep lines.
func deepSession(t *testing.T) ([]byte, []int) {
	t.Helper()
	text, err := json.Marshal(strings.Repeat("file line: the quick brown fox jumps over the lazy dog\n", 100))
	require.NoError(t, err)
	js := string(text)
	result := func(i int, content, details string) string {
		if details != "" {
			details = `,"details":` + details
		}
		return fmt.Sprintf(`{"type":"message","id":"r%d","parentId":null,"timestamp":"2025-01-01T00:00:%02d.000Z","message":{"role":"toolResult","toolCallId":"call_%d","toolName":"read","content":%s%s,"isError":false}}`,
			i, i, i, content, details)
	}
	block := `[{"type":"text","text":` + js + `}]`
	lines := []string{`{"type":"session","version":3,"id":"deep","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}`, result(1, block, "")}
	var deep []int
	add := func(l string) {
		lines = append(lines, l)
		deep = append(deep, len(lines))
	}
	for _, n := range []int{4096, 10_000} {
		add(result(2, strings.Repeat("[", n)+js+strings.Repeat("]", n), ""))
		add(result(3, block, `{"jsonOutputs":`+strings.Repeat(`{"a":`, n)+js+strings.Repeat("}", n)+"}"))
		add(result(4, strings.Repeat("[", n), ""))
		add(result(5, block, strings.Repeat(`{"":`, n)))
	}
	add(result(6, strings.Repeat("[", 10_000_000)+strings.Repeat("]", 10_000_000), ""))
	lines = append(lines, result(7, block, ""))
	return []byte(strings.Join(lines, "\n") + "\n"), deep
}

// TestDeepNesting runs every command that reads transcripts over lines
// nested far deeper than any parser should follow: nothing crashes, the
// deep lines are kept byte for byte while the others are migrated, the
// round trip is exact, and where a command reports a deep line it names
// its line.
func TestDeepNesting(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	orig, deep := deepSession(t)
	writeFile(t, path, orig)
	origLines := bytes.SplitAfter(orig, []byte("\n"))
	long := deep[len(deep)-1]

	r := runCLI(t, "stats", path)
	assert.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, fmt.Sprintf("1 file, %d lines", len(origLines)-1))
	assert.Contains(t, r.stdout, "s.jsonl:2\n", "the ordinary payloads are still found")

	r = runCLI(t, "check", path)
	assert.Equal(t, exitProblems, r.code, r.stderr)
	assert.Contains(t, r.stdout, fmt.Sprintf("s.jsonl:%d: line of %d bytes; limit 1000000", long, len(origLines[long-1])-1))
	assert.Contains(t, r.stdout, "s.jsonl:2: inline payload of ")

	shown := map[string]string{}
	for _, mode := range []string{"--full=false", "--full"} {
		r = runCLI(t, "show", mode, path)
		assert.Equal(t, exitOK, r.code, r.stderr)
		for _, n := range deep {
			assert.Regexp(t, fmt.Sprintf(`(?m)^line %d: JSON nested too deeply to show \(%d bytes\)$`, n, len(origLines[n-1])-1), r.stdout)
		}
		assert.NotContains(t, r.stdout, "[[[[", "the deep lines are not printed")
		assert.NotContains(t, r.stdout, `{"a":{"a":`, "the deep lines are not printed")
		shown[mode] = r.stdout
	}

	r = runCLI(t, "migrate", path)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "migrated 1 of 1 file")
	migrated := readFile(t, path)
	assert.Less(t, len(migrated), len(orig), "the ordinary results were externalized")
	migratedLines := bytes.SplitAfter(migrated, []byte("\n"))
	require.Len(t, migratedLines, len(origLines))
	for _, n := range deep {
		assert.True(t, bytes.Equal(origLines[n-1], migratedLines[n-1]), "deep line %d kept as it was", n)
	}

	r = runCLI(t, "rehydrate", path)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.True(t, r.stdout == string(orig), "rehydrate restored other bytes")

	for _, args := range [][]string{{"verify", path}, {"check", "--store", filepath.Join(dir, "artifacts"), "--max-line", "0", path}} {
		r = runCLI(t, args...)
		assert.Equal(t, exitOK, r.code, "%v\n%s%s", args, r.stdout, r.stderr)
	}
	for mode, want := range shown {
		r = runCLI(t, "show", "--rehydrate", mode, path)
		assert.Equal(t, exitOK, r.code, r.stderr)
		assert.Equal(t, want, r.stdout, "show --rehydrate %s shows the migrated session as the original", mode)
	}

	r = runCLI(t, "recall", "--format", "json", path)
	assert.Equal(t, exitOK, r.code, r.stderr)
	var sec struct{ Items []struct{ ID string } }
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &sec))
	assert.Len(t, sec.Items, 1, "the one artifact both results share")

	r = runCLI(t, "migrate", path)
	assert.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "(1 unchanged,")
	assert.True(t, bytes.Equal(migrated, readFile(t, path)), "migrating again changed the file")

	r = runCLI(t, "rehydrate", "--in-place", path)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.True(t, bytes.Equal(orig, readFile(t, path)), "rehydrate --in-place restored other bytes")
	assert.Contains(t, r.stdout, "restored 1 of 1 file")
}
