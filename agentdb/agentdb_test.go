package agentdb

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/transcript"
)

func TestOpen(t *testing.T) {
	state := t.TempDir()
	main := filepath.Join(state, "agents", "main", "agent", FileName)
	require.NoError(t, os.MkdirAll(filepath.Dir(main), 0o700))
	require.NoError(t, os.WriteFile(main, nil, 0o600))
	d, err := Open(filepath.Join(state, "agents", "main", "agent", ".", FileName))
	require.NoError(t, err)
	assert.Equal(t, main, d.Path)
	assert.Equal(t, "main", d.AgentID)
	assert.Equal(t, state, d.StateDir)
	assert.Equal(t, filepath.Dir(main), d.AgentDir())

	// A copy outside OpenClaw's layout has no state folder.
	lone := filepath.Join(t.TempDir(), FileName)
	require.NoError(t, os.WriteFile(lone, nil, 0o600))
	d, err = Open(lone)
	require.NoError(t, err)
	assert.Equal(t, "", d.StateDir)
	assert.Equal(t, "", d.AgentID)

	other := filepath.Join(state, "other.sqlite")
	require.NoError(t, os.WriteFile(other, nil, 0o600))
	_, err = Open(other)
	assert.ErrorContains(t, err, "not an OpenClaw agent database")
	_, err = Open(filepath.Dir(main))
	assert.ErrorContains(t, err, "not an OpenClaw agent database")
	_, err = Open(filepath.Join(state, "nothing", FileName))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestFetchExact(t *testing.T) {
	d := fixtureDB(t)
	ctx := context.Background()
	lines := fixtureLines()

	sessions, err := d.Sessions(ctx)
	require.NoError(t, err)
	require.Len(t, sessions, 3)
	for _, s := range sessions {
		want := jsonl(lines[s.ID])
		assert.Equal(t, sessionKeys[s.ID], s.Key)
		assert.EqualValues(t, len(lines[s.ID]), s.Rows, s.ID)
		assert.EqualValues(t, len(want)-len(lines[s.ID]), s.Bytes, s.ID)
		assert.False(t, s.Cold)
	}
	for id, want := range lines {
		var got bytes.Buffer
		snap, err := d.Fetch(ctx, id, &got)
		require.NoError(t, err)
		assert.Equal(t, string(jsonl(want)), got.String(), id)
		assert.Equal(t, len(want), snap.Rows())
	}
	_, err = d.Fetch(ctx, "66666666-6666-4666-8666-666666666666", &bytes.Buffer{})
	assert.ErrorIs(t, err, ErrNotFound)
}

// fetchFile fetches session id of d into a file of t's and returns the
// snapshot, the file and its lines.
func fetchFile(t *testing.T, d *Database, id string) (*Snapshot, string, []string) {
	t.Helper()
	var b bytes.Buffer
	snap, err := d.Fetch(context.Background(), id, &b)
	require.NoError(t, err)
	f := filepath.Join(t.TempDir(), id+".jsonl")
	require.NoError(t, os.WriteFile(f, b.Bytes(), 0o600))
	return snap, f, strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
}

// writeLines writes lines as a JSONL file of t's and returns its path.
func writeLines(t *testing.T, lines []string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "rewritten.jsonl")
	require.NoError(t, os.WriteFile(f, jsonl(lines), 0o600))
	return f
}

// migrated returns lines with the tool results of session A (lines 3 and
// 4) replaced as migrate replaces them: a short text, and the marker
// member an exact restore needs.
func migrated(lines []string) []string {
	out := append([]string(nil), lines...)
	for _, i := range []int{3, 4} {
		start := strings.Index(out[i], `"content":[`)
		end := strings.Index(out[i], `,"isError"`)
		out[i] = out[i][:start] + `"content":[{"type":"text","text":"[Tool result omitted: stored as artifact]"}]` +
			out[i][end:len(out[i])-2] + `},"transcriptTool":{"v":1}}`
	}
	return out
}

// state is what the tests read of OpenClaw's derived state of a session.
type state struct {
	generation      string
	updatedAt       int64
	needsRebuild    int64
	maintenanceRows int
}

func readState(t *testing.T, d *Database, id string) state {
	t.Helper()
	db := sqlDB(t, d.Path)
	var s state
	require.NoError(t, db.QueryRow(`SELECT w.generation, s.transcript_updated_at, i.needs_rebuild
		FROM session_windows AS s JOIN transcript_rewrite_watermarks AS w USING (session_id)
		JOIN session_transcript_index_state AS i USING (session_id) WHERE session_id = ?`, id).
		Scan(&s.generation, &s.updatedAt, &s.needsRebuild))
	require.NoError(t, sqlDB(t, d.stateDB()).QueryRow(`SELECT count(*) FROM state_leases WHERE scope = ?`, maintenanceScope).
		Scan(&s.maintenanceRows))
	return s
}

// checkIntegrity checks the database as SQLite does.
func checkIntegrity(t *testing.T, path string) {
	t.Helper()
	db := sqlDB(t, path)
	var ok string
	require.NoError(t, db.QueryRow("PRAGMA integrity_check").Scan(&ok))
	assert.Equal(t, "ok", ok)
	rows, err := db.Query("PRAGMA foreign_key_check")
	require.NoError(t, err)
	defer rows.Close()
	assert.False(t, rows.Next(), "foreign_key_check finds a violation")
}

func TestReplace(t *testing.T) {
	d := fixtureDB(t)
	ctx := context.Background()
	orig := fixtureLines()[sessionA]
	before := readState(t, d, sessionA)
	require.EqualValues(t, 0, before.needsRebuild)

	// OpenClaw's proof that the database is whole, which a change voids;
	// another database's stays.
	quarantine := sqlDB(t, filepath.Join(d.StateDir, "state", "openclaw-quarantine.sqlite"))
	_, err := quarantine.Exec(`INSERT INTO agent_integrity_verifications VALUES (?, '1', '1', '2026.9.6', 1, 1), ('/elsewhere', '2', '2', '2026.9.6', 1, 1)`, d.Path)
	require.NoError(t, err)

	snap, _, fetched := fetchFile(t, d, sessionA)
	require.Equal(t, orig, fetched)
	n, err := d.Replace(ctx, snap, writeLines(t, migrated(orig)))
	require.NoError(t, err)
	assert.Equal(t, 2, n)

	snap2, _, got := fetchFile(t, d, sessionA)
	assert.Equal(t, migrated(orig), got)
	_, _, other := fetchFile(t, d, sessionB)
	assert.Equal(t, fixtureLines()[sessionB], other)

	after := readState(t, d, sessionA)
	assert.NotEqual(t, before.generation, after.generation, "rewrite watermark rotated")
	assert.Greater(t, after.updatedAt, before.updatedAt)
	assert.EqualValues(t, 0, after.needsRebuild, "tool results are not searched: the projection holds")
	assert.Zero(t, after.maintenanceRows, "maintenance lease released")
	var proofs []string
	rows, err := quarantine.Query(`SELECT path FROM agent_integrity_verifications`)
	require.NoError(t, err)
	for rows.Next() {
		var p string
		require.NoError(t, rows.Scan(&p))
		proofs = append(proofs, p)
	}
	require.NoError(t, rows.Err())
	assert.Contains(t, proofs, "/elsewhere")
	assert.NotContains(t, proofs, d.Path)

	// The rewritten rows are identity text, as OpenClaw stores them.
	db := sqlDB(t, d.Path)
	for _, seq := range []int{3, 4} {
		var (
			text  string
			frame []byte
			size  int64
			nav   sql.NullString
		)
		require.NoError(t, db.QueryRow(`SELECT event_json, event_zstd, event_utf8_bytes, navigation_json FROM transcript_events
			WHERE session_id = ? AND seq = ?`, sessionA, seq).Scan(&text, &frame, &size, &nav))
		assert.Equal(t, migrated(orig)[seq], text)
		assert.Nil(t, frame)
		assert.EqualValues(t, len(text), size)
		assert.False(t, nav.Valid)
	}
	checkIntegrity(t, d.Path)

	// The original lines restore each row's exact event JSON.
	n, err = d.Replace(ctx, snap2, writeLines(t, orig))
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	for seq, line := range orig {
		var text string
		require.NoError(t, db.QueryRow(`SELECT coalesce(event_json, '') FROM transcript_events WHERE session_id = ? AND seq = ?`,
			sessionA, seq).Scan(&text))
		if seq == 3 || seq == 4 {
			assert.Equal(t, line, text, "row %d", seq)
		}
	}
	_, _, got = fetchFile(t, d, sessionA)
	assert.Equal(t, orig, got)
	checkIntegrity(t, d.Path)
}

func TestReplaceUnchanged(t *testing.T) {
	d := fixtureDB(t)
	before := readState(t, d, sessionA)
	snap, file, _ := fetchFile(t, d, sessionA)
	n, err := d.Replace(context.Background(), snap, file)
	require.NoError(t, err)
	assert.Zero(t, n)
	assert.Equal(t, before, readState(t, d, sessionA))
}

func TestReplaceChangedMeanwhile(t *testing.T) {
	for _, tc := range []struct {
		name, sql string
	}{
		{"row rewritten", `UPDATE transcript_events SET event_json = replace(event_json, 'run the workload', 'run it again'),
			event_utf8_bytes = event_utf8_bytes - 4 WHERE session_id = ? AND seq = 1`},
		{"row appended", `INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_utf8_bytes)
			VALUES (?, 6, '{"type":"custom","id":"a6","parentId":"a5"}', 0, 41)`},
		{"row deleted", `DELETE FROM transcript_events WHERE session_id = ? AND seq = 5`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := fixtureDB(t)
			before := readState(t, d, sessionA)
			snap, _, _ := fetchFile(t, d, sessionA)
			_, err := sqlDB(t, d.Path).Exec(tc.sql, sessionA)
			require.NoError(t, err)
			_, _, meanwhile := fetchFile(t, d, sessionA)

			_, err = d.Replace(context.Background(), snap, writeLines(t, migrated(fixtureLines()[sessionA])))
			assert.ErrorIs(t, err, ErrChanged)
			_, _, got := fetchFile(t, d, sessionA)
			assert.Equal(t, meanwhile, got, "the change made meanwhile stays, and only it")
			assert.Equal(t, before, readState(t, d, sessionA))
		})
	}
}

func TestReplaceBadFile(t *testing.T) {
	d := fixtureDB(t)
	orig := fixtureLines()[sessionA]
	snap, _, _ := fetchFile(t, d, sessionA)
	other := func(i int, line string) []string {
		out := append([]string(nil), orig...)
		out[i] = line
		return out
	}
	for _, tc := range []struct {
		name    string
		content []byte
		line    int
		want    string
	}{
		{"extra line", jsonl(append(append([]string(nil), orig...), "{}")), 7, "more lines than"},
		{"missing line", jsonl(orig[:5]), 6, "5 lines for the 6 rows"},
		{"no final line break", bytes.TrimSuffix(jsonl(orig), []byte("\n")), 6, "no line break"},
		{"not JSON", jsonl(other(2, `{"type":"message",`)), 3, "unexpected end of JSON"},
		{"not an object", jsonl(other(2, `["a2"]`)), 3, "not a JSON object"},
		{"not UTF-8", jsonl(other(5, strings.Replace(orig[5], "é", "\xe9", 1))), 6, "not UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "bad.jsonl")
			require.NoError(t, os.WriteFile(f, tc.content, 0o600))
			_, err := d.Replace(context.Background(), snap, f)
			var ie *transcript.InputError
			require.ErrorAs(t, err, &ie)
			assert.Equal(t, f, ie.Path)
			assert.Equal(t, tc.line, ie.Line)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	// Another entry in a row's place: its id differs.
	_, err := d.Replace(context.Background(), snap, writeLines(t, other(5, strings.Replace(orig[5], `"id":"a5"`, `"id":"a9"`, 1))))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "another entry than its row")
	_, _, got := fetchFile(t, d, sessionA)
	assert.Equal(t, orig, got)
}

func TestCorruptAndCold(t *testing.T) {
	d := fixtureDB(t)
	ctx := context.Background()
	db := sqlDB(t, d.Path)
	// A frame whose recorded length is wrong.
	_, err := db.Exec(`UPDATE transcript_events SET event_utf8_bytes = event_utf8_bytes + 1 WHERE session_id = ? AND event_zstd IS NOT NULL`, sessionA)
	require.NoError(t, err)
	_, err = d.Fetch(ctx, sessionA, &bytes.Buffer{})
	assert.ErrorIs(t, err, ErrCorrupt)
	assert.Contains(t, err.Error(), "row 3")

	_, err = db.Exec(`INSERT INTO session_transcript_cold_archives
		(session_id, generation, archive_name, archive_sha256, event_count, raw_bytes, archive_bytes, last_seq, archived_at, storage)
		VALUES (?, 'g', 'b.jsonl.zst', ?, 3, 10, 10, 2, 0, 'file')`, sessionB, strings.Repeat("0", 64))
	require.NoError(t, err)
	sessions, err := d.Sessions(ctx)
	require.NoError(t, err)
	require.Len(t, sessions, 3)
	assert.Equal(t, sessionB, sessions[1].ID)
	assert.True(t, sessions[1].Cold)
	_, err = d.Fetch(ctx, sessionB, &bytes.Buffer{})
	assert.ErrorIs(t, err, ErrCold)

	_, err = db.Exec(`PRAGMA user_version = 24`)
	require.NoError(t, err)
	_, err = d.Sessions(ctx)
	assert.ErrorIs(t, err, ErrUnknownSchema)
}

// errHeld returns err's *HeldError, failing t when it has none.
func errHeld(t *testing.T, err error) *HeldError {
	t.Helper()
	require.ErrorIs(t, err, ErrInUse)
	var h *HeldError
	require.True(t, errors.As(err, &h))
	return h
}
