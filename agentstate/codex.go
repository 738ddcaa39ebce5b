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
// Codex 0.171 also rewrites rollouts itself: it compresses a rollout idle
// for a week into X.jsonl.zst (a temporary rollout-compress-*.tmp beside
// it, then the rename, then the plain file deleted), and a resume of a
// compressed rollout materializes it back (.rollout-materialize-*). Both
// publish by renaming over a rollout, as a migration does; the passes
// that compress or migrate rollouts hold $CODEX_HOME/.tmp/
// rollout-maintenance.lock (flock) exclusively while they run.
//
// # What it does
//
// FindCodexThread tells whether a file is a Codex rollout, and whether its
// home keeps such state, before anything is rewritten. CodexThread.Lock
// takes the rollout maintenance lock, shared (so that no compression pass
// starts meanwhile, while transcript-tool's own jobs share it) and the
// thread's writer lock, the one a live Codex process holds while it has
// the thread open, so no Codex resumes the thread while it is rewritten;
// it refuses with ErrMaintenance a rollout Codex is compressing or
// materializing: the maintenance lock held by a pass, a temporary of
// either beside the rollout, or the rollout there both plain and
// compressed.
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
// with ErrUnknownSchema and not touched. Only the thread history database,
// the thread's lock file and the rollout maintenance lock in the Codex
// home are opened (the latter two created as Codex creates them, in
// folders Codex made); the thread id that names them is checked to be a
// UUID first.
//
// # Registration
//
// Importing the package registers the thread history as Codex's state
// (format.RegisterState); package session imports it, and its
// LockAgentState takes the state of whatever agent owns a transcript.
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
	// ErrMaintenance is the error of a rollout that Codex is compressing
	// or materializing.
	ErrMaintenance = errors.New("a Codex process is compressing or materializing rollouts; try again once it is done")
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
	// maintenanceLock is flock'ed exclusively by the Codex passes that
	// compress or migrate rollouts, in CODEX_HOME.
	maintenanceLock = ".tmp/rollout-maintenance.lock"
)

// inFlight are the patterns of the names of Codex's temporaries beside a
// rollout it is compressing (written, then renamed to X.jsonl.zst) or
// materializing (decompressed, then renamed to X.jsonl).
var inFlight = []string{"rollout-compress-*.tmp", ".rollout-materialize-*"}

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
	// History is set when Home keeps a thread history database, which
	// ResetHistory resets.
	History bool
}

// FindCodexThread returns the Codex thread of the rollout at path: path
// is named like a rollout and lies under a `sessions` or
// `archived_sessions` folder, whose parent is the CODEX_HOME: the first
// such parent that holds thread_history_1.sqlite, or else the nearest.
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
	var nearest *CodexThread
	for dir := filepath.Dir(abs); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if base := filepath.Base(dir); base != "sessions" && base != "archived_sessions" {
			continue
		}
		th := &CodexThread{Home: filepath.Dir(dir), ID: m[1], Rollout: abs}
		fi, err := os.Stat(filepath.Join(th.Home, historyDB))
		switch {
		case err == nil && fi.Mode().IsRegular():
			th.History = true
			return th, nil
		case err != nil && !errors.Is(err, os.ErrNotExist):
			return nil, fmt.Errorf("codex thread of %s: %w", path, err)
		}
		if nearest == nil {
			nearest = th
		}
	}
	return nearest, nil
}

// Lock takes the locks Codex keeps a rollout with while transcript-tool
// rewrites it, and checks that Codex is not compressing or materializing
// it; unlock releases them.
//
// It takes the rollout maintenance lock, shared, so that no compression
// pass starts until unlock (a pass takes it exclusively), and fails with
// ErrMaintenance while a pass holds it; a home without the lock's folder
// has never run one, and nothing is created in it. It then takes the
// thread's writer lock (see lockWriter). Holding both, it fails with
// ErrMaintenance when a temporary of a compression or a materialization
// is beside the rollout, or the rollout is there both plain and
// compressed: the one being made and the one it replaces.
func (th *CodexThread) Lock() (unlock func() error, err error) {
	releaseMaintenance, err := th.lockMaintenance()
	if err != nil {
		return nil, err
	}
	releaseWriter, err := th.lockWriter()
	if err != nil {
		_ = releaseMaintenance()
		return nil, err
	}
	unlock = func() error { return errors.Join(releaseWriter(), releaseMaintenance()) }
	if err := th.inFlight(); err != nil {
		_ = unlock()
		return nil, err
	}
	return unlock, nil
}

// lockMaintenance takes Codex's rollout maintenance lock, shared.
func (th *CodexThread) lockMaintenance() (release func() error, err error) {
	name := filepath.Join(th.Home, filepath.FromSlash(maintenanceLock))
	if _, err := os.Stat(filepath.Dir(name)); errors.Is(err, os.ErrNotExist) {
		return func() error { return nil }, nil
	}
	// Codex opens it the same way, creating it, and never removes it.
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock codex rollouts in %s: %w", th.Home, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s is locked: %w", name, ErrMaintenance)
		}
		return nil, fmt.Errorf("lock codex rollouts in %s: %w", th.Home, err)
	}
	return f.Close, nil
}

// inFlight returns ErrMaintenance when the rollout's folder shows Codex
// compressing or materializing a rollout.
func (th *CodexThread) inFlight() error {
	dir := filepath.Dir(th.Rollout)
	for _, pattern := range inFlight {
		found, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			return err
		}
		if len(found) > 0 {
			return fmt.Errorf("%s is beside the rollout: %w", found[0], ErrMaintenance)
		}
	}
	twin := th.Rollout + ".zst"
	if strings.HasSuffix(th.Rollout, ".zst") {
		twin = strings.TrimSuffix(th.Rollout, ".zst")
	}
	switch _, err := os.Lstat(twin); {
	case err == nil:
		return fmt.Errorf("%s is there too: %w", twin, ErrMaintenance)
	case !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("codex thread %s: %w", th.ID, err)
	}
	return nil
}

// lockWriter takes the thread's writer lock, so that no Codex process
// opens the thread until release is called; Codex refuses to resume a
// thread whose lock is held ("already has an active writer"). It fails
// with ErrThreadInUse when a Codex process has the thread open. A lock
// file lockWriter had to create is removed by release, while still
// locked, so a Codex process that opened it meanwhile fails its own lock
// instead of taking a file that is gone. A Codex home without a lock
// folder (earlier versions) has nothing to lock, and release does
// nothing.
func (th *CodexThread) lockWriter() (release func() error, err error) {
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
// database (of a home that has one), so that Codex projects the rollout again from its first byte
// the next time it opens the thread. Call it after the rollout was
// rewritten, while holding Lock. Deleting the rows, rather than setting
// the projection's offset back to 0, is what makes every turn's byte
// offsets right again: re-read from 0, Codex keeps a turn row it already
// has, offsets and all.
func (th *CodexThread) ResetHistory(ctx context.Context) error {
	if !th.History {
		return nil
	}
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
