package agentdb

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/transcript-tool/transcript-tool/transcript"
)

// pause is called at named points of Replace. Tests make it stop a child
// process there, to kill it.
var pause = func(at string) {}

// Replace writes the lines of the file at path, a rewritten copy of what
// Fetch wrote for snap, back into the session's rows: line i into the
// i-th row fetched, and only where the line changed. It returns how many
// rows it rewrote; when no line changed it locks and writes nothing.
//
// The file must hold one line, ending with "\n", for each row fetched;
// a changed line must be a JSON object in UTF-8 and the same entry as its
// row: only its message and the exact-restore marker member may differ,
// not the message's idempotencyKey nor excludeFromContext (see
// sameEntry), as when migrate or rehydrate rewrote it. Otherwise Replace
// fails naming the file, line and byte offset, and writes nothing.
//
// Replace fails with ErrInUse (a *HeldError) while an OpenClaw process
// holds the database, and with ErrChanged when any row of the session
// differs from snap, or rows were added or removed: the session is then
// left as it is. Otherwise, under OpenClaw's maintenance lease, it writes
// the changed rows in one transaction, as identity text: event_json set
// to the line, event_zstd and navigation_json NULL, event_utf8_bytes the
// line's length. In the same transaction it rotates the session's rewrite
// watermark, so that OpenClaw's readers drop what they derived from the
// old rows, strictly advances the session's transcript_updated_at, which
// also makes OpenClaw's memory index read the session again, and keeps
// the session's full-text rows what OpenClaw's rebuild of them would be
// (see keepSearch).
func (d *Database) Replace(ctx context.Context, snap *Snapshot, path string) (int, error) {
	changes, err := diff(snap, path)
	if err != nil || len(changes) == 0 {
		return 0, err
	}
	unlock := lockLocal(d.Path)
	defer unlock()
	if err := d.probe(); err != nil {
		return 0, err
	}
	f, release, err := d.hold(ctx)
	if err != nil {
		return 0, err
	}
	defer release()
	// Under the lease no OpenClaw process opens the database any more;
	// one that took its locks since the first look is seen now.
	if err := d.probe(); err != nil {
		return 0, err
	}
	if err := d.dropIntegrityProof(ctx); err != nil {
		return 0, fmt.Errorf("%s: drop OpenClaw's integrity record: %w", d.Path, err)
	}
	if err := d.rewrite(ctx, snap, path, changes, f); err != nil {
		return 0, fmt.Errorf("%s: replace session %s: %w", d.Path, snap.Session, err)
	}
	// The rows are written; giving the pages they freed back is a saving,
	// not a part of the change, which OpenClaw's own maintenance also
	// makes later: it may fail.
	_ = d.reclaim(ctx, f)
	return len(changes), nil
}

// reclaimPages bounds the pages one reclaim gives back, as OpenClaw's own
// reclamation bounds one pass, so that it holds the write lock briefly.
const reclaimPages = 4096

// reclaim gives the pages the rewritten rows freed back to the file
// system, as OpenClaw's reclamation does (reclaimSqliteWalFreePages): a
// checkpoint that empties the WAL, then PRAGMA incremental_vacuum in a
// transaction of its own, for a database OpenClaw made with
// auto_vacuum=INCREMENTAL, while this process still holds the
// maintenance lease f. Otherwise the file keeps its size until OpenClaw
// reclaims the pages itself.
func (d *Database) reclaim(ctx context.Context, f *fence) error {
	db, err := openWrite(d.Path, 0)
	if err != nil {
		return err
	}
	defer db.Close()
	var mode, free int
	if err := db.QueryRowContext(ctx, "SELECT * FROM pragma_auto_vacuum, pragma_freelist_count").Scan(&mode, &free); err != nil || mode != 2 || free == 0 {
		return err
	}
	if _, err := db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA incremental_vacuum(%d)", min(free, reclaimPages))); err != nil {
		return err
	}
	if err := f.check(ctx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
	return err
}

// change is a line of the rewritten file that differs from its row.
type change struct {
	index int // of the row in the Snapshot
	sum   [sha256.Size]byte
}

// diff reads the rewritten file at path and returns its lines that differ
// from the rows of snap, checking that it has one line per row and that
// each changed line is a JSON object in UTF-8.
func diff(snap *Snapshot, path string) ([]change, error) {
	var changes []change
	err := eachLine(path, func(i int, line []byte, at func(error) error) error {
		if i >= len(snap.rows) {
			return at(fmt.Errorf("more lines than the %d rows of session %s fetched", len(snap.rows), snap.Session))
		}
		if sumOf(snap.rows[i].seq, line) == snap.rows[i] {
			return nil
		}
		if !utf8.Valid(line) {
			return at(errors.New("changed line is not UTF-8"))
		}
		if _, err := factsOf(line); err != nil {
			return at(fmt.Errorf("changed line: %w", err))
		}
		changes = append(changes, change{index: i, sum: sha256.Sum256(line)})
		return nil
	}, func(n int, end int64) error {
		if n != len(snap.rows) {
			return &transcript.InputError{Path: path, Line: n + 1, Offset: end,
				Err: fmt.Errorf("%d lines for the %d rows of session %s fetched", n, len(snap.rows), snap.Session)}
		}
		return nil
	})
	return changes, err
}

// eachLine calls fn with every line of the file at path, without its
// "\n", and a function that places an error at the line; then end with
// the number of lines and the file's length. A last line without "\n"
// is an error: Fetch ends every line with one.
func eachLine(path string, fn func(i int, line []byte, at func(error) error) error, end func(n int, size int64) error) error {
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	r := bufio.NewReaderSize(file, 1<<20)
	var off int64
	for i := 0; ; i++ {
		line, err := r.ReadBytes('\n')
		at := func(err error) error { return &transcript.InputError{Path: path, Line: i + 1, Offset: off, Err: err} }
		switch {
		case err == io.EOF && len(line) == 0:
			return end(i, off)
		case err == io.EOF:
			return at(errors.New("last line has no line break; the file is not one Fetch wrote"))
		case err != nil:
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := fn(i, line[:len(line)-1], at); err != nil {
			return err
		}
		off += int64(len(line))
	}
}

// rewrite makes the changes of the file at path in one transaction of the
// database, after checking that every row is as snap says, and commits
// only while this process still holds the maintenance lease f.
func (d *Database) rewrite(ctx context.Context, snap *Snapshot, path string, changes []change, f *fence) error {
	db, err := openWrite(d.Path, 0)
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if busy(err) {
		return &HeldError{Database: d.Path, Holder: "SQLite's write lock on the database"}
	}
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := checkSchema(ctx, tx); err != nil {
		return err
	}
	if err := hot(ctx, tx, snap.Session); err != nil {
		return err
	}
	var utf8DB bool
	if err := tx.QueryRowContext(ctx, "SELECT encoding = 'UTF-8' FROM pragma_encoding").Scan(&utf8DB); err != nil {
		return err
	}
	old, err := verify(ctx, tx, snap, changes)
	if err != nil {
		return err
	}
	pause("verified")
	update, err := tx.PrepareContext(ctx, `UPDATE transcript_events
		SET event_json = ?, event_zstd = NULL, event_utf8_bytes = ?, navigation_json = NULL
		WHERE session_id = ? AND seq = ?`)
	if err != nil {
		return err
	}
	defer update.Close()
	next := 0
	var rows []rewritten
	err = eachLine(path, func(i int, line []byte, at func(error) error) error {
		if next == len(changes) || changes[next].index != i {
			return nil
		}
		c := changes[next]
		next++
		if sha256.Sum256(line) != c.sum {
			return at(errors.New("the file changed while the session was replaced"))
		}
		now, err := factsOf(line)
		if err != nil {
			return at(err)
		}
		if !sameEntry(old[i], now) {
			return at(errors.New("changed line is another entry than its row: it changes a member other than the message and the exact-restore marker, or the message's idempotencyKey or excludeFromContext"))
		}
		rows = append(rows, rewritten{seq: snap.rows[i].seq, old: old[i], new: now})
		var size any
		if utf8DB {
			size = len(line)
		}
		res, err := update.ExecContext(ctx, string(line), size, snap.Session, snap.rows[i].seq)
		if err != nil {
			return at(err)
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return at(errors.Join(err, fmt.Errorf("%d rows updated for row %d", n, snap.rows[i].seq)))
		}
		return nil
	}, func(int, int64) error { return nil })
	if err != nil {
		return err
	}
	if next != len(changes) {
		return fmt.Errorf("%s: the file changed while the session was replaced", path)
	}
	pause("updated")
	if err := derived(ctx, tx, snap.Session, rows); err != nil {
		return err
	}
	if err := f.check(ctx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	pause("committed")
	return nil
}

// verify checks, inside the write transaction, that the rows of the
// session are those of snap, and returns the facts of the rows about to
// change, by index.
func verify(ctx context.Context, tx *sql.Tx, snap *Snapshot, changes []change) (map[int]facts, error) {
	old := make(map[int]facts, len(changes))
	i, next := 0, 0
	err := eachRow(ctx, tx, snap.Session, func(seq int64, event []byte) error {
		if i >= len(snap.rows) || sumOf(seq, event) != snap.rows[i] {
			return ErrChanged
		}
		if next < len(changes) && changes[next].index == i {
			next++
			f, err := factsOf(event)
			if err != nil {
				return fmt.Errorf("row %d: %w", seq, err)
			}
			old[i] = f
		}
		i++
		return nil
	})
	if err == nil && i != len(snap.rows) {
		err = ErrChanged
	}
	return old, err
}

// rewritten is a row Replace rewrote, with the facts of its entry
// before and after.
type rewritten struct {
	seq      int64
	old, new facts
}

// derived keeps OpenClaw's state derived from the session's rows true
// after the rows were rewritten, as OpenClaw's exact rewrite of rows
// (rewriteSqliteTranscriptEventRowsInTransaction) does: a new rewrite
// generation, a strictly later transcript_updated_at, and a search
// projection that holds what a rebuild of it would (see keepSearch).
func derived(ctx context.Context, tx *sql.Tx, session string, rows []rewritten) error {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	now := time.Now().UnixMilli()
	if _, err := tx.ExecContext(ctx, `INSERT INTO transcript_rewrite_watermarks (session_id, generation, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (session_id) DO UPDATE SET generation = excluded.generation, updated_at = excluded.updated_at`,
		session, hex.EncodeToString(b[:]), now); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE session_windows SET transcript_updated_at =
		max(?, coalesce(transcript_updated_at, -1) + 1, coalesce(transcript_observed_at, -1) + 1)
		WHERE session_id = ?`, now, session); err != nil {
		return err
	}
	return keepSearch(ctx, tx, session, rows, now)
}

var (
	localMu    sync.Mutex
	localLocks = map[string]*sync.Mutex{}
)

// lockLocal serializes this process's Replace calls on the database at
// path, which would otherwise fail each other's BEGIN IMMEDIATE.
func lockLocal(path string) (unlock func()) {
	localMu.Lock()
	m := localLocks[path]
	if m == nil {
		m = &sync.Mutex{}
		localLocks[path] = m
	}
	localMu.Unlock()
	m.Lock()
	return m.Unlock
}
