package migrate_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/internal/testsession"
	"github.com/transcript-tool/transcript-tool/migrate"
	"github.com/transcript-tool/transcript-tool/session"
	"github.com/transcript-tool/transcript-tool/store/local"
)

// codexRollout is a small Codex rollout with one large command output.
func codexRollout() []byte {
	out := strings.Repeat("ok  \tgithub.com/x/y\t0.012s\n", 400)
	lines := []string{
		`{"timestamp":"2025-09-01T10:00:00.000Z","type":"session_meta","payload":{"id":"0199-rollout","timestamp":"2025-09-01T10:00:00.000Z","cwd":"/w","originator":"codex_cli_rs","cli_version":"0.30.0","instructions":null}}`,
		`{"timestamp":"2025-09-01T10:00:01.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"go\",\"test\",\"./...\"]}","call_id":"call_1"}}`,
		`{"timestamp":"2025-09-01T10:00:02.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":` + jsonString(out) + `}}`,
	}
	return []byte(strings.Join(lines, "\n") + "\n")
}

func jsonString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`).Replace(s) + `"`
}

func zstdCompress(t *testing.T, data []byte) []byte {
	t.Helper()
	return zstdCompressAt(t, data, zstd.SpeedDefault)
}

func zstdCompressAt(t *testing.T, data []byte, level zstd.EncoderLevel) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf, zstd.WithEncoderLevel(level))
	require.NoError(t, err)
	_, err = w.Write(data)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func zstdDecompress(t *testing.T, data []byte) []byte {
	t.Helper()
	r, err := zstd.NewReader(bytes.NewReader(data))
	require.NoError(t, err)
	defer r.Close()
	out, err := io.ReadAll(r)
	require.NoError(t, err)
	return out
}

// TestMigrateZstd: a compressed Codex rollout is found while walking,
// migrated and written back compressed, and restores to its JSONL bytes.
func TestMigrateZstd(t *testing.T) {
	dir := t.TempDir()
	plain := codexRollout()
	path := filepath.Join(dir, "rollout-2025-09-01T10-00-00-0199.jsonl.zst")
	require.NoError(t, os.WriteFile(path, zstdCompress(t, plain), 0o600))

	inputs, err := session.Collect([]string{dir})
	require.NoError(t, err)
	require.Len(t, inputs, 1)
	sum := migrate.Run(context.Background(), inputs, migrate.Options{OpenStore: local.Open, Jobs: 1})
	r := sum.Results[0]
	require.NoError(t, r.Err)
	assert.Equal(t, migrate.StatusMigrated, r.Status)
	assert.Equal(t, "codex", r.Format)

	stored, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, []byte{0x28, 0xb5, 0x2f, 0xfd}, stored[:4], "written back zstd-compressed")
	assert.Equal(t, int64(len(stored)), r.BytesAfter, "sizes are the files' sizes on disk")
	migrated := zstdDecompress(t, stored)
	assert.Less(t, len(migrated), len(plain))
	assert.Contains(t, string(migrated), `"transcriptTool":{"v":1`)

	var got bytes.Buffer
	require.NoError(t, migrate.RehydrateTo(context.Background(), &got, session.Input{Path: path}, "", local.Open, nil))
	assert.Equal(t, string(plain), got.String(), "rehydrate to a stream gives the JSONL bytes")

	out := filepath.Join(dir, "restored")
	rs := migrate.Rehydrate(context.Background(), inputs, migrate.RehydrateOptions{OpenStore: local.Open, Out: out, Jobs: 1})
	require.Zero(t, rs.Failed, "%v", rs.Results)
	restored, err := os.ReadFile(filepath.Join(out, filepath.Base(path)))
	require.NoError(t, err)
	assert.Equal(t, string(plain), string(zstdDecompress(t, restored)), "rehydrate --out writes it compressed")

	again := migrate.Run(context.Background(), inputs, migrate.Options{OpenStore: local.Open, Jobs: 1})
	assert.Equal(t, migrate.StatusUnchanged, again.Results[0].Status)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, stored, after, "a second run changes no byte")
}

// TestMigrateZstdLongLines: the long lines of a compressed rollout are
// rewritten from their skeletons, as those of a plain one are, with the
// same output; they restore exactly, and the scratch file that kept them
// is gone.
func TestMigrateZstdLongLines(t *testing.T) {
	numbers := `{"type":"message","id":"n1","message":{"role":"toolResult","toolCallId":"n","toolName":"x","content":[` +
		strings.Repeat("1,", 9<<20) + `1]}}`
	long := testsession.Pi("s1", 2, session.LongLine+1000)
	orig := append(bytes.ReplaceAll(long, []byte("}}\n{"), []byte("}}\r\n{")), numbers+"\n"...)
	orig = append(orig, long[:len(long)/2]...) // a torn last line, long too
	dir := t.TempDir()
	plain := filepath.Join(dir, "s.jsonl")
	zst := filepath.Join(dir, "s.jsonl.zst")
	writeFile(t, plain, orig, 0o644)
	writeFile(t, zst, zstdCompress(t, orig), 0o644)
	scratch := t.TempDir()
	t.Setenv("TMPDIR", scratch)

	sum := migrateRun(t, migrate.Options{Jobs: 1}, plain, zst)

	rp, rz := result(t, sum, plain), result(t, sum, zst)
	require.Equal(t, migrate.StatusMigrated, rz.Status, rz.Message)
	assert.Equal(t, 1, rz.LongKept, "the line of numbers")
	assert.Equal(t, rp.Artifacts, rz.Artifacts)
	assert.Equal(t, readFile(t, plain), zstdDecompress(t, readFile(t, zst)), "the same output as the plain transcript's")
	assert.Equal(t, orig, rehydrate(t, zst, ""))
	out := filepath.Join(dir, "out")
	back := migrate.Rehydrate(context.Background(), []session.Input{{Path: zst, Rel: "s.jsonl.zst"}}, migrate.RehydrateOptions{OpenStore: local.Open, Out: out})
	require.Zero(t, back.Failed, back.Results)
	assert.Equal(t, orig, zstdDecompress(t, readFile(t, filepath.Join(out, "s.jsonl.zst"))))
	left, err := os.ReadDir(scratch)
	require.NoError(t, err)
	assert.Empty(t, left, "scratch files left behind")
}

// wordyRollout is a Codex rollout of about size bytes of text: many
// outputs under the threshold, of words drawn from a vocabulary as in
// prose or code, which zstd compresses better the harder it tries, and
// one random output over it.
func wordyRollout(size int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	words := make([]string, 3000)
	for i := range words {
		b := make([]byte, 2+r.IntN(8))
		for j := range b {
			b[j] = byte('a' + r.IntN(26))
		}
		words[i] = string(b)
	}
	var out bytes.Buffer
	out.WriteString(`{"timestamp":"2025-09-01T10:00:00.000Z","type":"session_meta","payload":{"id":"0199-words","cwd":"/w"}}` + "\n")
	call := func(i int, output string) {
		fmt.Fprintf(&out, `{"timestamp":"2025-09-01T10:00:01.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{}","call_id":"call_%d"}}`+"\n", i)
		fmt.Fprintf(&out, `{"timestamp":"2025-09-01T10:00:02.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_%d","output":%s}}`+"\n", i, jsonString(output))
	}
	random := make([]byte, 3000)
	for i := range random {
		random[i] = "0123456789abcdef"[r.IntN(16)]
	}
	call(0, string(random)+string(random[:1500]))
	for i := 1; out.Len() < size; i++ {
		var text strings.Builder
		for text.Len() < 2000 {
			// Common words far more often than rare ones.
			text.WriteString(words[int(float64(len(words))*r.Float64()*r.Float64()*r.Float64())])
			text.WriteString(" ")
		}
		call(i, text.String())
	}
	return out.Bytes()
}

// TestMigrateZstdNoLarger: a rollout compressed harder than zstd's default
// level (as zstd -19 does; here klauspost's best level) is not made larger
// by a migration that would make it larger at the default level: it is
// compressed again at the best level. A dry run reports that size.
func TestMigrateZstdNoLarger(t *testing.T) {
	plain := wordyRollout(512 << 10)
	orig := zstdCompressAt(t, plain, zstd.SpeedBestCompression)
	path := filepath.Join(t.TempDir(), "rollout.jsonl.zst")
	writeFile(t, path, orig, 0o644)

	dry := migrateRun(t, migrate.Options{DryRun: true}, path)
	sum := migrateRun(t, migrate.Options{}, path)

	r := result(t, sum, path)
	require.Equal(t, migrate.StatusMigrated, r.Status, r.Message)
	stored := readFile(t, path)
	migrated := zstdDecompress(t, stored)
	require.Less(t, len(migrated), len(plain))
	require.Greater(t, len(zstdCompress(t, migrated)), len(orig), "at the default level the rollout would not grow: this tests nothing")
	assert.LessOrEqual(t, len(stored), len(orig))
	assert.Equal(t, int64(len(stored)), r.BytesAfter)
	assert.Equal(t, r.BytesAfter, result(t, dry, path).BytesAfter)
	assert.Equal(t, plain, rehydrate(t, path, ""))
}
