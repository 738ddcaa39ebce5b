package agentstate

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	threadA = "01a21453-e78e-72b0-a8ce-8367cce475c9"
	threadB = "01a21454-909c-7b80-96ba-54a6cb6c637a"
)

// codexHome builds a CODEX_HOME with a rollout of threadA and a thread
// history database made from the schema Codex 0.169.0 wrote, in WAL mode
// as Codex opens it, holding a projection of threadA and threadB.
func codexHome(t *testing.T) (home, rollout string) {
	t.Helper()
	home = t.TempDir()
	rollout = filepath.Join(home, "sessions", "2026", "11", "25", "rollout-2026-11-25T20-09-32-"+threadA+".jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(rollout), 0o755))
	require.NoError(t, os.WriteFile(rollout, []byte("{}\n"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(home, writerLocks), 0o755))

	schema, err := os.ReadFile(filepath.Join("testdata", "codex-0.169.0-thread_history_1.sql"))
	require.NoError(t, err)
	db := openDB(t, home)
	_, err = db.Exec("PRAGMA journal_mode = WAL")
	require.NoError(t, err)
	_, err = db.Exec(string(schema))
	require.NoError(t, err)
	for _, id := range []string{threadA, threadB} {
		_, err = db.Exec(`
			INSERT INTO thread_history_projection_state VALUES (?1, 171960, 19);
			INSERT INTO thread_turns (thread_id, turn_id, rollout_ordinal, status, rollout_byte_offset, rollout_end_ordinal, rollout_end_byte_offset)
				VALUES (?1, 'turn-1', 1, 'completed', 21871, 18, 171960);
			INSERT INTO thread_items (thread_id, turn_id, item_id, rollout_ordinal, created_at_ms, item_json, item_type)
				VALUES (?1, 'turn-1', 'call_big', 11, 0, '{"type":"commandExecution"}', 'commandExecution');
			INSERT INTO thread_realtime_items VALUES (?1, 'rt-1', 12, 0, 'realtime_session_started', '{}');`, id)
		require.NoError(t, err)
	}
	return home, rollout
}

func openDB(t *testing.T, home string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(home, historyDB))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// rowCounts returns, per table holding threads, the rows of thread id.
func rowCounts(t *testing.T, db *sql.DB, id string) map[string]int {
	t.Helper()
	counts := map[string]int{}
	for _, table := range []string{projectionState, "thread_turns", "thread_items", "thread_realtime_items"} {
		var n int
		require.NoError(t, db.QueryRow(`SELECT count(*) FROM `+table+` WHERE thread_id = ?`, id).Scan(&n))
		counts[table] = n
	}
	return counts
}

func TestFindCodexThread(t *testing.T) {
	home, rollout := codexHome(t)
	archived := filepath.Join(home, "archived_sessions", "rollout-2026-11-25T20-09-32-"+threadB+".jsonl.zst")
	other := t.TempDir()
	tests := []struct {
		name string
		path string
		want *CodexThread
	}{
		{"rollout", rollout, &CodexThread{Home: home, ID: threadA, Rollout: rollout}},
		{"archived and compressed", archived, &CodexThread{Home: home, ID: threadB, Rollout: archived}},
		{"not a rollout name", filepath.Join(home, "sessions", "2026", "11", "25", "notes.jsonl"), nil},
		{"not a UUID", filepath.Join(home, "sessions", "rollout-2026-11-25T20-09-32-../../x.jsonl"), nil},
		{"outside sessions", filepath.Join(home, "rollout-2026-11-25T20-09-32-"+threadA+".jsonl"), nil},
		{"no thread history", filepath.Join(other, "sessions", "rollout-2026-11-25T20-09-32-"+threadA+".jsonl"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FindCodexThread(tt.path)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}

	t.Run("relative path", func(t *testing.T) {
		t.Chdir(filepath.Join(home, "sessions", "2026"))
		got, err := FindCodexThread(filepath.Join("11", "25", filepath.Base(rollout)))
		require.NoError(t, err)
		assert.Equal(t, &CodexThread{Home: home, ID: threadA, Rollout: rollout}, got)
	})
}

func TestResetHistoryDeletesOnlyTheThread(t *testing.T) {
	home, rollout := codexHome(t)
	th, err := FindCodexThread(rollout)
	require.NoError(t, err)
	require.NotNil(t, th)

	require.NoError(t, th.ResetHistory(context.Background()))

	db := openDB(t, home)
	assert.Equal(t, map[string]int{projectionState: 0, "thread_turns": 0, "thread_items": 0, "thread_realtime_items": 0},
		rowCounts(t, db, threadA))
	assert.Equal(t, map[string]int{projectionState: 1, "thread_turns": 1, "thread_items": 1, "thread_realtime_items": 1},
		rowCounts(t, db, threadB), "another thread's history is kept")
	var mode string
	require.NoError(t, db.QueryRow("PRAGMA journal_mode").Scan(&mode))
	assert.Equal(t, "wal", mode, "the journal mode Codex chose is kept")

	require.NoError(t, th.ResetHistory(context.Background()), "a reset thread resets again")
}

// TestResetHistoryTableAddedLater checks that a table a later Codex adds
// to the projection, with a thread_id column, is reset too.
func TestResetHistoryTableAddedLater(t *testing.T) {
	home, rollout := codexHome(t)
	db := openDB(t, home)
	_, err := db.Exec(`CREATE TABLE thread_future (thread_id TEXT NOT NULL, byte_offset INTEGER);
		INSERT INTO thread_future VALUES (?1, 1), (?2, 2)`, threadA, threadB)
	require.NoError(t, err)

	require.NoError(t, (&CodexThread{Home: home, ID: threadA, Rollout: rollout}).ResetHistory(context.Background()))

	var ids []string
	rows, err := db.Query(`SELECT thread_id FROM thread_future`)
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var id string
		require.NoError(t, rows.Scan(&id))
		ids = append(ids, id)
	}
	require.NoError(t, rows.Err())
	assert.Equal(t, []string{threadB}, ids)
}

func TestResetHistoryRefusesUnknownSchema(t *testing.T) {
	home, rollout := codexHome(t)
	db := openDB(t, home)
	_, err := db.Exec(`DROP TABLE thread_history_projection_state`)
	require.NoError(t, err)

	err = (&CodexThread{Home: home, ID: threadA, Rollout: rollout}).ResetHistory(context.Background())
	require.ErrorIs(t, err, ErrUnknownSchema)
	assert.ErrorContains(t, err, filepath.Join(home, historyDB))
	var turns int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM thread_turns WHERE thread_id = ?`, threadA).Scan(&turns))
	assert.Equal(t, 1, turns, "nothing is deleted")
}

func TestResetHistoryWaitsForCodexWriteLock(t *testing.T) {
	home, rollout := codexHome(t)
	th := &CodexThread{Home: home, ID: threadA, Rollout: rollout}
	old := BusyTimeout
	BusyTimeout = 200 * time.Millisecond
	t.Cleanup(func() { BusyTimeout = old })

	// A Codex process in the middle of a write holds the write lock.
	db := openDB(t, home)
	conn, err := db.Conn(context.Background())
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(context.Background(), "BEGIN IMMEDIATE")
	require.NoError(t, err)

	err = th.ResetHistory(context.Background())
	require.ErrorIs(t, err, ErrBusy, "a lock held past the busy timeout fails the reset")

	// Released within the busy timeout, the reset waits and succeeds.
	BusyTimeout = 5 * time.Second
	go func() {
		time.Sleep(100 * time.Millisecond)
		conn.ExecContext(context.Background(), "COMMIT")
	}()
	require.NoError(t, th.ResetHistory(context.Background()))
	assert.Equal(t, 0, rowCounts(t, db, threadA)[projectionState])
}

func TestResetHistoryMissingDatabase(t *testing.T) {
	home := t.TempDir()
	err := (&CodexThread{Home: home, ID: threadA}).ResetHistory(context.Background())
	require.Error(t, err)
	assert.NoFileExists(t, filepath.Join(home, historyDB), "no database is created")
}

func TestLock(t *testing.T) {
	home, rollout := codexHome(t)
	th := &CodexThread{Home: home, ID: threadA, Rollout: rollout}
	lockFile := filepath.Join(home, writerLocks, threadA+".lock")

	t.Run("created and removed", func(t *testing.T) {
		unlock, err := th.Lock()
		require.NoError(t, err)
		assert.FileExists(t, lockFile)
		_, err = th.Lock()
		require.ErrorIs(t, err, ErrThreadInUse)
		require.NoError(t, unlock())
		assert.NoFileExists(t, lockFile)
	})

	t.Run("held by Codex", func(t *testing.T) {
		// Codex flocks the thread's lock file while it has the thread open.
		f, err := os.Create(lockFile)
		require.NoError(t, err)
		defer os.Remove(lockFile)
		defer f.Close()
		require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB))

		_, err = th.Lock()
		require.ErrorIs(t, err, ErrThreadInUse)
		assert.FileExists(t, lockFile, "Codex's lock file is left alone")

		require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_UN))
		unlock, err := th.Lock()
		require.NoError(t, err)
		require.NoError(t, unlock())
		assert.FileExists(t, lockFile, "a lock file Lock did not create is kept")
	})

	t.Run("no lock folder", func(t *testing.T) {
		require.NoError(t, os.Remove(filepath.Join(home, writerLocks)))
		unlock, err := th.Lock()
		require.NoError(t, err)
		require.NoError(t, unlock())
		assert.NoDirExists(t, filepath.Join(home, writerLocks))
	})
}
