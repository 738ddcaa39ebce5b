package session_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/session"
)

// TestStoreForRelativePath: the default store of a transcript does not
// depend on how its path is spelled: a Codex rollout named from inside its
// day folder, or from its month folder, has the store of its absolute
// path, sessions/artifacts, so that what migrate wrote rehydrate finds.
func TestStoreForRelativePath(t *testing.T) {
	home := t.TempDir()
	day := filepath.Join(home, ".codex", "sessions", "2025", "09", "15")
	require.NoError(t, os.MkdirAll(day, 0o700))
	name := "rollout-2025-09-15T10-00-00-11111111-1111-1111-1111-111111111111.jsonl"
	abs := filepath.Join(day, name)
	want := filepath.Join(home, ".codex", "sessions", session.StoreDirName)
	require.Equal(t, want, session.StoreFor("", abs))

	t.Chdir(day)
	got, err := filepath.Abs(session.StoreFor("", name))
	require.NoError(t, err)
	assert.Equal(t, want, got, "the store of the same rollout named from its day folder")

	t.Chdir(filepath.Dir(day))
	got, err = filepath.Abs(session.StoreFor("", filepath.Join("15", name)))
	require.NoError(t, err)
	assert.Equal(t, want, got, "the store of the same rollout named from its month folder")
}

func TestRoot(t *testing.T) {
	for path, want := range map[string]string{
		"/h/.claude/projects/-w/s.jsonl":                                  "/h/.claude/projects/-w",
		"/h/.claude/projects/-w/s/subagents/agent-1.jsonl":                "/h/.claude/projects/-w",
		"/h/.codex/sessions/2026/11/25/rollout-2026-11-25T01-a.jsonl":     "/h/.codex/sessions",
		"/h/.codex/sessions/2026/11/25/rollout-2026-11-25T01-a.jsonl.zst": "/h/.codex/sessions",
		"/h/.codex/archived_sessions/rollout-2026-11-25T01-a.jsonl":       "/h/.codex/sessions",
		"/h/.pi/agent/sessions/--home-dev--/2026-a.jsonl":                 "/h/.pi/agent/sessions",
		"/h/.openclaw/agents/main/sessions/a.jsonl":                       "/h/.openclaw/agents/main/sessions",
		"/h/.gemini/tmp/w/chats/session-2026-11-27T02-52-7934add8.jsonl":  "/h/.gemini/tmp/w/chats",
		"/h/.gemini/tmp/w/chats/7934add8-8bfd/a1.jsonl":                   "/h/.gemini/tmp/w/chats",
		"/h/notes/chats/x/a.jsonl":                                        "/h/notes/chats/x",
		"/h/.qwen/projects/-w/chats/da63ace8.jsonl":                       "/h/.qwen/projects/-w/chats",
		"/h/.qwen/projects/-w/subagents/da63ace8/agent-a1.jsonl":          "/h/.qwen/projects/-w/chats",
		"/h/logs/2026/11/25/chat.jsonl":                                   "/h/logs/2026/11/25",
		"/h/notes/--x--/a.jsonl":                                          "/h/notes/--x--",
		"s.jsonl":                                                         ".",
	} {
		assert.Equal(t, want, session.Root(path), path)
	}
}
