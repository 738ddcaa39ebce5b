package inspect_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/inspect"
	"github.com/transcript-tool/transcript-tool/internal/testsession"
	"github.com/transcript-tool/transcript-tool/session"
	"github.com/transcript-tool/transcript-tool/store/local"
)

// check runs Check and returns its findings.
func check(t *testing.T, opts inspect.CheckOptions, paths ...string) ([]inspect.Finding, inspect.CheckTotals) {
	t.Helper()
	var found []inspect.Finding
	if opts.OpenStore == nil {
		opts.OpenStore = local.Open
	}
	totals, err := inspect.Check(context.Background(), collect(t, paths...), opts, func(f inspect.Finding) {
		found = append(found, f)
	})
	require.NoError(t, err)
	return found, totals
}

// where is the part of a finding a test states: kind, file name, line,
// site and tool.
type where struct {
	kind inspect.Kind
	file string
	line int
	site string
	tool string
}

func wheres(found []inspect.Finding) []where {
	var ws []where
	for _, f := range found {
		ws = append(ws, where{f.Kind, filepath.Base(f.File), f.Line, f.Site, f.Tool})
	}
	return ws
}

func TestCheckFindsInlinePayloadsInEveryFormat(t *testing.T) {
	dir := tree(t, sessions())
	found, totals := check(t, inspect.CheckOptions{MaxInline: threshold}, dir)
	assert.Equal(t, []where{
		{inspect.KindInline, "chat.jsonl", 3, "/content", "get_weather"},
		{inspect.KindInline, "chat.jsonl", 4, "/messages/0/content", "get_weather"},
		{inspect.KindInline, "claude.jsonl", 3, "/message/content/0/content", "Read"},
		{inspect.KindInline, "claude.jsonl", 3, "/toolUseResult/file/content", "Read"},
		{inspect.KindInline, "codex.jsonl", 3, "/payload/output", "shell"},
		{inspect.KindInline, "codex.jsonl", 4, "/payload/stdout", "exec_command"},
		{inspect.KindInline, "pi.jsonl", 4, "/message/content", "read"},
		{inspect.KindInline, "pi.jsonl", 6, "/message/content", "read"},
	}, wheres(found))
	codexOut := found[4]
	assert.Equal(t, int64(len(jsonString(text(12, 2000)))), codexOut.Size, "the payload's JSON bytes")
	assert.Equal(t, int64(threshold), codexOut.Limit)
	assert.Equal(t, fmt.Sprintf("inline payload of %d bytes at /payload/output (tool shell); limit 200", codexOut.Size), codexOut.Message)
	assert.Equal(t, int64(len(strings.SplitAfter(codexSession(), "\n")[0])+len(strings.SplitAfter(codexSession(), "\n")[1])), codexOut.Offset)

	assert.Equal(t, 4, totals.Files)
	assert.Equal(t, 8, totals.Violations)
	assert.Equal(t, 8, totals.InlinePayloads)
	assert.Equal(t, 4, totals.FilesWithViolations)
	assert.Equal(t, int64(6+3+4+4), totals.Lines)
	var size int64
	for _, s := range sessions() {
		size += int64(len(s))
	}
	assert.Equal(t, size, totals.Bytes)
}

// A payload of exactly --max-inline bytes is reported: it is what migrate
// --threshold with the same number moves.
func TestCheckMaxInlineIsAtLeast(t *testing.T) {
	dir := tree(t, map[string]string{"chat.jsonl": chatSession()})
	size := len(jsonString(text(14, 2000)))
	found, _ := check(t, inspect.CheckOptions{MaxInline: size}, dir)
	assert.Equal(t, []where{{inspect.KindInline, "chat.jsonl", 3, "/content", "get_weather"}}, wheres(found))
	found, _ = check(t, inspect.CheckOptions{MaxInline: size + 1}, dir)
	assert.Empty(t, found)
}

func TestCheckMigratedTreePasses(t *testing.T) {
	dir := tree(t, sessions())
	migrateTree(t, dir)
	found, totals := check(t, inspect.CheckOptions{MaxInline: threshold, Store: filepath.Join(dir, session.StoreDirName)}, dir)
	assert.Empty(t, found)
	assert.Equal(t, 4, totals.Files)
	assert.Zero(t, totals.Violations)
}

// TestCheckKeptSitesPass: a payload over --max-inline that migrate keeps
// inline, because its placeholder and marker edit would make the line
// longer, is no violation, before migrating or after; the large payloads
// beside it are, until they are moved.
func TestCheckKeptSitesPass(t *testing.T) {
	pi := testsession.Header("s") + "\n" +
		testsession.ToolCall(1) + "\n" + testsession.ToolResult(1, 300) + "\n" +
		testsession.ToolCall(2) + "\n" + testsession.ToolResult(2, 3000) + "\n"
	chat := `{"role":"tool","tool_call_id":"c1","content":` + jsonString(text(3, 300)) + "}\n" +
		`{"role":"tool","tool_call_id":"c2","content":` + jsonString(text(4, 3000)) + "}\n"
	dir := tree(t, map[string]string{"pi.jsonl": pi, "chat.jsonl": chat})
	found, _ := check(t, inspect.CheckOptions{MaxInline: threshold}, dir)
	assert.Equal(t, []where{
		{inspect.KindInline, "chat.jsonl", 2, "/content", inspect.UnknownTool},
		{inspect.KindInline, "pi.jsonl", 5, "/message/content", "read"},
	}, wheres(found))

	migrateTree(t, dir)
	for name, small := range map[string]string{"pi.jsonl": text(1, 300), "chat.jsonl": text(3, 300)} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		assert.Contains(t, string(data), jsonString(small)[1:len(jsonString(small))-1], "%s: the small payload stays", name)
	}
	found, _ = check(t, inspect.CheckOptions{MaxInline: threshold, Store: filepath.Join(dir, session.StoreDirName)}, dir)
	assert.Empty(t, found)
}

func TestCheckBrokenReferences(t *testing.T) {
	dir := tree(t, map[string]string{"pi.jsonl": piSession(), "codex.jsonl": codexSession()})
	migrateTree(t, dir)
	store := filepath.Join(dir, session.StoreDirName)
	objects, err := filepath.Glob(filepath.Join(store, "objects", "*", "*"))
	require.NoError(t, err)
	require.Len(t, objects, 4)
	// Which object belongs to which line does not matter: every one is
	// referenced once, so two lines fail, each naming its artifact.
	require.NoError(t, os.Remove(objects[0]))
	require.NoError(t, os.WriteFile(objects[1], []byte("tampered"), 0o600))

	found, totals := check(t, inspect.CheckOptions{MaxInline: threshold, Store: store}, dir)
	require.Len(t, found, 2)
	assert.Equal(t, 2, totals.BrokenReferences)
	var messages string
	for _, f := range found {
		assert.Equal(t, inspect.KindReference, f.Kind)
		assert.Positive(t, f.Line)
		assert.True(t, strings.HasPrefix(f.Message, "reference does not restore: artifact for /"), f.Message)
		messages += f.Message + "\n"
	}
	assert.Contains(t, messages, filepath.Base(objects[0])+": artifact not found")
	assert.Contains(t, messages, "its bytes do not hash to its name")

	assert.Equal(t, []string{store}, totals.Stores)

	// Without a store named, each transcript's own store is the one.
	again, totals := check(t, inspect.CheckOptions{MaxInline: threshold}, dir)
	assert.Equal(t, found, again)
	assert.Equal(t, []string{store}, totals.Stores)

	found, totals = check(t, inspect.CheckOptions{MaxInline: threshold, NoReferences: true}, dir)
	assert.Empty(t, found, "references not checked")
	assert.Empty(t, totals.Stores)

	// A transcript whose store is gone: each of its references is broken.
	require.NoError(t, os.RemoveAll(store))
	found, _ = check(t, inspect.CheckOptions{MaxInline: threshold}, dir)
	require.Len(t, found, 4)
	for _, f := range found {
		assert.Equal(t, "reference does not restore: no artifact store at "+store, f.Message)
	}
}

func TestCheckLineAndFileLimits(t *testing.T) {
	session := piSession()
	var longest, at int
	for i, l := range strings.Split(session, "\n") {
		if len(l) > longest {
			longest, at = len(l), i+1
		}
	}
	session += strings.Repeat("x", longest-1) + "\n" // just under
	dir := tree(t, map[string]string{"pi.jsonl": session})
	path := filepath.Join(dir, "pi.jsonl")

	found, _ := check(t, inspect.CheckOptions{MaxLine: int64(longest), MaxFile: int64(len(session))}, path)
	assert.Empty(t, found, "limits are the largest sizes allowed")

	found, totals := check(t, inspect.CheckOptions{MaxLine: int64(longest - 1), MaxFile: int64(len(session) - 1)}, path)
	require.Len(t, found, 3, "the file, and the two tool results of equal length")
	assert.Equal(t, inspect.Finding{Kind: inspect.KindFile, File: path, Size: int64(len(session)), Limit: int64(len(session) - 1),
		Message: fmt.Sprintf("file of %d bytes; limit %d", len(session), len(session)-1)}, found[0])
	assert.Equal(t, inspect.KindLine, found[1].Kind)
	assert.Equal(t, at, found[1].Line)
	assert.Equal(t, int64(longest), found[1].Size)
	assert.Equal(t, fmt.Sprintf("line of %d bytes; limit %d", longest, longest-1), found[1].Message)
	assert.Equal(t, 1, totals.LargeFiles)
	assert.Equal(t, 2, totals.LongLines)
	assert.Equal(t, 1, totals.FilesWithViolations)

	found, _ = check(t, inspect.CheckOptions{}, path)
	assert.Empty(t, found, "0 turns every limit off")
}

func TestCheckUnknownFormat(t *testing.T) {
	big := `{"hello":` + jsonString(text(1, 500)) + `}`
	dir := tree(t, map[string]string{"other.jsonl": big + "\n"})
	path := filepath.Join(dir, "other.jsonl")
	found, totals := check(t, inspect.CheckOptions{MaxInline: threshold, MaxLine: 100, Store: filepath.Join(dir, "artifacts")}, path)
	assert.Equal(t, []where{{kind: inspect.KindLine, file: "other.jsonl", line: 1}, {kind: inspect.KindNote, file: "other.jsonl"}}, wheres(found))
	assert.Equal(t, "unknown transcript format: only the sizes of lines and of the file are checked", found[1].Message)
	assert.Equal(t, 1, totals.Notes)
	assert.Equal(t, 1, totals.Violations)
}

// A format named in the options is used for files it would not be
// detected in.
func TestCheckNamedFormat(t *testing.T) {
	session := strings.Repeat(`{"note":"not a message"}`+"\n", 20) + `{"role":"tool","content":` + jsonString(text(1, 2000)) + "}\n"
	dir := tree(t, map[string]string{"late.jsonl": session})
	found, _ := check(t, inspect.CheckOptions{MaxInline: threshold}, dir)
	assert.Equal(t, []inspect.Kind{inspect.KindNote}, kinds(found))
	found, _ = check(t, inspect.CheckOptions{MaxInline: threshold, Format: "chat"}, dir)
	assert.Equal(t, []where{{inspect.KindInline, "late.jsonl", 21, "/content", ""}}, wheres(found))
}

func kinds(found []inspect.Finding) []inspect.Kind {
	var ks []inspect.Kind
	for _, f := range found {
		ks = append(ks, f.Kind)
	}
	return ks
}

// A file that cannot be read is reported and the others are checked.
func TestCheckUnreadable(t *testing.T) {
	dir := tree(t, map[string]string{
		"a.jsonl":           chatSession(),
		"b.jsonl.zst":       "not zstd at all, but long enough to be read as a frame header",
		"c/codex.jsonl":     codexSession(),
		"c/.hidden.jsonl":   chatSession(),
		"artifacts/x.jsonl": chatSession(),
	})
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "artifacts", "objects"), 0o700))
	found, totals := check(t, inspect.CheckOptions{MaxInline: threshold}, dir)
	assert.Equal(t, []inspect.Kind{inspect.KindInline, inspect.KindInline, inspect.KindUnreadable, inspect.KindInline, inspect.KindInline}, kinds(found))
	bad := found[2]
	assert.Equal(t, filepath.Join(dir, "b.jsonl.zst"), bad.File)
	assert.Contains(t, bad.Message, "b.jsonl.zst")
	assert.Equal(t, 3, totals.Files)
	assert.Equal(t, 1, totals.Unreadable)
	assert.Equal(t, 4, totals.Violations)
}

// Check changes nothing: not the transcripts, not the store, and it
// creates no store that is not there.
func TestCheckReadOnly(t *testing.T) {
	dir := tree(t, sessions())
	migrateTree(t, dir)
	before := snapshot(t, dir)
	missing := filepath.Join(t.TempDir(), "no-store")
	check(t, inspect.CheckOptions{MaxInline: 1, MaxLine: 1, MaxFile: 1, Store: missing}, dir)
	check(t, inspect.CheckOptions{MaxInline: 1, Store: filepath.Join(dir, session.StoreDirName)}, dir)
	assert.Equal(t, before, snapshot(t, dir))
	assert.NoDirExists(t, missing)
}

func TestCheckCanceled(t *testing.T) {
	dir := tree(t, sessions())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := inspect.Check(ctx, collect(t, dir), inspect.CheckOptions{OpenStore: local.Open, MaxInline: threshold}, func(inspect.Finding) {
		t.Error("a finding after cancellation")
	})
	assert.ErrorIs(t, err, context.Canceled)
}

func TestFindingString(t *testing.T) {
	assert.Equal(t, "a/b.jsonl:7: line of 9 bytes; limit 8",
		inspect.Finding{File: "a/b.jsonl", Line: 7, Message: "line of 9 bytes; limit 8"}.String())
	assert.Equal(t, "a/b.jsonl: file of 9 bytes; limit 8",
		inspect.Finding{File: "a/b.jsonl", Message: "file of 9 bytes; limit 8"}.String())
}

func TestKindViolation(t *testing.T) {
	for k, want := range map[inspect.Kind]bool{
		inspect.KindInline: true, inspect.KindLine: true, inspect.KindFile: true, inspect.KindReference: true,
		inspect.KindNote: false, inspect.KindUnreadable: false,
	} {
		assert.Equal(t, want, k.Violation(), k)
	}
}

// A zstd-compressed rollout is checked on its JSONL bytes; --max-file
// measures it on disk.
func TestCheckCompressed(t *testing.T) {
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf)
	require.NoError(t, err)
	_, err = w.Write([]byte(codexSession()))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	dir := tree(t, map[string]string{"rollout.jsonl.zst": buf.String()})
	found, totals := check(t, inspect.CheckOptions{MaxInline: threshold, MaxFile: 1}, dir)
	assert.Equal(t, []where{
		{kind: inspect.KindFile, file: "rollout.jsonl.zst"},
		{inspect.KindInline, "rollout.jsonl.zst", 3, "/payload/output", "shell"},
		{inspect.KindInline, "rollout.jsonl.zst", 4, "/payload/stdout", "exec_command"},
	}, wheres(found))
	assert.Equal(t, int64(buf.Len()), found[0].Size)
	assert.Equal(t, int64(len(codexSession())), totals.Bytes)
}

// TestCheckJobsKeepOrder: checked several at a time, files report the same
// findings in the same order as one at a time, also files with more
// findings than are held before their turn, and an unreadable file among
// them.
func TestCheckJobsKeepOrder(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	defer inspect.SetMaxHeld(50)()
	for i, n := range []int{120, 3, 0, 70, 1, 20} {
		p := filepath.Join(dir, fmt.Sprintf("s%d.jsonl", i))
		require.NoError(t, os.WriteFile(p, testsession.Pi(fmt.Sprintf("s%d", i), n, 1500), 0o600))
		paths = append(paths, p)
	}
	unreadable := filepath.Join(dir, "s9.jsonl")
	require.NoError(t, os.Mkdir(unreadable, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(unreadable, "x"), nil, 0o600))
	inputs := append(collect(t, paths...), session.Input{Path: unreadable, Explicit: true})

	run := func(jobs int) ([]inspect.Finding, inspect.CheckTotals) {
		var found []inspect.Finding
		totals, err := inspect.Check(context.Background(), inputs, inspect.CheckOptions{OpenStore: local.Open, MaxInline: 10, MaxLine: 100, Jobs: jobs}, func(f inspect.Finding) {
			found = append(found, f)
		})
		require.NoError(t, err)
		return found, totals
	}
	one, oneTotals := run(1)
	require.Greater(t, len(one), 2*190, "too few findings to test holding")
	assert.Equal(t, inspect.KindUnreadable, one[len(one)-1].Kind)
	for _, jobs := range []int{2, 3, 8} {
		many, totals := run(jobs)
		assert.Equal(t, oneTotals, totals, "jobs %d", jobs)
		require.Equal(t, len(one), len(many), "jobs %d", jobs)
		for i := range one {
			if one[i] != many[i] {
				t.Fatalf("jobs %d: finding %d is %+v, one at a time %+v", jobs, i, many[i], one[i])
			}
		}
	}

	// A cancelled check returns the context's error, and no worker is
	// left blocked.
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	_, err := inspect.Check(ctx, inputs, inspect.CheckOptions{OpenStore: local.Open, MaxInline: 10, Jobs: 2}, func(inspect.Finding) {
		if n++; n == 100 {
			cancel()
		}
	})
	assert.ErrorIs(t, err, context.Canceled)
}
