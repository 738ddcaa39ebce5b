package inspect_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/inspect"
	"github.com/transcript-tool/transcript-tool/internal/testsession"
	"github.com/transcript-tool/transcript-tool/migrate"
)

// longSession has lines longer than migrate.LongLine: two tool results
// of 5 MiB, and a line of nine million numbers, too much structure for a
// skeleton in bounded memory.
func longSession() string {
	numbers := `{"type":"message","id":"n1","message":{"role":"toolResult","toolCallId":"n","toolName":"x","content":[` +
		strings.Repeat("1,", 9<<20) + `1]}}` + "\n"
	return string(testsession.Pi("long", 2, 5<<20)) + numbers
}

func zstdOf(t *testing.T, s string) string {
	t.Helper()
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf)
	require.NoError(t, err)
	_, err = w.Write([]byte(s))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.String()
}

// TestCheckLongLines: a long line of a plain transcript is checked from
// its skeleton, with the findings and sizes of the whole line (which a
// compressed transcript, read whole, gives); one too large even for a
// skeleton gets a note instead of its payloads.
func TestCheckLongLines(t *testing.T) {
	s := longSession()
	require.Greater(t, strings.Index(s[strings.Index(s, "toolResult"):], "\n"), migrate.LongLine, "the lines are not long")
	dir := tree(t, map[string]string{"plain/s.jsonl": s, "zst/s.jsonl.zst": zstdOf(t, s)})
	opts := inspect.CheckOptions{MaxInline: threshold, MaxLine: 1 << 20}

	plain, plainTotals := check(t, opts, filepath.Join(dir, "plain"))
	whole, wholeTotals := check(t, opts, filepath.Join(dir, "zst"))

	var inline []inspect.Finding
	for _, f := range plain {
		if f.Kind == inspect.KindInline {
			inline = append(inline, f)
		}
	}
	require.Len(t, inline, 2, "one payload on each result line")
	for _, f := range inline {
		assert.Greater(t, f.Size, int64(5<<20), f.Message)
	}
	// The same findings but for the numbers' line: a note for them
	// instead of their payload.
	var notes, others []inspect.Finding
	for _, f := range plain {
		if f.Kind == inspect.KindNote {
			notes = append(notes, f)
		} else {
			others = append(others, f)
		}
	}
	var want []inspect.Finding
	for _, f := range whole {
		if f.Line != 7 || f.Kind != inspect.KindInline {
			f.File = filepath.Join(dir, "plain", "s.jsonl")
			want = append(want, f)
		}
	}
	assert.Equal(t, want, others)
	require.Len(t, notes, 1, "%v", plain)
	assert.Equal(t, 7, notes[0].Line)
	assert.Contains(t, notes[0].Message, "too large to inspect in bounded memory")
	assert.Equal(t, wholeTotals.Bytes, plainTotals.Bytes)
	assert.Equal(t, wholeTotals.LongLines, plainTotals.LongLines)
	assert.Equal(t, wholeTotals.InlinePayloads-1, plainTotals.InlinePayloads, "all but the numbers")
}

// TestCheckLongMigratedLine: a long line that carries a marker (here, a
// migrated line with megabytes of short strings left) is read whole, so
// that its references are checked.
func TestCheckLongMigratedLine(t *testing.T) {
	short := strings.Repeat(`"abcdef",`, 600_000)
	line := `{"type":"message","id":"m1","parentId":null,"timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"call_1","toolName":"read","content":[{"type":"text","text":` +
		jsonString(text(1, 5000)) + `}],"isError":false,"timestamp":1735689603000},"names":[` + short + `"x"]}` + "\n"
	dir := tree(t, map[string]string{"s.jsonl": string(testsession.Pi("m", 1, 300)) + line})
	migrateTree(t, dir)
	migrated, err := os.ReadFile(filepath.Join(dir, "s.jsonl"))
	require.NoError(t, err)
	last := migrated[bytes.LastIndexByte(migrated[:len(migrated)-1], '\n')+1:]
	require.Greater(t, len(last), migrate.LongLine, "the migrated line is not long")

	store := filepath.Join(dir, migrate.StoreDirName)
	found, _ := check(t, inspect.CheckOptions{MaxInline: threshold, Store: store}, dir)
	assert.Empty(t, found)

	objects, err := filepath.Glob(filepath.Join(store, "objects", "*", "*"))
	require.NoError(t, err)
	for _, o := range objects {
		require.NoError(t, os.Remove(o))
	}
	found, _ = check(t, inspect.CheckOptions{MaxInline: threshold, Store: store}, dir)
	assert.Equal(t, []where{{kind: inspect.KindReference, file: "s.jsonl", line: 4}, {kind: inspect.KindReference, file: "s.jsonl", line: 5}}, wheres(found))
}

// TestStatsLongLines: stats reads long lines from their skeletons and
// still predicts exactly what migrate saves; the line too large for a
// skeleton is counted by its size, with a note.
func TestStatsLongLines(t *testing.T) {
	dir := tree(t, map[string]string{"s.jsonl": longSession()})
	rep := stats(t, inspect.StatsOptions{Threshold: threshold}, dir)
	sum := migrateTree(t, dir)

	m := rep.Migrate
	assert.Equal(t, sum.BytesBefore, m.BytesBefore)
	assert.Equal(t, sum.BytesAfter, m.BytesAfter)
	assert.Equal(t, sum.Artifacts, m.Artifacts)
	assert.Equal(t, sum.Written, m.New)
	assert.Equal(t, storeBytes(t, dir), m.NewBytes)
	require.Len(t, rep.Findings, 1)
	assert.Equal(t, 7, rep.Findings[0].Line)
	assert.Contains(t, rep.Findings[0].Message, "too large to inspect in bounded memory")
	assert.Equal(t, counted{lines: 1}, groups(rep.EntryTypes)["pi "+inspect.TooLarge])
	assert.Equal(t, int64(2), rep.Formats[0].Payloads)
}
