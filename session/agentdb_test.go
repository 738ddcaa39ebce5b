package session

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/agentdb"
	"github.com/transcript-tool/transcript-tool/internal/openclawgen"
)

// testState writes an OpenClaw state folder whose main agent has two
// sessions, in a home folder's .openclaw, and returns the home.
func testState(t *testing.T) (home string, sessions []openclawgen.Session) {
	t.Helper()
	home = t.TempDir()
	sessions = []openclawgen.Session{
		openclawgen.Workload("11111111-1111-4111-8111-111111111111", "agent:main:main", 2, 9000),
		openclawgen.Workload("22222222-2222-4222-8222-222222222222", "agent:main:other", 1, 100),
	}
	require.NoError(t, openclawgen.Write(filepath.Join(home, ".openclaw"), "main", sessions))
	return home, sessions
}

// TestCollectAgentDB finds the sessions of an agent database however it
// is named: the home, the state folder, the agent folder, the file; each
// once, as an input whose Remote fetches its rows as lines.
func TestCollectAgentDB(t *testing.T) {
	home, sessions := testState(t)
	state := filepath.Join(home, ".openclaw")
	db := openclawgen.DBPath(state, "main")
	for _, tc := range []struct {
		paths []string
		rel   string
	}{
		{[]string{home}, filepath.Join(".openclaw", "agents", "main", "agent")},
		{[]string{state}, filepath.Join("agents", "main", "agent")},
		{[]string{filepath.Dir(db)}, ""},
		{[]string{db, state}, ""},
	} {
		inputs, err := Collect(tc.paths)
		require.NoError(t, err, tc.paths)
		require.Len(t, inputs, 2, tc.paths)
		for i, in := range inputs {
			assert.Equal(t, "sqlite://"+db+"#"+sessions[i].ID, in.Name())
			assert.Equal(t, filepath.Join(tc.rel, sessions[i].ID+".jsonl"), in.Rel)
			assert.Equal(t, filepath.Join(filepath.Dir(db), "artifacts"), in.Store)
			assert.Equal(t, "", in.Path)
		}
	}
	assert.Equal(t, []string{filepath.Join(state, "agents", "main", "agent")}, Folders(home))

	inputs, err := Collect([]string{db})
	require.NoError(t, err)
	dir := t.TempDir()
	calls := 0
	require.NoError(t, Place(inputs, func() (string, error) { calls++; return dir, nil }))
	assert.Equal(t, 2, calls)
	fetched, failed := FetchAll(context.Background(), inputs, 2)
	require.Empty(t, failed)
	for i, in := range fetched {
		assert.True(t, strings.HasPrefix(in.Path, filepath.Join(dir, "sqlite")+string(filepath.Separator)), in.Path)
		b, err := os.ReadFile(in.Path)
		require.NoError(t, err)
		assert.Equal(t, strings.Join(sessions[i].Lines, "\n")+"\n", string(b))
		assert.Equal(t, int64(len(b)), in.Size)
	}
}

// TestCollectAgentDBSession finds the one session sqlite://DB#SESSION
// names, and refuses one the database does not hold, or a DB that is no
// agent's database by the name its agent's declaration gives it.
func TestCollectAgentDBSession(t *testing.T) {
	home, sessions := testState(t)
	db := openclawgen.DBPath(filepath.Join(home, ".openclaw"), "main")
	inputs, err := Collect([]string{DBScheme + db + "#" + sessions[1].ID})
	require.NoError(t, err)
	require.Len(t, inputs, 1)
	assert.Equal(t, DBScheme+db+"#"+sessions[1].ID, inputs[0].Name())
	assert.True(t, inputs[0].Explicit)

	_, err = Collect([]string{DBScheme + db + "#nothing"})
	assert.ErrorIs(t, err, agentdb.ErrNotFound)
	other := filepath.Join(home, "openclaw.sqlite")
	require.NoError(t, os.WriteFile(other, nil, 0o600))
	for _, path := range []string{other, filepath.Dir(db)} {
		_, err = Collect([]string{DBScheme + path + "#" + sessions[1].ID})
		assert.EqualError(t, err, path+": not an OpenClaw agent database (a file named openclaw-agent.sqlite)")
	}
}

// TestAgentDBReplace puts a rewritten copy back, and refuses it, changing
// nothing, once OpenClaw appended to the session since it was fetched,
// as it refuses a backup.
func TestAgentDBReplace(t *testing.T) {
	home, sessions := testState(t)
	db := openclawgen.DBPath(filepath.Join(home, ".openclaw"), "main")
	inputs, err := Collect([]string{db})
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, Place(inputs, func() (string, error) { return dir, nil }))
	ctx := context.Background()
	in := inputs[0]
	_, err = in.Remote.Fetch(ctx, in.Path)
	require.NoError(t, err)
	lines := append([]string(nil), sessions[0].Lines...)
	for i, l := range lines {
		if strings.Contains(l, `"role":"toolResult"`) {
			lines[i] = strings.Replace(l, "file1.txt line 1:", "FILE1.TXT LINE 1:", 1)
		}
	}
	require.NoError(t, os.WriteFile(in.Path, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	err = in.Remote.Replace(ctx, in.Path, true)
	assert.ErrorContains(t, err, "--backup keeps no copy")
	require.NoError(t, in.Remote.Replace(ctx, in.Path, false))
	_, err = in.Remote.Fetch(ctx, in.Path)
	require.NoError(t, err)
	got, err := os.ReadFile(in.Path)
	require.NoError(t, err)
	assert.Equal(t, strings.Join(lines, "\n")+"\n", string(got))

	// Appended to after the fetch: refused, the rows as OpenClaw left them.
	require.NoError(t, os.WriteFile(in.Path, []byte(strings.Join(sessions[0].Lines, "\n")+"\n"), 0o600))
	appended := `{"type":"custom","customType":"late","id":"late","parentId":null,"timestamp":"2026-11-26T23:21:00.000Z"}`
	require.NoError(t, openclawgen.Append(db, sessions[0].ID, appended))
	err = in.Remote.Replace(ctx, in.Path, false)
	require.ErrorIs(t, err, ErrSourceChanged)
	assert.ErrorContains(t, err, "session changed since it was fetched; left as it is")
	_, err = in.Remote.Fetch(ctx, in.Path)
	require.NoError(t, err)
	got, err = os.ReadFile(in.Path)
	require.NoError(t, err)
	assert.Equal(t, strings.Join(append(lines, appended), "\n")+"\n", string(got))
}

// TestAgentDBOwner replaces a session of a database another user owns,
// as root may: the database and the files SQLite keeps beside it keep
// that user and the database its mode.
func TestAgentDBOwner(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("only root can give a file to another user")
	}
	home, sessions := testState(t)
	db := openclawgen.DBPath(filepath.Join(home, ".openclaw"), "main")
	require.NoError(t, os.Chown(db, 4321, 4322))
	require.NoError(t, os.Chmod(db, 0o640))
	inputs, err := Collect([]string{db})
	require.NoError(t, err)
	require.NoError(t, Place(inputs, func() (string, error) { return t.TempDir(), nil }))
	ctx := context.Background()
	in := inputs[0]
	_, err = in.Remote.Fetch(ctx, in.Path)
	require.NoError(t, err)
	lines := strings.Join(sessions[0].Lines, "\n") + "\n"
	require.NoError(t, os.WriteFile(in.Path, []byte(strings.Replace(lines, "file1.txt line 1:", "FILE1.TXT LINE 1:", 1)), 0o600))
	require.NoError(t, in.Remote.Replace(ctx, in.Path, false))
	found, _ := filepath.Glob(db + "*")
	require.NotEmpty(t, found)
	for _, f := range found {
		fi, err := os.Stat(f)
		require.NoError(t, err)
		st := fi.Sys().(*syscall.Stat_t)
		assert.Equal(t, [2]uint32{4321, 4322}, [2]uint32{st.Uid, st.Gid}, f)
	}
	fi, err := os.Stat(db)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
}

// TestAgentDBLegacyStore: once OpenClaw's doctor --fix imported JSONL
// sessions that transcript-tool had migrated, their rows refer to the
// store of agents/<id>/sessions, which then serves the database's
// sessions; without it, artifacts/ beside the database does.
func TestAgentDBLegacyStore(t *testing.T) {
	home, _ := testState(t)
	agent := filepath.Join(home, ".openclaw", "agents", "main")
	inputs, err := Collect([]string{home})
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(agent, "agent", "artifacts"), inputs[0].Store)

	// A folder so named that is no store changes nothing.
	require.NoError(t, os.MkdirAll(filepath.Join(agent, "sessions", "artifacts"), 0o700))
	inputs, err = Collect([]string{home})
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(agent, "agent", "artifacts"), inputs[0].Store)

	require.NoError(t, os.MkdirAll(filepath.Join(agent, "sessions", "artifacts", "objects"), 0o700))
	inputs, err = Collect([]string{home})
	require.NoError(t, err)
	require.Len(t, inputs, 2)
	for _, in := range inputs {
		assert.Equal(t, filepath.Join(agent, "sessions", "artifacts"), in.Store)
	}
}
