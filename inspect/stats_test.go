package inspect_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/externalizer"
	"github.com/transcript-tool/transcript-tool/inspect"
	"github.com/transcript-tool/transcript-tool/internal/testsession"
	"github.com/transcript-tool/transcript-tool/migrate"
	"github.com/transcript-tool/transcript-tool/session"
	"github.com/transcript-tool/transcript-tool/store/local"
)

func stats(t *testing.T, opts inspect.StatsOptions, paths ...string) inspect.StatsReport {
	t.Helper()
	if opts.OpenStore == nil {
		opts.OpenStore = local.Open
	}
	rep, err := inspect.Stats(context.Background(), collect(t, paths...), opts)
	require.NoError(t, err)
	return rep
}

// counted is the part of a Group a test states.
type counted struct {
	lines, payloads int64
}

func groups(gs []inspect.Group) map[string]counted {
	m := map[string]counted{}
	for _, g := range gs {
		m[g.Format+" "+g.Name] = counted{g.Lines, g.Payloads}
	}
	return m
}

func TestStatsGroups(t *testing.T) {
	dir := tree(t, sessions())
	rep := stats(t, inspect.StatsOptions{Threshold: threshold, Top: 3}, dir)

	var size int64
	for _, s := range sessions() {
		size += int64(len(s))
	}
	assert.Equal(t, threshold, rep.Threshold)
	assert.Equal(t, 4, rep.Files)
	assert.Equal(t, int64(17), rep.Total.Lines)
	assert.Equal(t, size, rep.Total.Bytes)
	assert.Equal(t, int64(8), rep.Total.Payloads)

	assert.Equal(t, map[string]counted{
		"chat ": {4, 2}, "claude-code ": {3, 2}, "codex ": {4, 2}, "pi ": {6, 2},
	}, groups(rep.Formats))
	for _, g := range rep.Formats {
		assert.Equal(t, 1, g.Files)
	}
	for i := 1; i < len(rep.Formats); i++ {
		assert.GreaterOrEqual(t, rep.Formats[i-1].Bytes, rep.Formats[i].Bytes, "largest first")
	}

	assert.Equal(t, map[string]counted{
		"chat system": {1, 0}, "chat assistant": {1, 0}, "chat tool": {1, 1}, "chat messages": {1, 1},
		"claude-code user": {2, 2}, "claude-code assistant": {1, 0},
		"codex session_meta": {1, 0}, "codex response_item/function_call": {1, 0},
		"codex response_item/function_call_output": {1, 1}, "codex event_msg/exec_command_end": {1, 1},
		"pi session": {1, 0}, "pi message/user": {1, 0}, "pi message/assistant": {2, 0}, "pi message/toolResult": {2, 2},
	}, groups(rep.EntryTypes))

	assert.Equal(t, map[string]counted{
		"chat get_weather": {2, 2}, "chat (none)": {2, 0},
		"claude-code Read": {1, 2}, "claude-code (none)": {2, 0},
		"codex shell": {1, 1}, "codex exec_command": {1, 1}, "codex (none)": {2, 0},
		"pi read": {2, 2}, "pi (none)": {4, 0},
	}, groups(rep.Tools))

	// Rows follow the order of the formats table.
	rank := map[string]int{}
	for i, g := range rep.Formats {
		rank[g.Format] = i
	}
	for i := 1; i < len(rep.EntryTypes); i++ {
		assert.LessOrEqual(t, rank[rep.EntryTypes[i-1].Format], rank[rep.EntryTypes[i].Format])
	}

	require.Len(t, rep.Largest, 3)
	assert.Equal(t, inspect.Payload{File: filepath.Join(dir, "pi.jsonl"), Line: 4, Site: "/message/content", Tool: "read",
		Size: rep.Largest[0].Size}, rep.Largest[0])
	assert.Equal(t, rep.Largest[0].Size, rep.Largest[1].Size, "pi's two results are as large")
	assert.Equal(t, 6, rep.Largest[1].Line, "of equal sizes the first found comes first")
	assert.Greater(t, rep.Largest[1].Size, rep.Largest[2].Size)
	assert.Empty(t, rep.Findings)
}

// Stats predicts exactly what migrate saves, because it runs the same
// rewriting; deduplication across files is counted once.
func TestStatsPredictsMigrate(t *testing.T) {
	files := sessions()
	files["chat-copy.jsonl"] = chatSession() // the same payloads again, in the same store
	files["other/pi.jsonl"] = piSession()    // the same payloads in another store
	dir := tree(t, files)
	before := snapshot(t, dir)

	rep := stats(t, inspect.StatsOptions{Threshold: threshold}, dir)
	assert.Equal(t, before, snapshot(t, dir), "stats writes nothing")
	assert.NoDirExists(t, filepath.Join(dir, session.StoreDirName))

	sum := migrateTree(t, dir)
	m := rep.Migrate
	assert.Equal(t, sum.BytesBefore, m.BytesBefore)
	assert.Equal(t, sum.BytesBefore-sum.BytesAfter, m.Saved)
	assert.Equal(t, sum.BytesAfter, m.BytesAfter)
	assert.InDelta(t, float64(m.Saved)/float64(m.BytesBefore), m.Share, 1e-12)
	assert.Equal(t, sum.Migrated, m.Files)
	assert.Equal(t, sum.Artifacts, m.Artifacts)
	assert.Equal(t, 2+1+2+2+2, m.Unique, "chat's, Claude's one twice, codex's, pi's, and pi's again in the other store")
	assert.Equal(t, sum.Written, m.New)
	assert.Equal(t, m.UniqueBytes, m.NewBytes)
	assert.Equal(t, storeBytes(t, dir), m.NewBytes)
	assert.Zero(t, m.Images)
	assert.Equal(t, m.Saved, m.TextBytes)
	assert.Equal(t, m.Saved/4, m.Tokens)

	again := stats(t, inspect.StatsOptions{Threshold: threshold}, dir)
	assert.Zero(t, again.Migrate.Saved, "migrated entries save nothing more")
	assert.Zero(t, again.Migrate.Files)
	assert.Zero(t, again.Migrate.New)
	assert.Zero(t, again.Total.Payloads, "placeholders are not payloads")
}

// TestStatsPredictsMigrateAtThresholdOne: at --threshold 1 most sites
// stay, their placeholders and marker edits being longer than they are;
// stats, migrate --dry-run and migrate agree on what moves, and the tree
// does not grow.
func TestStatsPredictsMigrateAtThresholdOne(t *testing.T) {
	files := sessions()
	files["small.jsonl"] = string(testsession.Pi("small", 3, 300))
	dir := tree(t, files)
	rep := stats(t, inspect.StatsOptions{Threshold: 1}, dir)
	opts := migrate.Options{OpenStore: local.Open, Threshold: 1, Jobs: 1, DryRun: true}
	dry := migrate.Run(context.Background(), collect(t, dir), opts)
	opts.DryRun = false
	sum := migrate.Run(context.Background(), collect(t, dir), opts)
	require.Zero(t, sum.Failed, "%+v", sum.Results)

	assert.Equal(t, 4, sum.Migrated, "small.jsonl stays as it is")
	assert.Less(t, sum.BytesAfter, sum.BytesBefore)
	for _, r := range sum.Results {
		assert.LessOrEqual(t, r.BytesAfter, r.BytesBefore, r.Path)
	}
	m := rep.Migrate
	assert.Equal(t, sum.BytesBefore-sum.BytesAfter, m.Saved)
	assert.Equal(t, sum.Migrated, m.Files)
	assert.Equal(t, sum.Artifacts, m.Artifacts)
	assert.Equal(t, sum.BytesAfter, dry.BytesAfter)
	assert.Equal(t, sum.Migrated, dry.Migrated)
	assert.Equal(t, sum.Artifacts, dry.Artifacts)
}

// storeBytes is the size of every artifact under dir.
func storeBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	objects, err := filepath.Glob(filepath.Join(dir, "*", session.StoreDirName, "objects", "*", "*"))
	require.NoError(t, err)
	top, err := filepath.Glob(filepath.Join(dir, session.StoreDirName, "objects", "*", "*"))
	require.NoError(t, err)
	for _, o := range append(objects, top...) {
		fi, err := os.Stat(o)
		require.NoError(t, err)
		n += fi.Size()
	}
	return n
}

// A file migrate would fail on saves nothing and is named in a note; an
// unknown file is counted by its lines; an unreadable one is reported and
// left out of every count.
func TestStatsFailuresAndUnknowns(t *testing.T) {
	forged := `{"type":"message","id":"x1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"hi"}]},"transcriptTool":{"v":1,"sha256":"0000000000000000000000000000000000000000000000000000000000000000","edits":[{"at":"/message/content","parts":[{"id":"1111111111111111111111111111111111111111111111111111111111111111","form":"js"}]}]}}`
	dir := tree(t, map[string]string{
		"bad.jsonl":   piSession() + forged + "\n",
		"good.jsonl":  chatSession(),
		"other.jsonl": "{\"hello\":\"world\"}\nnot json\n\n",
		"z.jsonl.zst": "not zstd",
	})
	rep := stats(t, inspect.StatsOptions{Threshold: threshold}, dir)
	require.Len(t, rep.Findings, 3)
	bad := rep.Findings[0]
	assert.Equal(t, inspect.KindNote, bad.Kind)
	assert.Equal(t, 7, bad.Line)
	assert.Contains(t, bad.Message, "migrate would fail on this file: already migrated, but: artifact for /message/content")
	assert.Equal(t, inspect.Finding{Kind: inspect.KindNote, File: filepath.Join(dir, "other.jsonl"),
		Message: "unknown transcript format: counted by lines and bytes only; migrate would leave it"}, rep.Findings[1])
	assert.Equal(t, inspect.KindUnreadable, rep.Findings[2].Kind)
	assert.Contains(t, rep.Findings[2].Message, "z.jsonl.zst")

	assert.Equal(t, 3, rep.Files)
	assert.Equal(t, 1, rep.Migrate.Failed)
	assert.Equal(t, 1, rep.Migrate.Files)
	assert.Equal(t, map[string]counted{"pi ": {7, 2}, "chat ": {4, 2}, "(unknown) ": {3, 0}}, groups(rep.Formats))
	types := groups(rep.EntryTypes)
	assert.Equal(t, counted{1, 0}, types["(unknown) (no type)"])
	assert.Equal(t, counted{1, 0}, types["(unknown) (not JSON)"])
	assert.Equal(t, counted{1, 0}, types["(unknown) (blank)"])
	assert.Equal(t, int64(len(piSession()+forged+"\n")+len(chatSession())+len("{\"hello\":\"world\"}\nnot json\n\n")), rep.Migrate.BytesBefore)

	sum := migrate.Run(context.Background(), collect(t, filepath.Join(dir, "bad.jsonl"), filepath.Join(dir, "good.jsonl")),
		migrate.Options{OpenStore: local.Open, Threshold: threshold, Jobs: 1})
	assert.Equal(t, 1, sum.Failed)
	assert.Equal(t, sum.BytesBefore-sum.BytesAfter, rep.Migrate.Saved)
}

// Lines of a known format whose entry type it does not know are counted
// as not understood, by entry type, and migrate passes them through: a
// tool result in one stays inline.
func TestStatsNotUnderstood(t *testing.T) {
	later := `{"type":"context_snapshot","id":"x1","parentId":null,"timestamp":"t","message":{"role":"toolResult","toolName":"bash","content":"` +
		strings.Repeat("output ", 100) + `"}}` + "\n"
	dir := tree(t, map[string]string{
		"pi.jsonl":    piSession() + later + later + `{"type":"usage","id":"u1","kind":"cache_warm"}` + "\n",
		"codex.jsonl": `{"timestamp":"t","type":"session_meta","payload":{"id":"s"}}` + "\n" + `{"timestamp":"t","type":"id_allocation","payload":{}}` + "\n" + `{"timestamp":"t","type":"telemetry","payload":{"type":"ping"}}` + "\n",
	})
	rep := stats(t, inspect.StatsOptions{Threshold: threshold}, dir)
	assert.Equal(t, map[string]counted{"pi context_snapshot/toolResult": {2, 0}, "codex telemetry/ping": {1, 0}}, groups(rep.NotUnderstood))
	for _, g := range rep.NotUnderstood {
		if g.Format == "pi" {
			assert.Equal(t, int64(2*len(later)), g.Bytes)
		}
	}
	sum := migrate.Run(context.Background(), collect(t, filepath.Join(dir, "pi.jsonl")), migrate.Options{OpenStore: local.Open, Threshold: threshold, Jobs: 1})
	require.Zero(t, sum.Failed)
	after, err := os.ReadFile(filepath.Join(dir, "pi.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(string(after), later), "the lines of the later entry type are kept as they are")
}

// Images count by area in the token estimate, not by their base64 bytes.
func TestStatsImageTokens(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 60, 50))
	for x := 0; x < 60; x++ {
		for y := 0; y < 50; y++ {
			img.Set(x, y, color.RGBA{uint8(x * 37), uint8(y * 91), uint8(x * y), 255})
		}
	}
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, img))
	data := base64.StdEncoding.EncodeToString(buf.Bytes())
	session := strings.Join([]string{
		`{"type":"assistant","sessionId":"s","uuid":"a1","parentUuid":null,"message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Read","input":{}}]}}`,
		`{"type":"user","sessionId":"s","uuid":"u1","parentUuid":"a1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + data + `"}}]}]}}`,
	}, "\n") + "\n"
	dir := tree(t, map[string]string{"img.jsonl": session})
	rep := stats(t, inspect.StatsOptions{Threshold: threshold}, dir)
	m := rep.Migrate
	assert.Equal(t, 1, m.Images)
	assert.Equal(t, int64(math.Ceil(60*50/750.0)), m.ImageTokens)
	assert.Equal(t, m.Saved-int64(len(data)), m.TextBytes)
	assert.Equal(t, m.TextBytes/4+m.ImageTokens, m.Tokens)
	assert.Less(t, m.Tokens, m.Saved/4, "far fewer than its base64 bytes / 4")
	assert.Equal(t, map[string]counted{"claude-code Read": {1, 1}, "claude-code (none)": {1, 0}}, groups(rep.Tools))
}

func TestStatsTopZero(t *testing.T) {
	rep := stats(t, inspect.StatsOptions{Threshold: threshold}, tree(t, sessions()))
	assert.Empty(t, rep.Largest)
	assert.NotNil(t, rep.Largest, "an empty list, not null, in JSON")
	assert.Equal(t, int64(8), rep.Total.Payloads)
}

func TestStatsCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := inspect.Stats(ctx, collect(t, tree(t, sessions())), inspect.StatsOptions{OpenStore: local.Open})
	assert.ErrorIs(t, err, context.Canceled)
}

// TestStatsPredictsCorpus: on real transcripts, what stats says migrate
// would save is what migrate then saves, within 2%.
func TestStatsPredictsCorpus(t *testing.T) {
	for _, format := range []string{"claude-code", "pi"} {
		t.Run(format, func(t *testing.T) {
			src := filepath.Join("..", "..", "shared", "corpus", format)
			files, _ := filepath.Glob(filepath.Join(src, "*.jsonl"))
			if len(files) == 0 {
				t.Skip("no " + src)
			}
			dir := t.TempDir()
			for _, f := range files {
				copyFile(t, f, filepath.Join(dir, filepath.Base(f)))
			}
			inputs := collect(t, dir)
			rep, err := inspect.Stats(context.Background(), inputs, inspect.StatsOptions{OpenStore: local.Open, Threshold: externalizer.DefaultThreshold})
			require.NoError(t, err)
			sum := migrate.Run(context.Background(), inputs, migrate.Options{OpenStore: local.Open})
			require.Zero(t, sum.Failed)
			saved := sum.BytesBefore - sum.BytesAfter
			require.Positive(t, saved)
			assert.InEpsilon(t, saved, rep.Migrate.Saved, 0.02)
			t.Logf("%s: stats predicted %d bytes saved, migrate saved %d (%.4f%% apart); %d of %d unique artifacts predicted, %d written",
				format, rep.Migrate.Saved, saved, 100*math.Abs(float64(rep.Migrate.Saved-saved))/float64(saved),
				rep.Migrate.New, rep.Migrate.Unique, sum.Written)
			assert.Equal(t, sum.Written, rep.Migrate.New)
			assert.Equal(t, rep.Migrate.Files, sum.Migrated)
		})
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	require.NoError(t, err)
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	_, err = io.Copy(out, in)
	require.NoError(t, err)
	require.NoError(t, out.Close())
}

// TestStatsPredictsCompressed: of a compressed transcript (a Codex rollout
// Codex compressed itself), stats predicts the saving on disk, as migrate
// reports it, not of the decompressed lines.
func TestStatsPredictsCompressed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rollout.jsonl.zst")
	// Tool outputs that compress no better than hex: moving them saves on
	// disk too.
	rng := rand.New(rand.NewPCG(1, 2))
	lines := []string{`{"timestamp":"2025-01-01T00:00:00.000Z","type":"session_meta","payload":{"id":"cx-1","cwd":"/w"}}`}
	for i := range 4 {
		out := make([]byte, 6000)
		for j := range out {
			out[j] = "0123456789abcdef"[rng.IntN(16)]
		}
		lines = append(lines, fmt.Sprintf(`{"timestamp":"2025-01-01T00:00:0%d.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_%d","output":%q}}`, i+1, i, out))
	}
	plain := strings.Join(lines, "\n") + "\n"
	var z bytes.Buffer
	e, err := zstd.NewWriter(&z, zstd.WithEncoderLevel(zstd.SpeedDefault))
	require.NoError(t, err)
	_, err = e.Write([]byte(plain))
	require.NoError(t, err)
	require.NoError(t, e.Close())
	require.NoError(t, os.WriteFile(path, z.Bytes(), 0o644))

	rep := stats(t, inspect.StatsOptions{Threshold: threshold}, dir)
	sum := migrateTree(t, dir)
	require.Equal(t, 1, sum.Migrated)
	assert.Equal(t, int64(z.Len()), rep.Migrate.BytesBefore, "bytes on disk")
	assert.Equal(t, sum.BytesBefore-sum.BytesAfter, rep.Migrate.Saved)
	assert.Positive(t, rep.Migrate.Saved)
	assert.Less(t, rep.Migrate.Saved, int64(len(plain))-int64(z.Len()), "not the decompressed bytes")
}

// Claude Code's own tool-results folders are counted per project, a
// session's once however many of its transcripts (its subagents') are
// read; they are never inputs.
func TestStatsToolResults(t *testing.T) {
	line := `{"type":"user","sessionId":"s","uuid":"u1","parentUuid":null,"message":{"role":"user","content":"hi"}}` + "\n"
	dir := tree(t, map[string]string{
		"p1/s1.jsonl":                        line,
		"p1/s1/tool-results/bq7e2e0a1.txt":   strings.Repeat("x", 100),
		"p1/s1/tool-results/toolu_01.json":   strings.Repeat("y", 50),
		"p1/s1/tool-results/toolu_03.jsonl":  line,
		"p1/s1/subagents/agent-a1b2c3.jsonl": line,
		"p1/s2.jsonl":                        line,
		"p1/s2/tool-results/toolu_02.txt":    strings.Repeat("z", 30),
		"p2/s3.jsonl":                        line,
	})
	inputs := collect(t, dir)
	require.Len(t, inputs, 4, "the tool-results files are not transcripts")
	rep := stats(t, inspect.StatsOptions{Threshold: threshold}, dir)
	assert.Equal(t, []inspect.ToolResults{{Agent: "Claude Code", Folder: "tool-results", Project: filepath.Join(dir, "p1"), Files: 4, Bytes: 180 + int64(len(line))}}, rep.ToolResults)
}
