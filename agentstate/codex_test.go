package agentstate

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
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
		{"rollout", rollout, &CodexThread{Home: home, ID: threadA, Rollout: rollout, History: true}},
		{"archived and compressed", archived, &CodexThread{Home: home, ID: threadB, Rollout: archived, History: true}},
		{"not a rollout name", filepath.Join(home, "sessions", "2026", "11", "25", "notes.jsonl"), nil},
		{"not a UUID", filepath.Join(home, "sessions", "rollout-2026-11-25T20-09-32-../../x.jsonl"), nil},
		{"outside sessions", filepath.Join(home, "rollout-2026-11-25T20-09-32-"+threadA+".jsonl"), nil},
		{"no thread history", filepath.Join(other, "sessions", "rollout-2026-11-25T20-09-32-"+threadA+".jsonl"),
			&CodexThread{Home: other, ID: threadA, Rollout: filepath.Join(other, "sessions", "rollout-2026-11-25T20-09-32-"+threadA+".jsonl")}},
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
		assert.Equal(t, &CodexThread{Home: home, ID: threadA, Rollout: rollout, History: true}, got)
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

	require.NoError(t, (&CodexThread{Home: home, ID: threadA, Rollout: rollout, History: true}).ResetHistory(context.Background()))

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

	err = (&CodexThread{Home: home, ID: threadA, Rollout: rollout, History: true}).ResetHistory(context.Background())
	require.ErrorIs(t, err, ErrUnknownSchema)
	assert.ErrorContains(t, err, filepath.Join(home, historyDB))
	var turns int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM thread_turns WHERE thread_id = ?`, threadA).Scan(&turns))
	assert.Equal(t, 1, turns, "nothing is deleted")
}

func TestResetHistoryWaitsForCodexWriteLock(t *testing.T) {
	home, rollout := codexHome(t)
	th := &CodexThread{Home: home, ID: threadA, Rollout: rollout, History: true}
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
	err := (&CodexThread{Home: home, ID: threadA, History: true}).ResetHistory(context.Background())
	require.Error(t, err)
	require.NoError(t, (&CodexThread{Home: home, ID: threadA}).ResetHistory(context.Background()), "a home without history has none to reset")
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

// TestHoldMaintenanceLock is not a test: run by TestLockRolloutMaintenance
// as a process of its own, it holds Codex's rollout maintenance lock as a
// compression pass does, says so on stdout, and exits when its stdin
// closes.
func TestHoldMaintenanceLock(t *testing.T) {
	home := os.Getenv("TT_CODEX_HOME")
	if home == "" {
		t.Skip("run by TestLockRolloutMaintenance")
	}
	f, err := os.OpenFile(filepath.Join(home, filepath.FromSlash(maintenanceLock)), os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB))
	fmt.Println("locked")
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// TestLockRolloutMaintenance: a rollout is not locked for a rewrite while
// a Codex compression pass holds the maintenance lock (here another
// process), while a temporary of a compression or a materialization is
// beside it, or while it is there both plain and compressed; nothing is
// changed then. transcript-tool's own locks of two threads share the
// maintenance lock, and a home that has none gets none.
func TestLockRolloutMaintenance(t *testing.T) {
	home, rollout := codexHome(t)
	require.NoError(t, os.Mkdir(filepath.Join(home, ".tmp"), 0o700))
	th := &CodexThread{Home: home, ID: threadA, Rollout: rollout, History: true}
	other := &CodexThread{Home: home, ID: threadB, Rollout: filepath.Join(filepath.Dir(rollout), "rollout-2026-11-25T20-09-33-"+threadB+".jsonl"), History: true}
	lockFile := filepath.Join(home, writerLocks, threadA+".lock")

	t.Run("a compression pass", func(t *testing.T) {
		holder := exec.Command(os.Args[0], "-test.run=^TestHoldMaintenanceLock$")
		holder.Env = append(os.Environ(), "TT_CODEX_HOME="+home)
		stdin, err := holder.StdinPipe()
		require.NoError(t, err)
		stdout, err := holder.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, holder.Start())
		line, err := bufio.NewReader(stdout).ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, "locked\n", line)

		_, err = th.Lock()
		require.ErrorIs(t, err, ErrMaintenance)
		assert.ErrorContains(t, err, filepath.Join(home, ".tmp", "rollout-maintenance.lock"))
		assert.NoFileExists(t, lockFile, "the thread is not locked")

		require.NoError(t, stdin.Close())
		require.NoError(t, holder.Wait())
		unlock, err := th.Lock()
		require.NoError(t, err, "the pass is over")
		unlockOther, err := other.Lock()
		require.NoError(t, err, "two of transcript-tool's locks share the maintenance lock")
		require.NoError(t, errors.Join(unlock(), unlockOther()))
	})

	for _, name := range []string{"rollout-compress-AbC123.tmp", ".rollout-materialize-rollout-x.jsonl"} {
		t.Run(name, func(t *testing.T) {
			temp := filepath.Join(filepath.Dir(rollout), name)
			require.NoError(t, os.WriteFile(temp, nil, 0o600))
			_, err := th.Lock()
			require.ErrorIs(t, err, ErrMaintenance)
			assert.ErrorContains(t, err, temp)
			assert.NoFileExists(t, lockFile, "the thread's lock is released")
			require.NoError(t, os.Remove(temp))
		})
	}

	t.Run("plain and compressed", func(t *testing.T) {
		require.NoError(t, os.WriteFile(rollout+".zst", nil, 0o600))
		defer os.Remove(rollout + ".zst")
		_, err := th.Lock()
		require.ErrorIs(t, err, ErrMaintenance)
		compressed := &CodexThread{Home: home, ID: threadA, Rollout: rollout + ".zst", History: true}
		_, err = compressed.Lock()
		require.ErrorIs(t, err, ErrMaintenance)
	})

	t.Run("no maintenance folder", func(t *testing.T) {
		require.NoError(t, os.RemoveAll(filepath.Join(home, ".tmp")))
		unlock, err := th.Lock()
		require.NoError(t, err)
		require.NoError(t, unlock())
		assert.NoDirExists(t, filepath.Join(home, ".tmp"), "nothing is created in a home that has no maintenance lock")
	})
}
