package migrate_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
