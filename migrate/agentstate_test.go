package migrate_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/agentstate"
	"github.com/transcript-tool/transcript-tool/migrate"
)

// codexHome makes a Codex home with one rollout worth migrating, a thread
// history database file and the thread's writer lock held, as a running
// Codex holds it; it returns the rollout, its bytes and the held lock.
func codexHome(t *testing.T, home string) (rollout string, orig []byte, lock *os.File) {
	t.Helper()
	const id = "01a21453-e78e-72b0-a8ce-8367cce475c9"
	rollout = filepath.Join(home, "sessions", "2026", "11", "25", "rollout-2026-11-25T20-09-32-"+id+".jsonl")
	orig = []byte(`{"timestamp":"t","type":"session_meta","payload":{"id":"` + id + `","cwd":"/w"}}` + "\n" +
		`{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"` + strings.Repeat("line of output\\n", 400) + `"}}` + "\n")
	require.NoError(t, os.MkdirAll(filepath.Dir(rollout), 0o700))
	writeFile(t, rollout, orig, 0o600)
	writeFile(t, filepath.Join(home, "thread_history_1.sqlite"), nil, 0o600)
	require.NoError(t, os.Mkdir(filepath.Join(home, "thread-writer-locks"), 0o700))
	lock, err := os.Create(filepath.Join(home, "thread-writer-locks", id+".lock"))
	require.NoError(t, err)
	t.Cleanup(func() { lock.Close() })
	require.NoError(t, syscall.Flock(int(lock.Fd()), syscall.LOCK_EX))
	return rollout, orig, lock
}

// TestMigrateCodexThreadInUse: a rollout whose thread a Codex process
// holds open (its writer lock) is left untouched, with an error that says
// so; once the lock is free, a thread history the reset cannot read
// leaves it untouched too.
func TestMigrateCodexThreadInUse(t *testing.T) {
	home := t.TempDir()
	rollout, orig, lock := codexHome(t, home)

	sum := migrateRun(t, migrate.Options{}, filepath.Join(home, "sessions"))
	r := result(t, sum, rollout)
	assert.Equal(t, migrate.StatusFailed, r.Status)
	assert.ErrorIs(t, r.Err, agentstate.ErrThreadInUse)
	assert.Contains(t, r.Err.Error(), "left untouched")
	assert.Equal(t, orig, readFile(t, rollout))

	require.NoError(t, syscall.Flock(int(lock.Fd()), syscall.LOCK_UN))
	sum = migrateRun(t, migrate.Options{}, filepath.Join(home, "sessions"))
	r = result(t, sum, rollout)
	// The empty file is no thread history database: the reset refuses it,
	// and the rollout stays as it was.
	assert.Equal(t, migrate.StatusFailed, r.Status)
	assert.ErrorIs(t, r.Err, agentstate.ErrUnknownSchema)
	assert.Equal(t, orig, readFile(t, rollout))
}

// TestMigrateOutOwnDirGuardsCodexState: --out naming the folder the
// rollouts are in (--out . from inside ~/.codex/sessions) rewrites each in
// place, and so guards Codex's state as an in-place run does: a thread
// Codex holds open is left untouched.
func TestMigrateOutOwnDirGuardsCodexState(t *testing.T) {
	home := t.TempDir()
	rollout, orig, _ := codexHome(t, home)
	sessions := filepath.Join(home, "sessions")

	sum := migrateRun(t, migrate.Options{Out: sessions}, sessions)
	r := result(t, sum, rollout)
	assert.Equal(t, rollout, r.Dest, "--out names the rollouts' own folder")
	assert.Equal(t, migrate.StatusFailed, r.Status, "a thread Codex has open is not rewritten")
	assert.ErrorIs(t, r.Err, agentstate.ErrThreadInUse)
	assert.Equal(t, orig, readFile(t, rollout), "the rollout is left untouched")
}

// TestMigrateCodexCompressing: a rollout is left untouched, with an error
// that says why, while Codex's rollout maintenance lock is held (a
// compression pass) or Codex's temporaries say it is compressing or
// materializing a rollout in its folder; then it migrates.
func TestMigrateCodexCompressing(t *testing.T) {
	home := t.TempDir()
	rollout, orig, lock := codexHome(t, home)
	require.NoError(t, syscall.Flock(int(lock.Fd()), syscall.LOCK_UN))
	require.NoError(t, os.Remove(filepath.Join(home, "thread_history_1.sqlite")))
	writeFile(t, filepath.Join(home, ".tmp", "rollout-maintenance.lock"), nil, 0o644)
	pass, err := os.Open(filepath.Join(home, ".tmp", "rollout-maintenance.lock"))
	require.NoError(t, err)
	defer pass.Close()
	require.NoError(t, syscall.Flock(int(pass.Fd()), syscall.LOCK_EX))

	check := func(what string) {
		t.Helper()
		sum := migrateRun(t, migrate.Options{}, filepath.Join(home, "sessions"))
		r := result(t, sum, rollout)
		assert.Equal(t, migrate.StatusFailed, r.Status, what)
		assert.ErrorIs(t, r.Err, agentstate.ErrMaintenance, what)
		assert.Contains(t, r.Err.Error(), "left untouched", what)
		assert.Equal(t, orig, readFile(t, rollout), what)
		assert.NoDirExists(t, filepath.Join(home, "sessions", "artifacts"), "%s: nothing is stored", what)
	}
	check("a compression pass holds the lock")
	require.NoError(t, syscall.Flock(int(pass.Fd()), syscall.LOCK_UN))
	temp := filepath.Join(filepath.Dir(rollout), "rollout-compress-Qz81aB.tmp")
	writeFile(t, temp, []byte("(zstd)"), 0o600)
	check("a compression's temporary is beside it")
	require.NoError(t, os.Remove(temp))

	sum := migrateRun(t, migrate.Options{}, filepath.Join(home, "sessions"))
	assert.Equal(t, migrate.StatusMigrated, result(t, sum, rollout).Status)
}

// TestMigrateRolloutCodexCompressed: a rollout as Codex compresses it (one
// zstd frame at level 3 with its content size and checksum, mtime kept,
// the plain file gone) migrates in place, stays compressed, and
// rehydrates to its JSONL bytes; also one compressed by the zstd command,
// the library Codex links, when it is installed.
func TestMigrateRolloutCodexCompressed(t *testing.T) {
	compressors := map[string]func(t *testing.T, plain []byte) []byte{
		"level 3 with checksum": func(t *testing.T, plain []byte) []byte {
			enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderCRC(true))
			require.NoError(t, err)
			return enc.EncodeAll(plain, nil)
		},
		"zstd -3 --check": func(t *testing.T, plain []byte) []byte {
			if _, err := exec.LookPath("zstd"); err != nil {
				t.Skip("no zstd command")
			}
			cmd := exec.Command("zstd", "-3", "--check", "-c", "-q")
			cmd.Stdin = bytes.NewReader(plain)
			out, err := cmd.Output()
			require.NoError(t, err)
			return out
		},
	}
	for name, compress := range compressors {
		t.Run(name, func(t *testing.T) {
			home := t.TempDir()
			rollout, orig, lock := codexHome(t, home)
			require.NoError(t, syscall.Flock(int(lock.Fd()), syscall.LOCK_UN))
			require.NoError(t, os.Remove(filepath.Join(home, "thread_history_1.sqlite")))
			frame := compress(t, orig)
			require.Equal(t, []byte{0x28, 0xb5, 0x2f, 0xfd}, frame[:4], "a zstd frame")
			require.NotZero(t, frame[4]&0x04, "with a checksum")
			week := time.Now().Add(-8 * 24 * time.Hour)
			writeFile(t, rollout+".zst", frame, 0o600)
			require.NoError(t, os.Chtimes(rollout+".zst", week, week))
			require.NoError(t, os.Remove(rollout))

			sum := migrateRun(t, migrate.Options{}, filepath.Join(home, "sessions"))
			require.Equal(t, migrate.StatusMigrated, result(t, sum, rollout+".zst").Status)
			assert.NoFileExists(t, rollout, "no plain rollout appears")
			migrated := readFile(t, rollout+".zst")
			assert.Less(t, len(zstdDecompress(t, migrated)), len(orig)/4, "the output moved out")
			assert.Equal(t, orig, rehydrate(t, rollout+".zst", ""), "rehydrate gives the JSONL bytes back")
		})
	}
}

// TestMigrateLeavesClaudeToolResults: the files Claude Code keeps beside
// a session, the outputs it stored itself in tool-results/ (.txt, .json
// of text blocks), are neither transcripts nor touched: after a
// migration of the project they are there with the same bytes, mode and
// time, and no result names them.
func TestMigrateLeavesClaudeToolResults(t *testing.T) {
	project := filepath.Join(t.TempDir(), ".claude", "projects", "-w")
	session := filepath.Join(project, "0e2e0000-0000-4000-8000-000000000001.jsonl")
	output := strings.Repeat("shell output line of a long build log\\n", 900)
	writeFile(t, session, []byte(`{"parentUuid":"a1","isSidechain":false,"type":"user","sessionId":"0e2e0000-0000-4000-8000-000000000001","uuid":"u1","timestamp":"t",`+
		`"message":{"role":"user","content":[{"tool_use_id":"toolu_01","type":"tool_result","content":"<persisted-output>\nPreview\n</persisted-output>"}]},`+
		`"toolUseResult":{"stdout":"`+output+`","stderr":"","persistedOutputPath":"`+project+`/0e2e0000-0000-4000-8000-000000000001/tool-results/bq7e2e0a1.txt"}}`+"\n"), 0o600)
	sidecars := map[string][]byte{
		"bq7e2e0a1.txt":  []byte(strings.ReplaceAll(output, `\n`, "\n")),
		"toolu_01.json":  []byte(`[` + "\n" + `  {"type": "text", "text": "` + output + `"}` + "\n]"),
		"toolu_02.jsonl": []byte(`{"type":"user","sessionId":"s","message":{"role":"user","content":"` + output + `"}}` + "\n"),
	}
	dir := filepath.Join(project, "0e2e0000-0000-4000-8000-000000000001", "tool-results")
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	for name, data := range sidecars {
		writeFile(t, filepath.Join(dir, name), data, 0o644)
		require.NoError(t, os.Chtimes(filepath.Join(dir, name), old, old))
	}

	sum := migrateRun(t, migrate.Options{}, filepath.Join(project, "..", ".."))
	assert.Equal(t, migrate.StatusMigrated, result(t, sum, session).Status)
	for _, r := range sum.Results {
		assert.NotContains(t, r.Path, "tool-results", "a sidecar taken as a transcript")
	}
	for name, data := range sidecars {
		p := filepath.Join(dir, name)
		assert.Equal(t, data, readFile(t, p), "%s is left as it was", name)
		fi, err := os.Stat(p)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm(), name)
		assert.True(t, fi.ModTime().Equal(old), "%s: its time is kept", name)
	}
	assert.NotContains(t, string(readFile(t, session)), output[:200], "the session's copy of the output moved")
}
