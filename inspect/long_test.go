package inspect_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/jpeg"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/externalizer"
	"github.com/transcript-tool/transcript-tool/format"
	"github.com/transcript-tool/transcript-tool/inspect"
	"github.com/transcript-tool/transcript-tool/internal/testsession"
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/session"
	"github.com/transcript-tool/transcript-tool/store/local"
)

// longSession has lines longer than session.LongLine: two tool results
// of 5 MiB, and a line of nine million numbers, too much structure for a
// skeleton in bounded memory.
func longSession() string {
	numbers := `{"type":"message","id":"n1","message":{"role":"toolResult","toolCallId":"n","toolName":"x","content":[` +
		strings.Repeat("1,", 9<<20) + `1]}}` + "\n"
	return string(testsession.Pi("long", 2, 5<<20)) + numbers
}

// plainAndZst writes transcript s as s.jsonl into one directory and
// compressed as s.jsonl.zst into another, and returns the two
// directories.
func plainAndZst(t *testing.T, s string) (plain, zst string) {
	t.Helper()
	// Folders of one length, for placeholders of one length: they hold
	// the store's absolute path.
	dir := tree(t, map[string]string{"txt/s.jsonl": s, "zst/s.jsonl.zst": zstdOf(t, s)})
	return filepath.Join(dir, "txt"), filepath.Join(dir, "zst")
}

// wholeCheck and wholeStats are check and stats reading every line whole:
// what reading long lines from skeletons must find.
func wholeCheck(t *testing.T, opts inspect.CheckOptions, dir string) ([]inspect.Finding, inspect.CheckTotals) {
	defer inspect.ReadWhole()()
	return check(t, opts, dir)
}

func wholeStats(t *testing.T, opts inspect.StatsOptions, dir string) inspect.StatsReport {
	defer inspect.ReadWhole()()
	return stats(t, opts, dir)
}

// renamed returns found with every finding's file set to file.
func renamed(found []inspect.Finding, file string) []inspect.Finding {
	out := make([]inspect.Finding, len(found))
	for i, f := range found {
		f.File = file
		out[i] = f
	}
	return out
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

// TestCheckLongLines: a long line is checked from its skeleton, with the
// findings and sizes of the whole line, in a plain transcript as in a
// compressed one; one too large even for a skeleton fails the check.
func TestCheckLongLines(t *testing.T) {
	s := longSession()
	require.Greater(t, strings.Index(s[strings.Index(s, "toolResult"):], "\n"), session.LongLine, "the lines are not long")
	plainDir, zstDir := plainAndZst(t, s)
	opts := inspect.CheckOptions{MaxInline: threshold, MaxLine: 1 << 20}

	plain, plainTotals := check(t, opts, plainDir)
	whole, wholeTotals := wholeCheck(t, opts, plainDir)
	zst, zstTotals := check(t, opts, zstDir)

	var inline []inspect.Finding
	for _, f := range plain {
		if f.Kind == inspect.KindInline {
			inline = append(inline, f)
		}
	}
	require.Len(t, inline, 3, "one payload on each result line, and the numbers")
	for _, f := range inline {
		assert.Greater(t, f.Size, int64(5<<20), f.Message)
	}
	// The same findings but for the numbers' line, which fails closed: an
	// inline payload of the whole line's size at no site.
	var want []inspect.Finding
	for _, f := range whole {
		f.File = filepath.Join(plainDir, "s.jsonl")
		if f.Line == 7 && f.Kind == inspect.KindInline {
			f.Site, f.Tool, f.Size = "", "", 18874474
			f.Message = "line of 18874474 bytes too large to inspect in bounded memory (too much of it is numbers, literals or short strings): counted as an inline payload, since it cannot be shown to hold none"
		}
		want = append(want, f)
	}
	assert.Equal(t, want, plain)
	assert.Equal(t, wholeTotals.Bytes, plainTotals.Bytes)
	assert.Equal(t, wholeTotals.LongLines, plainTotals.LongLines)
	assert.Equal(t, wholeTotals.InlinePayloads, plainTotals.InlinePayloads)
	assert.Equal(t, wholeTotals.Violations, plainTotals.Violations)
	assert.Equal(t, plain, renamed(zst, filepath.Join(plainDir, "s.jsonl")))
	assert.Equal(t, plainTotals, zstTotals)
}

// TestCheckLongMigratedLine: a long line that carries a marker (here, a
// migrated line with megabytes of short strings left) is read whole, so
// that its references are checked.
func TestCheckLongMigratedLine(t *testing.T) {
	short := strings.Repeat(`"abcdef",`, 600_000)
	line := `{"type":"message","id":"m1","parentId":null,"timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"call_1","toolName":"read","content":[{"type":"text","text":` +
		jsonString(text(1, 5000)) + `}],"isError":false,"timestamp":1735689603000},"names":[` + short + `"x"]}` + "\n"
	dir := tree(t, map[string]string{"s.jsonl": string(testsession.Pi("m", 1, 2000)) + line})
	migrateTree(t, dir)
	migrated, err := os.ReadFile(filepath.Join(dir, "s.jsonl"))
	require.NoError(t, err)
	last := migrated[bytes.LastIndexByte(migrated[:len(migrated)-1], '\n')+1:]
	require.Greater(t, len(last), session.LongLine, "the migrated line is not long")

	store := filepath.Join(dir, session.StoreDirName)
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

// TestCheckTooLargeMigratedLine: a migrated line too large even for a
// skeleton (one rewritten whole, as lines shorter than session.LongLine
// are) is read whole for check --store, which finds its references
// broken.
func TestCheckTooLargeMigratedLine(t *testing.T) {
	line := `{"type":"message","id":"m1","message":{"role":"toolResult","toolCallId":"call_1","toolName":"read","content":[{"type":"text","text":` +
		jsonString(text(1, 5000)) + `}]},"nums":[` + strings.Repeat("1,", 9<<20) + `1]}`
	dir := tree(t, map[string]string{"s.jsonl": string(testsession.Pi("m", 1, 2000))})
	migrateTree(t, dir)
	store := registry.New(local.New(filepath.Join(dir, session.StoreDirName)))
	pi, _ := format.Lookup("pi")
	x := &externalizer.Externalizer{Format: pi, Threshold: threshold, PathFor: store.Path, Put: func(a externalizer.Artifact) error {
		_, _, err := store.PutSum(context.Background(), a.Digest, a.Data)
		return err
	}}
	res, err := x.Rewrite([]byte(line), 0)
	require.NoError(t, err)
	require.NotNil(t, res.Line, "the line was not migrated")
	f, err := os.OpenFile(filepath.Join(dir, "s.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.Write(append(res.Line, '\n'))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	objects, err := filepath.Glob(filepath.Join(store.Dir(), "objects", "*", "*"))
	require.NoError(t, err)
	for _, o := range objects {
		require.NoError(t, os.Remove(o))
	}

	found, _ := check(t, inspect.CheckOptions{MaxInline: threshold, Store: store.Dir()}, dir)

	assert.Equal(t, []where{{kind: inspect.KindReference, file: "s.jsonl", line: 4}, {kind: inspect.KindReference, file: "s.jsonl", line: 5}}, wheres(found))
}

// TestStatsLongLineImage: the token estimate of an image on a long line
// reads its header from the stream, however far into the image it is.
func TestStatsLongLineImage(t *testing.T) {
	var jpg bytes.Buffer
	require.NoError(t, jpeg.Encode(&jpg, image.NewGray(image.Rect(0, 0, 200, 100)), nil))
	var img bytes.Buffer
	img.Write(jpg.Bytes()[:2]) // start of image
	for range 2 {
		img.Write([]byte{0xff, 0xfe, 0xea, 0x62}) // a comment segment of 60,000 bytes
		img.Write(make([]byte, 60000))
	}
	img.Write(jpg.Bytes()[2:])
	line := `{"type":"message","id":"r9","message":{"role":"toolResult","toolCallId":"call_1","toolName":"read","content":[{"type":"image","data":"` +
		base64.StdEncoding.EncodeToString(img.Bytes()) + `","mimeType":"image/jpeg"},{"type":"text","text":` + jsonString(text(2, 5<<20)) + `}]}}` + "\n"
	s := string(testsession.Pi("img", 1, 2000)) + line
	plainDir, zstDir := plainAndZst(t, s)

	sp := stats(t, inspect.StatsOptions{Threshold: threshold}, plainDir)
	sw := wholeStats(t, inspect.StatsOptions{Threshold: threshold}, plainDir)
	sz := stats(t, inspect.StatsOptions{Threshold: threshold}, zstDir)

	assert.Equal(t, 1, sp.Migrate.Images)
	assert.Equal(t, int64(27), sp.Migrate.ImageTokens, "200 x 100 / 750, rounded up")
	assert.Equal(t, sw.Migrate, sp.Migrate)
	// Of the compressed file, the same but for the bytes, which are on
	// disk, as migrate reports them.
	onDisk := sz.Migrate
	onDisk.BytesBefore, onDisk.BytesAfter, onDisk.Saved, onDisk.Share = sp.Migrate.BytesBefore, sp.Migrate.BytesAfter, sp.Migrate.Saved, sp.Migrate.Share
	assert.Equal(t, sp.Migrate, onDisk)
	assert.Less(t, sz.Migrate.BytesBefore, sp.Migrate.BytesBefore/10)
}

// TestCheckLongLineSmallerCut: a line whose skeleton would be too large
// with migrate's cut (thousands of strings under 16 KiB) is checked from
// one that cuts every string of the threshold's length, with the findings
// of the whole line.
func TestCheckLongLineSmallerCut(t *testing.T) {
	var chunks []string
	for i := range 2000 {
		chunks = append(chunks, jsonString(text(i, 10_000)))
	}
	line := `{"type":"message","id":"c1","message":{"role":"toolResult","toolCallId":"call_1","toolName":"read","content":[{"type":"text","text":"ok"}],"details":{"chunks":[` +
		strings.Join(chunks, ",") + `]}}}` + "\n"
	s := string(testsession.Pi("c", 1, 2000)) + line
	plainDir, zstDir := plainAndZst(t, s)
	opts := inspect.CheckOptions{MaxInline: threshold}

	plain, _ := check(t, opts, plainDir)
	whole, _ := wholeCheck(t, opts, plainDir)
	zst, _ := check(t, opts, zstDir)

	require.Len(t, plain, 2)
	assert.Equal(t, "/message/details/chunks", plain[1].Site)
	assert.Greater(t, plain[1].Size, int64(20_000_000))
	assert.Equal(t, whole, plain)
	assert.Equal(t, plain, renamed(zst, plain[0].File))
}

// TestLongLineNotJSON: a long line that Parse would refuse is not JSON,
// as when it is read whole: no payload for check, "(not JSON)" for stats,
// and no note. One of them holds a control character in a string its
// skeleton cuts; the other is nested deeper than MaxDepth and too large
// even for a skeleton.
func TestLongLineNotJSON(t *testing.T) {
	for name, line := range map[string]string{
		"control character": `{"type":"message","id":"r9","message":{"role":"toolResult","toolCallId":"call_9","toolName":"read","content":[{"type":"text","text":"` +
			strings.Repeat("x", 3<<20) + "\x01" + strings.Repeat("y", 2<<20) + `"}]}}`,
		"too deep": strings.Repeat(`{"a":[`, 3<<20),
	} {
		t.Run(name, func(t *testing.T) {
			plainDir, zstDir := plainAndZst(t, string(testsession.Pi("p", 1, 2000))+line+"\n")
			opts := inspect.CheckOptions{MaxInline: threshold}
			want := []where{{inspect.KindInline, "s.jsonl", 4, "/message/content", "read"}}
			plain, _ := check(t, opts, plainDir)
			whole, _ := wholeCheck(t, opts, plainDir)
			zst, _ := check(t, opts, zstDir)
			assert.Equal(t, want, wheres(plain))
			assert.Equal(t, want, wheres(whole))
			assert.Equal(t, want, wheres(renamed(zst, "s.jsonl")))

			sp := stats(t, inspect.StatsOptions{Threshold: threshold}, plainDir)
			sw := wholeStats(t, inspect.StatsOptions{Threshold: threshold}, plainDir)
			sz := stats(t, inspect.StatsOptions{Threshold: threshold}, zstDir)
			assert.Equal(t, groups(sw.EntryTypes), groups(sp.EntryTypes))
			assert.Equal(t, groups(sp.EntryTypes), groups(sz.EntryTypes))
			assert.Equal(t, counted{lines: 1}, groups(sp.EntryTypes)["pi "+inspect.NotJSON])
			assert.Empty(t, sp.Findings)
		})
	}
}
