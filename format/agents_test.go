package format

import (
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
