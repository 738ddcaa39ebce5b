package format

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestAgentsDeclared: every agent names a format the tool reads, a hidden
// home and session folders under it, and no two agents share a folder.
func TestAgentsDeclared(t *testing.T) {
	seen := map[string]string{}
	for _, a := range Agents() {
		_, ok := Lookup(a.Format)
		assert.True(t, ok, "%s: format %q", a.Name, a.Format)
		assert.True(t, strings.HasPrefix(a.Home, "."), "%s: home %q", a.Name, a.Home)
		assert.NotEmpty(t, a.Sessions, a.Name)
		for _, s := range a.Sessions {
			f := a.Home + "/" + s
			assert.Empty(t, seen[f], "%s: %s is also %s's", a.Name, f, seen[f])
			seen[f] = a.Name
		}
	}
	assert.Equal(t, []string{"~/.claude/projects", "~/.codex/sessions", "~/.codex/archived_sessions",
		"~/.pi/agent/sessions", "~/.openclaw/agents/*/sessions", "~/.openclaw/agents/*/agent", "~/.gemini/tmp/*/chats",
		"~/.qwen/projects/*/chats", "~/.qwen/projects/*/subagents", "~/.copilot/session-state"}, SessionFolders())
}

// TestSidecarsDeclared: an agent's sidecar folder of a session, found from
// any of its transcripts (a subagent's too), is the folder whose
// transcript is the session's main one, so that the walker and stats
// agree on which folders they are.
func TestSidecarsDeclared(t *testing.T) {
	n := 0
	for _, a := range Agents() {
		if a.Sidecar == nil {
			continue
		}
		n++
		assert.NotEmpty(t, a.Sidecar.Name, a.Name)
		main := filepath.Join("home", "p1", "s1.jsonl")
		for _, path := range []string{main, filepath.Join("home", "p1", "s1", "subagents", "agent-a1.jsonl")} {
			dir, group := a.Sidecar.Folder(path)
			assert.Equal(t, a.Sidecar.Name, filepath.Base(dir), "%s: %s", a.Name, path)
			assert.Equal(t, filepath.Join("home", "p1"), group, "%s: %s", a.Name, path)
			got, ok := a.Sidecar.Transcript(dir)
			assert.True(t, ok, "%s: %s", a.Name, dir)
			assert.Equal(t, main, got, "%s: %s", a.Name, dir)
		}
		_, ok := a.Sidecar.Transcript(filepath.Join("home", "p1", "s1"))
		assert.False(t, ok, "%s: a session's folder is no sidecar", a.Name)
	}
	assert.Equal(t, 1, n, "Claude Code's tool-results")
}

// TestStateRegistered: a declared State without its implementation fails
// every transcript rather than leave a state stale, and registering for
// an agent that declares none is refused.
func TestStateRegistered(t *testing.T) {
	_, err := (&State{What: "a test's history"}).Lock("s.jsonl")
	assert.ErrorContains(t, err, "s.jsonl: no implementation of a test's history is built in")
	assert.Panics(t, func() { RegisterState("Claude Code", nil) }, "declares none")
	assert.Panics(t, func() { RegisterState("nobody", nil) }, "no such agent")
}

// TestDatabasesDeclared: OpenClaw's agent databases are found by the name
// its declaration gives them, and no other file is taken for one.
func TestDatabasesDeclared(t *testing.T) {
	a, ok := DatabaseOf(filepath.Join("home", ".openclaw", "agents", "main", "agent", "openclaw-agent.sqlite"))
	assert.True(t, ok)
	assert.Equal(t, "OpenClaw", a.Name)
	for _, path := range []string{"openclaw.sqlite", filepath.Join("openclaw-agent.sqlite", "s.jsonl"), "s.jsonl"} {
		_, ok := DatabaseOf(path)
		assert.False(t, ok, path)
	}
	_, ok = Named("nobody")
	assert.False(t, ok)
}

// TestFolderIDDeclared: a Copilot CLI session is known by the name of its
// folder; a file of any other name in a folder named like an id, as a
// Gemini CLI or Qwen Code subagent's in its main session's, is not.
func TestFolderIDDeclared(t *testing.T) {
	const id = "edc43c2c-c9e0-4366-9834-ddb3b4a3889b"
	got, ok := FolderID(filepath.Join("home", ".copilot", "session-state", id, "events.jsonl"))
	assert.True(t, ok)
	assert.Equal(t, id, got)
	for _, path := range []string{
		filepath.Join("chats", id, "a1.jsonl"),
		filepath.Join("subagents", id, "agent-a1.jsonl"),
	} {
		_, ok := FolderID(path)
		assert.False(t, ok, path)
	}
}
