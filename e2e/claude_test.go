package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// claudePin is the Claude Code release the test drives.
const claudePin = "@anthropic-ai/claude-code@2.1.332"

// claudeSessionID is the id the test gives the session (--session-id), so
// that it knows where Claude Code writes it and what to resume.
const claudeSessionID = "0e2e0000-0000-4000-8000-000000000001"

// TestClaudeCode has Claude Code write a session against the stand-in,
// migrates ~/.claude/projects in place, and resumes the session with
// `--resume ID`; its Read and Bash open the placeholder's path.
func TestClaudeCode(t *testing.T) {
	forEachPin(t, claudePin, func(t *testing.T, pin string) { runE2E(t, claudeCase(findAgent(t, pin, "claude"))) })
}

// claudeCase is Claude Code's part in the end-to-end flow.
func claudeCase(claude agent) agentCase {
	return agentCase{
		Tools: agentTools{
			Shell: func(command string) toolCall {
				return toolCall{Name: "Bash", Input: map[string]any{"command": command, "description": "Run the command"}}
			},
			Read: func(path string) toolCall {
				return toolCall{Name: "Read", Input: map[string]any{"file_path": path}}
			},
		},
		Configure: func(t *testing.T, home, url string) {
			// By default Claude Code keeps a Bash output over 30000
			// characters out of the conversation (in
			// <session>/tool-results/, with a 2 KB preview inline); the
			// workload's output is to be inline, as it is for most tools.
			settings, err := json.Marshal(map[string]any{"bashOutputMaxChars": 128000})
			require.NoError(t, err)
			dir := filepath.Join(home, ".claude")
			require.NoError(t, os.MkdirAll(dir, 0o700))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "settings.json"), settings, 0o600))
		},
		Sessions: func(home string) string { return filepath.Join(home, ".claude", "projects") },
		Migrated: func(t *testing.T, session []byte) {
			// The request shapes (system prompt and tool schemas, the
			// same in every session of a version) are artifacts: the
			// resume that follows shows Claude Code does without them.
			shapes := regexp.MustCompile(`(?m)^\{"type":"api-request-shape".*"shape":\{"artifact":"\[Omitted \d+ bytes`).FindAll(session, -1)
			require.NotEmpty(t, shapes, "no api-request-shape line was migrated")
		},
		Run: func(t *testing.T, r agentRun) {
			// The prompt comes first: --add-dir would take it for one
			// more folder. Only the two tools the stand-in calls: the others' schemas
			// would be most of every request.
			args := []string{"-p", r.Prompt, "--allowedTools", "Bash Read", "--tools", "Bash,Read"}
			if r.Session == "" {
				args = append(args, "--session-id", claudeSessionID)
			} else {
				// The store is in the project's session folder, outside
				// the project: Claude Code asks before reading there.
				args = append(args, "--resume", strings.TrimSuffix(filepath.Base(r.Session), ".jsonl"),
					"--add-dir", filepath.Dir(r.Session))
			}
			env := []string{"HOME=" + r.Home, "ANTHROPIC_BASE_URL=" + r.URL, "ANTHROPIC_API_KEY=x",
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}
			runAgent(t, claude, r.Work.Dir, env, agentTimeout, args...)
			if r.Session == "" {
				require.FileExists(t, filepath.Join(claudeProjectDir(r.Home, r.Work.Dir), claudeSessionID+".jsonl"))
			}
		},
	}
}

var notAlnum = regexp.MustCompile(`[^A-Za-z0-9]`)

// claudeProjectDir is where Claude Code keeps the sessions of the project
// in cwd: its path with every character but letters and digits made a -.
func claudeProjectDir(home, cwd string) string {
	return filepath.Join(home, ".claude", "projects", notAlnum.ReplaceAllString(cwd, "-"))
}
