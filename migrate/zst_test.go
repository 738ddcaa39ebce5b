package migrate_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/migrate"
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
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf)
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

	inputs, err := migrate.Collect([]string{dir})
	require.NoError(t, err)
	require.Len(t, inputs, 1)
	sum := migrate.Run(context.Background(), inputs, migrate.Options{Jobs: 1})
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
	require.NoError(t, migrate.RehydrateTo(&got, path, "", nil))
	assert.Equal(t, string(plain), got.String(), "rehydrate to a stream gives the JSONL bytes")

	out := filepath.Join(dir, "restored")
	rs := migrate.Rehydrate(context.Background(), inputs, migrate.RehydrateOptions{Out: out, Jobs: 1})
	require.Zero(t, rs.Failed, "%v", rs.Results)
	restored, err := os.ReadFile(filepath.Join(out, filepath.Base(path)))
	require.NoError(t, err)
	assert.Equal(t, string(plain), string(zstdDecompress(t, restored)), "rehydrate --out writes it compressed")

	again := migrate.Run(context.Background(), inputs, migrate.Options{Jobs: 1})
	assert.Equal(t, migrate.StatusUnchanged, again.Results[0].Status)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, stored, after, "a second run changes no byte")
}
