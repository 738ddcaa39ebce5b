package migrate_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/agentdb"
	"github.com/transcript-tool/transcript-tool/internal/openclawgen"
	"github.com/transcript-tool/transcript-tool/migrate"
	"github.com/transcript-tool/transcript-tool/session"
	"github.com/transcript-tool/transcript-tool/store/local"
)

// appendAfterFetch is a session of an agent database to which OpenClaw
// appends an entry once the session was fetched, as a running agent does
// while a migration reads the rows.
type appendAfterFetch struct {
	session.Remote
	db, id string
}

func (a appendAfterFetch) Fetch(ctx context.Context, path string) (int64, error) {
	n, err := a.Remote.Fetch(ctx, path)
	if err == nil {
		err = openclawgen.Append(a.db, a.id, `{"type":"custom","customType":"late","id":"late","parentId":null,"timestamp":"2026-11-26T23:30:00.000Z"}`)
	}
	return n, err
}

// TestAgentDBAppended migrates the sessions of an OpenClaw database in
// place: one appended to while it was migrated fails alone, its rows as
// OpenClaw left them, with the error of a transcript that changed; the
// other is migrated and rehydrates to its rows exactly.
func TestAgentDBAppended(t *testing.T) {
	state := filepath.Join(t.TempDir(), ".openclaw")
	sessions := []openclawgen.Session{
		openclawgen.Workload("11111111-1111-4111-8111-111111111111", "agent:main:main", 2, 9000),
		openclawgen.Workload("22222222-2222-4222-8222-222222222222", "agent:main:other", 2, 9000),
	}
	require.NoError(t, openclawgen.Write(state, "main", sessions))
	db := openclawgen.DBPath(state, "main")
	inputs, err := session.Collect([]string{state})
	require.NoError(t, err)
	require.Len(t, inputs, 2)
	copies := t.TempDir()
	require.NoError(t, session.Place(inputs, func() (string, error) { return copies, nil }))
	inputs[0].Remote = appendAfterFetch{Remote: inputs[0].Remote, db: db, id: sessions[0].ID}

	sum := migrate.Run(context.Background(), inputs, migrate.Options{OpenStore: local.Open})
	assert.Equal(t, 1, sum.Migrated)
	require.Equal(t, 1, sum.Failed)
	var failed error
	for _, r := range sum.Results {
		if r.Status == migrate.StatusFailed {
			failed = r.Err
			assert.Equal(t, "sqlite://"+db+"#"+sessions[0].ID, r.Path)
		}
	}
	assert.True(t, errors.Is(failed, session.ErrSourceChanged), "%v", failed)
	assert.ErrorContains(t, failed, "session changed since it was fetched; left as it is")

	fresh, err := session.Collect([]string{db})
	require.NoError(t, err)
	require.NoError(t, session.Place(fresh, func() (string, error) { return t.TempDir(), nil }))
	for i, in := range fresh {
		_, err := in.Remote.Fetch(context.Background(), in.Path)
		require.NoError(t, err)
		got, err := os.ReadFile(in.Path)
		require.NoError(t, err)
		want := strings.Join(sessions[i].Lines, "\n") + "\n"
		if i == 0 {
			want += `{"type":"custom","customType":"late","id":"late","parentId":null,"timestamp":"2026-11-26T23:30:00.000Z"}` + "\n"
			assert.Equal(t, want, string(got)) // as OpenClaw left it
			continue
		}
		assert.NotEqual(t, want, string(got))
		var out strings.Builder
		require.NoError(t, migrate.RehydrateTo(context.Background(), &out, in, "", local.Open, nil))
		assert.Equal(t, want, out.String())
	}
}

// TestAgentDBHeld migrates in place a session of an OpenClaw database
// that a live OpenClaw process holds (a lease of its own on the database,
// in the state database): the session is refused before it is fetched,
// so that the store stays as it was, with no artifact and no record; once
// the lease is gone, it is migrated. Before, its artifacts were stored
// and only the replace was refused.
func TestAgentDBHeld(t *testing.T) {
	state := filepath.Join(t.TempDir(), ".openclaw")
	sess := openclawgen.Workload("33333333-3333-4333-8333-333333333333", "agent:main:main", 2, 9000)
	require.NoError(t, openclawgen.Write(state, "main", []openclawgen.Session{sess}))
	db := openclawgen.DBPath(state, "main")
	stateDB, err := sql.Open("sqlite", filepath.Join(state, "state", "openclaw.sqlite"))
	require.NoError(t, err)
	defer stateDB.Close()
	_, err = stateDB.Exec(`INSERT INTO agent_database_leases (lease_id, agent_id, path, owner_pid, owner_start_time, opened_at)
		VALUES ('live', 'main', ?, ?, NULL, 0)`, db, os.Getpid())
	require.NoError(t, err)

	run := func() migrate.Summary {
		inputs, err := session.Collect([]string{state})
		require.NoError(t, err)
		require.Len(t, inputs, 1)
		require.NoError(t, session.Place(inputs, func() (string, error) { return t.TempDir(), nil }))
		return migrate.Run(context.Background(), inputs, migrate.Options{OpenStore: local.Open})
	}
	sum := run()
	require.Equal(t, 1, sum.Failed)
	assert.ErrorIs(t, sum.Results[0].Err, agentdb.ErrInUse)
	assert.Zero(t, sum.Written+sum.Deduplicated)
	entries, err := os.ReadDir(filepath.Dir(db))
	require.NoError(t, err)
	for _, e := range entries {
		assert.NotEqual(t, "artifacts", e.Name(), "the store was written to")
	}

	_, err = stateDB.Exec(`DELETE FROM agent_database_leases`)
	require.NoError(t, err)
	sum = run()
	assert.Equal(t, 1, sum.Migrated, "%+v", sum.Results)
	assert.Positive(t, sum.Written)
}
