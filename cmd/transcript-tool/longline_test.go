package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/internal/testsession"
)

// TestMigrateLongLineKept: a line too large to migrate in bounded memory
// is copied as it is, and migrate says so on stderr and in --json.
func TestMigrateLongLineKept(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	numbers := `{"type":"message","message":{"role":"toolResult","toolCallId":"n","toolName":"x","content":[` +
		strings.Repeat("1,", 9<<20) + `1]}}` + "\n"
	orig := append(testsession.Pi("s1", 1, 6000), numbers...)
	writeFile(t, path, orig)

	r := runCLI(t, "migrate", "--json", path)

	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stderr, "s.jsonl: 1 line too large to migrate in bounded memory")
	assert.Contains(t, r.stdout, `"longLinesKept": 1`)
	out := readFile(t, path)
	assert.True(t, bytes.HasSuffix(out, []byte(numbers)), "the long line is not kept as it was")
	assert.Less(t, len(out), len(orig), "the other lines were not migrated")
	back := runCLI(t, "rehydrate", path)
	require.Equal(t, exitOK, back.code, back.stderr)
	assert.True(t, back.stdout == string(orig), "the round trip is not exact")
}
