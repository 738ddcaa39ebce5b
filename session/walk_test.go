package session_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/session"
)

// touch makes the file path, and its folders, holding one empty entry.
func touch(t *testing.T, path string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte("{}\n"), 0o644))
}

func TestCollect(t *testing.T) {
	root := t.TempDir()
	for _, rel := range []string{
		"a.jsonl", "sub/b.jsonl", "sub/deep/c.jsonl", // the transcripts
		"artifacts/registry.jsonl", "artifacts/objects/aa/x.jsonl", // the default store
		"sub/mystore/registry.jsonl", "sub/mystore/old.jsonl", // a store by its content
		"sub/segstore/registry/w.jsonl", "sub/segstore/lock", "sub/segstore/old.jsonl", // a store by its segments
		"sub/notstore/registry/r.jsonl",    // a folder with a "registry" folder is no store
		"sub/artifacts/objects/aa/y.jsonl", // a default store before its registry
		"sub/objects/d.jsonl",              // not a store: no registry, another name
		".hidden.jsonl", ".git/x.jsonl",    // hidden
		".a.jsonl.tmp-123", "a.jsonl.tmp-456", // temporary files
		"a.jsonl.bak", "notes.txt", "JSONL", "sub/c.json", // not *.jsonl
	} {
		touch(t, filepath.Join(root, rel))
	}
	require.NoError(t, os.Symlink("a.jsonl", filepath.Join(root, "link.jsonl")))
	require.NoError(t, os.Symlink("sub", filepath.Join(root, "linkdir")))
	require.NoError(t, os.Symlink("missing.jsonl", filepath.Join(root, "dangling.jsonl")))

	rels := func(inputs []session.Input) []string {
		var s []string
		for _, in := range inputs {
			s = append(s, fmt.Sprintf("%s explicit=%v", in.Rel, in.Explicit))
		}
		return s
	}

	t.Run("walk", func(t *testing.T) {
		inputs, err := session.Collect([]string{root})
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{
			"a.jsonl explicit=false",
			filepath.Join("sub", "b.jsonl") + " explicit=false",
			filepath.Join("sub", "deep", "c.jsonl") + " explicit=false",
			filepath.Join("sub", "objects", "d.jsonl") + " explicit=false",
			filepath.Join("sub", "notstore", "registry", "r.jsonl") + " explicit=false",
		}, rels(inputs))
		for _, in := range inputs {
			assert.Equal(t, filepath.Join(root, in.Rel), in.Path)
			assert.Equal(t, int64(3), in.Size)
		}
	})
	t.Run("inside a store", func(t *testing.T) {
		// A store named, or anything in one, is refused: its objects and
		// segments are never transcripts, whatever their text.
		for p, store := range map[string]string{
			"sub/segstore": "sub/segstore", "sub/mystore": "sub/mystore",
			"sub/segstore/registry/w.jsonl": "sub/segstore", "sub/mystore/old.jsonl": "sub/mystore",
			"artifacts/objects/aa/x.jsonl": "artifacts", "artifacts/objects": "artifacts",
			"sub/artifacts/objects/aa/y.jsonl": "sub/artifacts",
		} {
			_, err := session.Collect([]string{filepath.Join(root, p)})
			var ise *session.InStoreError
			require.ErrorAs(t, err, &ise, p)
			assert.Equal(t, filepath.Join(root, store), ise.Store, p)
		}
	})
	t.Run("named twice", func(t *testing.T) {
		a := filepath.Join(root, "a.jsonl")
		inputs, err := session.Collect([]string{a, root, a, filepath.Join(root, "sub", "..", "a.jsonl")})
		require.NoError(t, err)
		assert.Equal(t, []string{"a.jsonl explicit=true"}, rels(inputs[:1]))
		assert.Len(t, inputs, 5)
	})
	t.Run("named file", func(t *testing.T) {
		inputs, err := session.Collect([]string{filepath.Join(root, "notes.txt")})
		require.NoError(t, err)
		assert.Equal(t, []string{"notes.txt explicit=true"}, rels(inputs), "a named file is taken whatever its name")
	})
	t.Run("missing", func(t *testing.T) {
		_, err := session.Collect([]string{root, filepath.Join(root, "nope.jsonl")})
		assert.ErrorIs(t, err, fs.ErrNotExist)
	})
	t.Run("not a regular file", func(t *testing.T) {
		_, err := session.Collect([]string{os.DevNull})
		assert.ErrorContains(t, err, "not a regular file")
	})
}

func TestCollectSymlinkArguments(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	require.NoError(t, os.MkdirAll(real, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(real, "s.jsonl"), []byte("{}\n"), 0o644))
	require.NoError(t, os.Symlink(real, filepath.Join(dir, "linkdir")))
	require.NoError(t, os.Symlink(filepath.Join(real, "s.jsonl"), filepath.Join(dir, "link.jsonl")))

	inputs, err := session.Collect([]string{filepath.Join(dir, "linkdir")})
	require.NoError(t, err)
	require.Len(t, inputs, 1, "a linked directory named on the command line is walked")
	assert.Equal(t, "s.jsonl", inputs[0].Rel)

	// A linked file named on the command line is the file it names: that
	// is what is rewritten, so the link keeps naming the transcript.
	inputs, err = session.Collect([]string{filepath.Join(dir, "link.jsonl")})
	require.NoError(t, err)
	require.Len(t, inputs, 1)
	assert.Equal(t, filepath.Join(real, "s.jsonl"), inputs[0].Path)
	assert.Equal(t, "link.jsonl", inputs[0].Rel)
}

// TestCollectAgentHomes: the agents' hidden homes are searched when named
// or found under a PATH, but only their session folders: prompt
// histories and logs beside them, OpenClaw's trajectories and other
// hidden folders are not transcripts.
func TestCollectAgentHomes(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{
		".claude/projects/-w/s.jsonl", ".claude/projects/-w/s/subagents/agent-1.jsonl", ".claude/history.jsonl",
		".codex/sessions/2026/11/25/rollout-a.jsonl", ".codex/archived_sessions/rollout-b.jsonl", ".codex/history.jsonl",
		".pi/agent/sessions/--w--/p.jsonl", ".pi/agent/settings.jsonl",
		".openclaw/agents/main/sessions/o.jsonl", ".openclaw/agents/main/sessions/o.trajectory.jsonl", ".openclaw/cron/runs/r.jsonl",
		".gemini/tmp/w/chats/session-a.jsonl", ".gemini/tmp/w/chats/s/sub.jsonl", ".gemini/tmp/w/logs.jsonl",
		".qwen/projects/-w/chats/q.jsonl", ".qwen/projects/-w/subagents/q/agent-a.jsonl", ".qwen/debug/d.jsonl",
		".cache/x.jsonl", "work/w.jsonl",
	} {
		touch(t, filepath.Join(root, f))
	}
	rels := func(path string) []string {
		inputs, err := session.Collect([]string{path})
		require.NoError(t, err)
		var got []string
		for _, in := range inputs {
			got = append(got, filepath.ToSlash(in.Rel))
		}
		slices.Sort(got)
		return got
	}
	assert.Equal(t, []string{
		".claude/projects/-w/s.jsonl", ".claude/projects/-w/s/subagents/agent-1.jsonl",
		".codex/archived_sessions/rollout-b.jsonl", ".codex/sessions/2026/11/25/rollout-a.jsonl",
		".gemini/tmp/w/chats/s/sub.jsonl", ".gemini/tmp/w/chats/session-a.jsonl",
		".openclaw/agents/main/sessions/o.jsonl", ".pi/agent/sessions/--w--/p.jsonl",
		".qwen/projects/-w/chats/q.jsonl", ".qwen/projects/-w/subagents/q/agent-a.jsonl", "work/w.jsonl",
	}, rels(root))
	assert.Equal(t, []string{"projects/-w/s.jsonl", "projects/-w/s/subagents/agent-1.jsonl"}, rels(filepath.Join(root, ".claude")))
}
