package openclawgen

import (
	"bytes"
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/agentdb"
)

// TestWrite reads a written database back as the tool does: every
// session's lines exactly, large results as zstd frames.
func TestWrite(t *testing.T) {
	state := t.TempDir()
	a := Workload("11111111-1111-4111-8111-111111111111", "agent:main:main", 3, 20000)
	b := Workload("22222222-2222-4222-8222-222222222222", "agent:main:other", 1, 100)
	require.NoError(t, Write(state, "main", []Session{a, b}))
	d, err := agentdb.Open(DBPath(state, "main"))
	require.NoError(t, err)
	sessions, err := d.Sessions(context.Background())
	require.NoError(t, err)
	require.Len(t, sessions, 2)
	for i, s := range []Session{a, b} {
		assert.Equal(t, s.ID, sessions[i].ID)
		assert.Equal(t, s.Key, sessions[i].Key)
		var buf bytes.Buffer
		_, err := d.Fetch(context.Background(), s.ID, &buf)
		require.NoError(t, err)
		assert.Equal(t, strings.Join(s.Lines, "\n")+"\n", buf.String())
	}
	db, err := sql.Open("sqlite", DBPath(state, "main"))
	require.NoError(t, err)
	defer db.Close()
	var frames, fts int
	require.NoError(t, db.QueryRow(`SELECT (SELECT count(event_zstd) FROM transcript_events), (SELECT count(*) FROM session_transcript_fts)`).Scan(&frames, &fts))
	assert.Equal(t, 3, frames)
	assert.Equal(t, 4, fts) // the request and "Done." of each
}
