package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/agentdb"
)

// openclawPin is the OpenClaw the tests drive: it keeps sessions in
// SQLite (since 2026.8) and needs Node 24.
const openclawPin = "openclaw@2026.9.6"

// openclawTimeout bounds one run of OpenClaw: on two shared cores one
// `agent --local` takes one to three minutes, most of it its own start.
const openclawTimeout = 6 * time.Minute

// openclawTools are OpenClaw's shell and read-file tools.
var openclawTools = agentTools{
	Shell: func(command string) toolCall {
		return toolCall{Name: "exec", Input: map[string]any{"command": command}}
	},
	Read: func(path string) toolCall {
		return toolCall{Name: "read", Input: map[string]any{"path": path}}
	},
}

// TestOpenClaw has OpenClaw write a session into its agent database
// against the stand-in, migrates the state folder ~/.openclaw in place
// with the defaults, checks that rehydrate gives back every row's JSON,
// and resumes the session by its key with `openclaw agent --local`, as
// its unmigrated twin: the migrated one sends at most a quarter of the
// bytes, and OpenClaw's read tool opens the placeholder's path.
func TestOpenClaw(t *testing.T) {
	forEachPin(t, openclawPin, func(t *testing.T, pin string) {
		oc := findAgent(t, pin, "openclaw")
		root := t.TempDir()
		w := newWorkload(t, root, 6)
		home := filepath.Join(root, "home")
		api := newAnthropicAPI(t, w.script(openclawTools))
		configureOpenClaw(t, home, api.URL(), w.Dir)
		run := func(home, prompt string, extra ...string) {
			args := append([]string{"agent", "--local", "--agent", "main", "--message", prompt, "--json"}, extra...)
			runAgent(t, oc, w.Dir, []string{"HOME=" + home}, openclawTimeout, args...)
		}
		run(home, setupPrompt)

		state := filepath.Join(home, ".openclaw")
		db := filepath.Join(state, "agents", "main", "agent", agentdb.FileName)
		twinHome := filepath.Join(root, "twin-home")
		copyTree(t, home, twinHome)
		twinDB := filepath.Join(twinHome, ".openclaw", "agents", "main", "agent", agentdb.FileName)
		rows := sessionRows(t, twinDB)
		require.Len(t, rows, 1, "OpenClaw should have written one session")
		before := dbSize(t, db)

		t.Logf("migrate: %s", runTool(t, "migrate", state))
		t.Logf("database: %d bytes, %d migrated (with its WAL)", before, dbSize(t, db))
		for id, want := range rows {
			name := "sqlite://" + db + "#" + id
			assert.Equal(t, string(want), string(runTool(t, "rehydrate", name)), "rehydrate %s", name)
			got := sessionRows(t, db)[id]
			assert.Less(t, len(got), len(want), "migrate did not shrink the session's rows")
		}

		resume := func(name, home string) resumeRun {
			return resumeRun{Name: name, Requests: api.During(func() { run(home, recallPrompt, "--session-key", "agent:main:main") })}
		}
		migratedRows := sessionRows(t, db)
		twin := resume("unmigrated", twinHome)
		migrated := resume("migrated", home)
		checkResumes(t, w, twin, migrated, 0.25)

		// OpenClaw appended to the migrated session and rewrote none of
		// its rows, so every reference still resolves.
		for id, before := range migratedRows {
			assert.True(t, bytes.HasPrefix(sessionRows(t, db)[id], before), "OpenClaw rewrote the migrated session %s", id)
		}
		t.Logf("verify: %s", runTool(t, "verify", state))
	})
}

// configureOpenClaw writes the OpenClaw configuration of home, whose
// state folder is home/.openclaw: a provider of its own speaking the
// Messages API at url, with image input, as the only model, and the
// project folder as the agent's workspace, with OpenClaw's default tools
// and context: about 67 KB of every request are the same whatever the
// session holds, so the workloads that resume take several large outputs.
func configureOpenClaw(t *testing.T, home, url, project string) {
	t.Helper()
	config := map[string]any{
		"models": map[string]any{"mode": "replace", "providers": map[string]any{"standin": map[string]any{
			"baseUrl": url, "apiKey": "x", "api": "anthropic-messages",
			"models": []any{map[string]any{"id": "standin-model", "name": "Stand-in", "input": []string{"text", "image"},
				"contextWindow": 200000, "maxTokens": 8000,
				"cost": map[string]any{"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}},
		}}},
		"agents": map[string]any{"defaults": map[string]any{
			"model": map[string]any{"primary": "standin/standin-model"}, "workspace": project,
			"skipBootstrap": true}},
	}
	b, err := json.Marshal(config)
	require.NoError(t, err)
	dir := filepath.Join(home, ".openclaw")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "openclaw.json"), b, 0o600))
}

// sessionRows returns the rows of every session of the agent database at
// path, as the JSONL lines transcript-tool reads them, by session id.
func sessionRows(t *testing.T, path string) map[string][]byte {
	t.Helper()
	d, err := agentdb.Open(path)
	require.NoError(t, err)
	ctx := context.Background()
	sessions, err := d.Sessions(ctx)
	require.NoError(t, err)
	out := map[string][]byte{}
	for _, s := range sessions {
		var b bytes.Buffer
		_, err := d.Fetch(ctx, s.ID, &b)
		require.NoError(t, err)
		out[s.ID] = b.Bytes()
	}
	return out
}

// dbSize returns the size of the database at path with its WAL.
func dbSize(t *testing.T, path string) int64 {
	t.Helper()
	n := fileSize(t, path)
	if fi, err := os.Stat(path + "-wal"); err == nil {
		n += fi.Size()
	}
	return n
}
