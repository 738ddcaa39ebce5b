package migrate_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/migrate"
	"github.com/transcript-tool/transcript-tool/session"
)

// formatSessions are generated sessions of every format, from
// testdata/sessions, and where each agent keeps such a file under the
// home directory (without the leading dot: walking skips hidden
// directories below the PATH given).
var formatSessions = []struct {
	session, path, format string
	store                 string // the default store, in the agent's session root
}{
	{"generated-v3-openclaw.jsonl", "openclaw/agents/main/sessions/s1.jsonl", "pi", "openclaw/agents/main/sessions"},
	{"generated-v1.jsonl", "pi/agent/sessions/--home-dev--/s2.jsonl", "pi", "pi/agent/sessions"},
	{"claude-session.jsonl", "claude/projects/-home-dev-src/bde14ba6.jsonl", "claude-code", "claude/projects/-home-dev-src"},
	{"claude-subagent.jsonl", "claude/projects/-home-dev-src/bde14ba6/subagents/agent-cc729fe.jsonl", "claude-code", "claude/projects/-home-dev-src"},
	{"codex-rollout.jsonl", "codex/sessions/2025/06/02/rollout-2025-06-02T06-30-16-adb645d8.jsonl", "codex", "codex/sessions"},
	{"codex-legacy.jsonl", "codex/sessions/2025/04/20/rollout-2025-04-20-0f7212c2.jsonl", "codex", "codex/sessions"},
	{"gemini-rewind.jsonl", "gemini/tmp/project/chats/session-2026-11-27T02-52-7934add8.jsonl", "gemini", "gemini/tmp/project/chats"},
	{"gemini-rewind.jsonl", "gemini/tmp/project/chats/7934add8-8bfd-4870-a558-4cd2ea1b3c52/a1.jsonl", "gemini", "gemini/tmp/project/chats"},
	{"qwen-session.jsonl", "qwen/projects/-w/chats/bc64ee0d-0c2a-4c4b-a4a6-31f417fd4931.jsonl", "qwen", "qwen/projects/-w/chats"},
	{"qwen-session.jsonl", "qwen/projects/-w/subagents/bc64ee0d-0c2a-4c4b-a4a6-31f417fd4931/agent-a1.jsonl", "qwen", "qwen/projects/-w/chats"},
	{"chat-messages.jsonl", "logs/chat/messages.jsonl", "chat", "logs/chat"},
	{"chat-conversations.jsonl", "logs/chat/conversations.jsonl", "chat", "logs/chat"},
	{"copilot-session.jsonl", "copilot/session-state/edc43c2c-c9e0-4366-9834-ddb3b4a3889b/events.jsonl", "copilot",
		"copilot/session-state/edc43c2c-c9e0-4366-9834-ddb3b4a3889b"},
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
			assert.DirExists(t, filepath.Join(root, s.store, session.StoreDirName))
			if dir := filepath.Dir(path); dir != filepath.Join(root, s.store) {
				assert.NoDirExists(t, filepath.Join(dir, session.StoreDirName), "one store per session root")
			}
		})
	}
	r := result(t, sum, other)
	assert.Equal(t, migrate.StatusSkipped, r.Status)
	assert.ErrorIs(t, r.Err, session.ErrUnknownFormat)
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
	assert.ErrorIs(t, r.Err, session.ErrUnknownFormat)
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
	assert.NoDirExists(t, filepath.Join(dir, session.StoreDirName))

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
	assert.ErrorIs(t, result(t, sum, path).Err, session.ErrUnknownFormat)
	assert.Equal(t, orig, readFile(t, path))

	sum = migrateRun(t, migrate.Options{Format: "codex"}, path)
	r := result(t, sum, path)
	require.NoError(t, r.Err)
	assert.Equal(t, migrate.StatusMigrated, r.Status)
	assert.Equal(t, "codex", r.Format)
	assert.Less(t, r.BytesAfter, r.BytesBefore)
	assert.True(t, bytes.Equal(orig, rehydrate(t, path, "")), "rehydrated bytes differ from the original")
}

// claudeLine is a Claude Code user line whose tool result is text.
func claudeLine(session, uuid, text string) string {
	return `{"parentUuid":null,"isSidechain":true,"type":"user","sessionId":"` + session + `","uuid":"` + uuid +
		`","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t-` + uuid +
		`","content":"` + text + `"}]}}` + "\n"
}

// TestClaudeProjectOneStore: a Claude Code project whose main session and
// subagent read the same file gets one store, in the project folder, and
// the file once; a subagents folder that an earlier version gave a store
// of its own keeps using it.
func TestClaudeProjectOneStore(t *testing.T) {
	root := t.TempDir()
	project := filepath.Join(root, ".claude", "projects", "-home-dev-app")
	shared := strings.Repeat("package main // the same file read twice\\n", 200)
	main := filepath.Join(project, "s1.jsonl")
	sub := filepath.Join(project, "s1", "subagents", "agent-a1.jsonl")
	writeFile(t, main, []byte(claudeLine("s1", "u1", shared)), 0o600)
	writeFile(t, sub, []byte(claudeLine("s1", "u2", shared)), 0o600)

	sum := migrateRun(t, migrate.Options{Jobs: 1}, filepath.Join(root, ".claude", "projects"))
	assert.Equal(t, 2, sum.Migrated)
	assert.Equal(t, 1, sum.Written)
	assert.Equal(t, 1, sum.Deduplicated, "the subagent's copy is the main session's artifact")
	assert.Len(t, objects(t, filepath.Join(project, session.StoreDirName)), 1)
	assert.NoDirExists(t, filepath.Join(filepath.Dir(sub), session.StoreDirName))
	assert.Equal(t, filepath.Join(project, session.StoreDirName), session.StoreFor("", sub))

	legacy := filepath.Join(root, "old", "-home-dev-app", "s2", "subagents")
	require.NoError(t, os.MkdirAll(filepath.Join(legacy, session.StoreDirName), 0o700))
	assert.Equal(t, filepath.Join(legacy, session.StoreDirName), session.StoreFor("", filepath.Join(legacy, "agent-b2.jsonl")),
		"a store beside the transcript, from an earlier version, stays its store")
}

// TestDryRunPredictsTheRun: on the real corpus (when it is there) and the
// bundled sessions, laid out as the agents keep them so that sessions
// share stores, --dry-run reports the counts the run then reports: files,
// bytes, and artifacts referenced, written and deduplicated, also across
// files and with several workers.
func TestDryRunPredictsTheRun(t *testing.T) {
	root := t.TempDir()
	sources, _ := filepath.Glob("../../shared/corpus/*/*.jsonl")
	bundled, _ := filepath.Glob("../testdata/sessions/*.jsonl")
	for i, f := range append(sources, bundled...) {
		dir := filepath.Join(root, "projects", fmt.Sprintf("p%d", i%3))
		writeFile(t, filepath.Join(dir, fmt.Sprintf("%03d-%s", i, filepath.Base(f))), readFile(t, f), 0o600)
		if i%4 == 0 { // and a copy, as a subagent's
			writeFile(t, filepath.Join(dir, "s", "subagents", fmt.Sprintf("agent-%03d.jsonl", i)), readFile(t, f), 0o600)
		}
	}
	counts := func(s migrate.Summary) migrate.Summary {
		s.Results, s.DryRun = nil, false
		return s
	}
	dry := migrateRun(t, migrate.Options{DryRun: true, Jobs: 2}, root)
	require.True(t, dry.DryRun)
	run := migrateRun(t, migrate.Options{Jobs: 2}, root)
	require.Positive(t, run.Deduplicated, "the tree should share artifacts")
	assert.Equal(t, counts(run), counts(dry))
	t.Logf("%d files, %d referenced, %d written, %d deduplicated", run.Files, run.Artifacts, run.Written, run.Deduplicated)
}
