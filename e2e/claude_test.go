package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
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

// progressMarker is in the progress lines TestClaudeCodeProgress adds to
// a session, and nowhere else.
const progressMarker = "PROGRESS-ONLY-7c1d"

// TestClaudeCodeProgress resumes a migrated session holding progress
// lines with large output (bash_progress, hook_progress, agent_progress),
// as Claude Code writes them between a tool call and its result: Claude
// Code skips them when it loads a session (the twin's request holds none
// of their text), and resumes the migrated session, in which no progress
// output is left inline, as the flow checks for any session.
func TestClaudeCodeProgress(t *testing.T) {
	forEachPin(t, claudePin, func(t *testing.T, pin string) {
		c := claudeCase(findAgent(t, pin, "claude"))
		c.Edit = insertProgress
		shapes := c.Migrated
		c.Migrated = func(t *testing.T, session []byte) {
			shapes(t, session)
			assert.NotContains(t, string(session), progressMarker, "a progress line's output is left inline")
		}
		twin, _ := runE2E(t, c)
		for _, r := range twin.Requests {
			assert.NotContains(t, string(r.Body), progressMarker, "Claude Code sent the model a progress line's text")
		}
	})
}

// insertProgress inserts, after the line of the Bash call that ran the
// workload's shell command, the progress lines Claude Code 2.1.332 writes
// while a command and its hooks run, in the chain of parentUuid: the
// command's output so far and its last lines, a hook's prompt, and a
// subagent's tool result.
func insertProgress(t *testing.T, w workload, session string) {
	t.Helper()
	data, err := os.ReadFile(session)
	require.NoError(t, err)
	lines := bytes.SplitAfter(data, []byte("\n"))
	type line struct {
		UUID       string     `json:"uuid"`
		ParentUUID string     `json:"parentUuid"`
		SessionID  string     `json:"sessionId"`
		Version    string     `json:"version"`
		Cwd        string     `json:"cwd"`
		Message    apiMessage `json:"message"`
	}
	parse := func(b []byte) (l line) {
		_ = json.Unmarshal(b, &l)
		return l
	}
	at, call := -1, ""
	for i, b := range lines {
		for _, blk := range parse(b).Message.Blocks() {
			if blk.Type == "tool_use" && bytes.Contains(blk.Input, []byte(`' 1 600;`)) {
				at, call = i, blk.ID
			}
		}
	}
	require.GreaterOrEqual(t, at, 0, "no Bash call of the shell command")
	call0 := parse(lines[at])
	output, err := exec.Command("bash", "-c", w.ShellCommand).Output()
	require.NoError(t, err)
	full := string(output) + progressMarker + "\n"
	parent := call0.UUID
	var inserted []byte
	for i, data := range []map[string]any{
		{"type": "bash_progress", "output": full[len(full)/2:], "fullOutput": full, "elapsedTimeSeconds": 2, "totalLines": 602,
			"totalBytes": len(full), "taskId": "bq7e2e0a1", "timeoutMs": 120000},
		{"type": "hook_progress", "hookEvent": "PostToolUse", "hookName": "PostToolUse:Bash", "command": "./review.sh",
			"promptText": strings.Repeat("Review this output: "+progressMarker+"\n", 300)},
		{"type": "agent_progress", "agentId": "a0e2e01", "prompt": "Look at the output", "message": map[string]any{
			"type": "user", "message": map[string]any{"role": "user", "content": []any{map[string]any{
				"type": "tool_result", "tool_use_id": "toolu_sub_1", "content": full}}}}},
	} {
		uuid := fmt.Sprintf("0e2e0000-0000-4000-8000-00000000010%d", i)
		b, err := json.Marshal(map[string]any{"parentUuid": parent, "isSidechain": false, "userType": "external", "cwd": call0.Cwd,
			"sessionId": call0.SessionID, "version": call0.Version, "gitBranch": "", "type": "progress", "data": data,
			"toolUseID": fmt.Sprintf("bash-progress-%d", i), "parentToolUseID": call, "uuid": uuid,
			"timestamp": time.Now().UTC().Format(time.RFC3339Nano)})
		require.NoError(t, err)
		inserted = append(append(inserted, b...), '\n')
		parent = uuid
	}
	var out []byte
	for i, b := range lines {
		if i > at && parse(b).ParentUUID == call0.UUID {
			b = bytes.Replace(b, []byte(`"parentUuid":"`+call0.UUID+`"`), []byte(`"parentUuid":"`+parent+`"`), 1)
		}
		out = append(out, b...)
		if i == at {
			out = append(out, inserted...)
		}
	}
	require.NoError(t, os.WriteFile(session, out, 0o600))
}
