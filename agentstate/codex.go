// Package agentstate keeps an agent's own state true after one of its
// transcripts is rewritten in place.
//
// An agent may keep, beside its transcripts, state derived from them that
// points into their bytes. Codex CLI (0.169.0 and the versions sharing its
// schema) projects each rollout into $CODEX_HOME/thread_history_1.sqlite:
// the thread's turns and items, each turn with the byte offsets where it
// starts and ends in the rollout, and the byte offset up to which the
// rollout was read (thread_history_projection_state). A migration shrinks
// the rollout, so those offsets point past its end or into the middle of
// other lines: Codex then drops the turns of the next resume from its
// thread history, and a fork would cut the rollout at a wrong byte.
//
// # What it does
//
// FindCodexThread tells whether a rollout belongs to a Codex home that
// keeps such state, before anything is rewritten. CodexThread.Lock takes
// the thread's writer lock, the one a live Codex process holds while it has
// the thread open, so no Codex resumes the thread while it is rewritten.
// CodexThread.ResetHistory then deletes every row the thread has in the
// thread history database, exactly the rows Codex deletes itself when it
// drops a thread's history, so that Codex projects the rollout again from
// its first byte the next time it opens the thread. The database holds
// nothing else about a thread: Codex documents the rollout as canonical
// and the database as a projection of it.
//
// # Guarantees
//
// The reset is one SQLite transaction begun with BEGIN IMMEDIATE, which
// takes the database's write lock at once under SQLite's own locking, the
// locking Codex relies on (it opens the database in WAL mode, or in DELETE
// mode on network file systems), and waits up to BusyTimeout for a Codex
// process to release it: either all the thread's rows are gone or none
// is. The journal mode and every other thread's rows are left as they are.
// A database whose schema lacks the tables this package knows is refused
// with ErrUnknownSchema and not touched. Only the thread history database
// and the thread's lock file in the Codex home are opened; the thread id
// that names them is checked to be a UUID first.
package agentstate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Errors of Lock and ResetHistory.
var (
	// ErrThreadInUse is the error of a thread a Codex process has open.
	ErrThreadInUse = errors.New("a Codex process has the thread open; close it and try again")
	// ErrBusy is the error of a thread history database another process
	// kept locked for longer than BusyTimeout.
	ErrBusy = errors.New("the Codex thread history database stayed locked by another process")
	// ErrUnknownSchema is the error of a thread history database this
	// package does not know how to reset.
	ErrUnknownSchema = errors.New("unknown Codex thread history schema")
)

// BusyTimeout is how long ResetHistory waits for another process's lock
// on the database: the busy timeout Codex's own SQLite pool uses, so a
// Codex process writing at the same moment delays the reset without
// failing it.
var BusyTimeout = 5 * time.Second

const (
	// historyDB is the thread history database inside CODEX_HOME; the
	// suffix is its schema generation, which Codex bumps on a change it
	// cannot migrate.
	historyDB = "thread_history_1.sqlite"
	// projectionState is the table whose presence says the database is
	// the projection this package knows.
	projectionState = "thread_history_projection_state"
	// writerLocks holds one lock file per thread, flock'ed by the Codex
	// process that writes the thread.
	writerLocks = "thread-writer-locks"
)

// rolloutName matches a rollout's file name, plain or compressed by
// Codex, and captures its thread id.
var rolloutName = regexp.MustCompile(`^rollout-.*-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl(\.zst)?$`)

// CodexThread is a Codex thread whose rollout is about to be rewritten.
type CodexThread struct {
	// Home is the CODEX_HOME the rollout belongs to.
	Home string
	// ID is the thread id, the UUID at the end of the rollout's name.
	ID string
	// Rollout is the absolute path of the rollout.
	Rollout string
}

// FindCodexThread returns the Codex thread of the rollout at path when a
// rewrite of it would leave Codex's thread history stale: path is named
// like a rollout, lies under a `sessions` or `archived_sessions` folder,
// and that folder's parent, the CODEX_HOME, holds thread_history_1.sqlite.
// It returns nil, and no error, for any other file.
func FindCodexThread(path string) (*CodexThread, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("codex thread of %s: %w", path, err)
	}
	m := rolloutName.FindStringSubmatch(filepath.Base(abs))
	if m == nil {
		return nil, nil
	}
	for dir := filepath.Dir(abs); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if base := filepath.Base(dir); base != "sessions" && base != "archived_sessions" {
			continue
		}
		home := filepath.Dir(dir)
		fi, err := os.Stat(filepath.Join(home, historyDB))
		switch {
		case err == nil && fi.Mode().IsRegular():
			return &CodexThread{Home: home, ID: m[1], Rollout: abs}, nil
		case err != nil && !errors.Is(err, os.ErrNotExist):
			return nil, fmt.Errorf("codex thread of %s: %w", path, err)
		}
	}
	return nil, nil
}

// Lock takes the thread's writer lock, so that no Codex process opens the
// thread until unlock is called; Codex refuses to resume a thread whose
// lock is held ("already has an active writer"). It fails with
// ErrThreadInUse when a Codex process has the thread open. A lock file
// Lock had to create is removed by unlock, while still locked, so a Codex
// process that opened it meanwhile fails its own lock instead of taking a
// file that is gone. A Codex home without a lock folder (earlier versions)
// has nothing to lock, and unlock does nothing.
func (th *CodexThread) Lock() (unlock func() error, err error) {
	dir := filepath.Join(th.Home, writerLocks)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return func() error { return nil }, nil
	}
	name := filepath.Join(dir, th.ID+".lock")
	created := false
	f, err := os.OpenFile(name, os.O_RDWR|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, os.ErrNotExist) {
		f, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
		created = err == nil
	}
	if err != nil {
		return nil, fmt.Errorf("lock codex thread %s: %w", th.ID, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if created {
			os.Remove(name)
		}
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("codex thread %s: %w", th.ID, ErrThreadInUse)
		}
		return nil, fmt.Errorf("lock codex thread %s: %w", th.ID, err)
	}
	return func() error {
		var rmErr error
		if created {
			rmErr = os.Remove(name)
		}
		return errors.Join(rmErr, f.Close())
	}, nil
}

// ResetHistory deletes the thread's rows from the thread history
// database, so that Codex projects the rollout again from its first byte
// the next time it opens the thread. Call it after the rollout was
// rewritten, while holding Lock. Deleting the rows, rather than setting
// the projection's offset back to 0, is what makes every turn's byte
// offsets right again: re-read from 0, Codex keeps a turn row it already
// has, offsets and all.
func (th *CodexThread) ResetHistory(ctx context.Context) error {
	err := th.resetHistory(ctx)
	var se *sqlite.Error
	if errors.As(err, &se) && (se.Code()&0xff == sqlite3.SQLITE_BUSY || se.Code()&0xff == sqlite3.SQLITE_LOCKED) {
		err = fmt.Errorf("%w: %w", ErrBusy, err)
	}
	if err != nil {
		return fmt.Errorf("reset codex thread history of %s in %s: %w", th.ID, filepath.Join(th.Home, historyDB), err)
	}
	return nil
}

func (th *CodexThread) resetHistory(ctx context.Context) error {
	db, err := sql.Open("sqlite", dsn(filepath.Join(th.Home, historyDB)))
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	tables, err := threadTables(ctx, tx)
	if err != nil {
		return err
	}
	for _, t := range tables {
		// The names come from the database's own schema, quoted as
		// identifiers; the thread id is a bound value.
		if _, err := tx.ExecContext(ctx, `DELETE FROM "`+strings.ReplaceAll(t, `"`, `""`)+`" WHERE thread_id = ?`, th.ID); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// dsn opens an existing database (mode=rw never creates one) with
// transactions begun by BEGIN IMMEDIATE and the busy timeout set. The path
// is escaped as a URI path, so `?` or `#` in it stay part of the name.
func dsn(path string) string {
	q := url.Values{}
	q.Set("mode", "rw")
	q.Set("_txlock", "immediate")
	q.Set("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeout.Milliseconds()))
	return (&url.URL{Scheme: "file", Path: path, RawQuery: q.Encode()}).String()
}

// threadTables returns the tables holding rows per thread: every table with
// a thread_id column, so a table a later Codex adds to the projection is
// reset too. It fails with ErrUnknownSchema when the projection state
// table is missing or the tables Codex 0.169.0 resets lack thread_id.
func threadTables(ctx context.Context, tx *sql.Tx) ([]string, error) {
	rows, err := tx.QueryContext(ctx, `
		SELECT m.name FROM sqlite_schema AS m, pragma_table_info(m.name) AS c
		WHERE m.type = 'table' AND c.name = 'thread_id' ORDER BY m.name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var tables []string
	have := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		// The projection state goes last, in the order Codex itself
		// deletes a thread's history.
		if name != projectionState {
			tables = append(tables, name)
		}
		have[name] = true
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, want := range []string{projectionState, "thread_turns", "thread_items"} {
		if !have[want] {
			return nil, fmt.Errorf("%w: no table %s with a thread_id column", ErrUnknownSchema, want)
		}
	}
	return append(tables, projectionState), nil
}
