package migrate_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/migrate"
)

// formatSessions are generated sessions of every format, from
// testdata/sessions, and where each agent keeps such a file under the
// home directory (without the leading dot: walking skips hidden
// directories below the PATH given).
var formatSessions = []struct {
	session, path, format string
}{
	{"generated-v3-openclaw.jsonl", "openclaw/agents/main/sessions/s1.jsonl", "pi"},
	{"generated-v1.jsonl", "pi/agent/sessions/--home-dev--/s2.jsonl", "pi"},
	{"claude-session.jsonl", "claude/projects/-home-dev-src/bde14ba6.jsonl", "claude-code"},
	{"claude-subagent.jsonl", "claude/projects/-home-dev-src/bde14ba6/subagents/agent-cc729fe.jsonl", "claude-code"},
	{"codex-rollout.jsonl", "codex/sessions/2025/06/02/rollout-2025-06-02T06-30-16-adb645d8.jsonl", "codex"},
	{"codex-legacy.jsonl", "codex/sessions/2025/04/20/rollout-2025-04-20-0f7212c2.jsonl", "codex"},
	{"chat-messages.jsonl", "logs/chat/messages.jsonl", "chat"},
	{"chat-conversations.jsonl", "logs/chat/conversations.jsonl", "chat"},
}

// TestMigrateEveryFormat: a tree holding transcripts of every format and
// a file of none. Each transcript is migrated with the format detected
// from its lines and rehydrates byte for byte; the other file is skipped,
// left as it was, and fails when named; a second run changes nothing.
func TestMigrateEveryFormat(t *testing.T) {
	root := t.TempDir()
	originals := map[string][]byte{}
	for _, s := range formatSessions {
		data := readFile(t, filepath.Join("..", "testdata", "sessions", s.session))
		path := filepath.Join(root, s.path)
		writeFile(t, path, data, 0o600)
		originals[path] = data
	}
	other := filepath.Join(root, "logs", "events.jsonl")
	otherData := []byte(`{"event":"deploy","log":"` + strings.Repeat("x", 2*payload) + `"}` + "\n")
	writeFile(t, other, otherData, 0o644)

	sum := migrateRun(t, migrate.Options{Jobs: 3}, root)

	assert.Equal(t, len(formatSessions)+1, sum.Files)
	assert.Equal(t, len(formatSessions), sum.Migrated)
	assert.Equal(t, 1, sum.Skipped)
	assert.Equal(t, 0, sum.Failed)
	for _, s := range formatSessions {
		path := filepath.Join(root, s.path)
		t.Run(s.session, func(t *testing.T) {
			r := result(t, sum, path)
			require.NoError(t, r.Err)
			assert.Equal(t, migrate.StatusMigrated, r.Status)
			assert.Equal(t, s.format, r.Format)
			got := readFile(t, path)
			assert.Less(t, len(got), len(originals[path])*9/10, "migrated %d -> %d bytes", len(originals[path]), len(got))
			assert.True(t, bytes.Equal(originals[path], rehydrate(t, path, "")), "rehydrated bytes differ from the original")
			assert.DirExists(t, filepath.Join(filepath.Dir(path), migrate.StoreDirName))
		})
	}
	r := result(t, sum, other)
	assert.Equal(t, migrate.StatusSkipped, r.Status)
	assert.ErrorIs(t, r.Err, migrate.ErrUnknownFormat)
	assert.Contains(t, r.Message, other, "the warning names the file")
	assert.Equal(t, otherData, readFile(t, other))

	before := snapshot(t, root)
	again := migrateRun(t, migrate.Options{Jobs: 3}, root)
	assert.Equal(t, 0, again.Migrated)
	assert.Equal(t, len(formatSessions), again.Unchanged)
	assert.Equal(t, 0, again.Written)
	assert.Equal(t, before, snapshot(t, root), "a second run changed the tree")

	named := migrateRun(t, migrate.Options{}, other)
	r = result(t, named, other)
	assert.Equal(t, migrate.StatusFailed, r.Status)
	assert.ErrorIs(t, r.Err, migrate.ErrUnknownFormat)
	assert.Equal(t, 1, named.Failed)
	assert.Equal(t, otherData, readFile(t, other))
}

// TestMigrateForcedFormat: --format overrides detection. A Claude Code
// transcript read as pi has no pi payload sites, so nothing changes; read
// as what it is, it shrinks.
func TestMigrateForcedFormat(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "session.jsonl")
	orig := readFile(t, filepath.Join("..", "testdata", "sessions", "claude-session.jsonl"))
	writeFile(t, path, orig, 0o644)

	sum := migrateRun(t, migrate.Options{Format: "pi"}, path)
	r := result(t, sum, path)
	require.NoError(t, r.Err)
	assert.Equal(t, migrate.StatusUnchanged, r.Status)
	assert.Equal(t, "pi", r.Format)
	assert.Equal(t, 0, sum.Artifacts)
	assert.Equal(t, orig, readFile(t, path))
	assert.NoDirExists(t, filepath.Join(dir, migrate.StoreDirName))

	sum = migrateRun(t, migrate.Options{Format: "claude-code"}, path)
	r = result(t, sum, path)
	require.NoError(t, r.Err)
	assert.Equal(t, migrate.StatusMigrated, r.Status)
	assert.Equal(t, "claude-code", r.Format)
	assert.Less(t, r.BytesAfter, r.BytesBefore)
	assert.True(t, bytes.Equal(orig, rehydrate(t, path, "")), "rehydrated bytes differ from the original")
}

// TestMigrateForcedFormatOnHeaderlessFile: bare Codex response items
// without the legacy header line are of no detectable format; named with
// --format codex they are migrated as Codex.
func TestMigrateForcedFormatOnHeaderlessFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "items.jsonl")
	orig := []byte(`{"record_type":"state"}` + "\n" +
		`{"type":"function_call_output","call_id":"call_1","output":"` + strings.Repeat("y", payload) + `"}` + "\n")
	writeFile(t, path, orig, 0o644)

	sum := migrateRun(t, migrate.Options{}, path)
	assert.ErrorIs(t, result(t, sum, path).Err, migrate.ErrUnknownFormat)
	assert.Equal(t, orig, readFile(t, path))

	sum = migrateRun(t, migrate.Options{Format: "codex"}, path)
	r := result(t, sum, path)
	require.NoError(t, r.Err)
	assert.Equal(t, migrate.StatusMigrated, r.Status)
	assert.Equal(t, "codex", r.Format)
	assert.Less(t, r.BytesAfter, r.BytesBefore)
	assert.True(t, bytes.Equal(orig, rehydrate(t, path, "")), "rehydrated bytes differ from the original")
}
