package agentdb

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"io"
)

// Session is one session of a Database.
type Session struct {
	// ID is the session id, the transcript's own id.
	ID string
	// Key is the session key the session belongs to (agent:main:main),
	// "" when the database records none.
	Key string
	// Rows is how many entries the session has and Bytes the size of
	// their JSON, as the JSONL Fetch writes would have but for its line
	// breaks.
	Rows, Bytes int64
	// Cold is true for a session OpenClaw moved to a cold archive: it is
	// listed, never fetched nor rewritten.
	Cold bool
}

// Sessions returns the sessions of the database, in the order of their
// ids: those with rows in transcript_events and those in cold archives.
func (d *Database) Sessions(ctx context.Context) ([]Session, error) {
	var out []Session
	err := d.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `
			SELECT e.session_id, coalesce(w.session_key, ''), e.n, e.bytes, c.session_id IS NOT NULL
			FROM (SELECT session_id, count(*) AS n,
			             sum(coalesce(event_utf8_bytes, octet_length(event_json))) AS bytes
			      FROM transcript_events GROUP BY session_id) AS e
			LEFT JOIN session_windows AS w ON w.session_id = e.session_id
			LEFT JOIN session_transcript_cold_archives AS c ON c.session_id = e.session_id
			UNION ALL
			SELECT c.session_id, coalesce(w.session_key, ''), c.event_count, c.raw_bytes, 1
			FROM session_transcript_cold_archives AS c
			LEFT JOIN session_windows AS w ON w.session_id = c.session_id
			WHERE c.session_id NOT IN (SELECT session_id FROM transcript_events)
			ORDER BY 1`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var s Session
			if err := rows.Scan(&s.ID, &s.Key, &s.Rows, &s.Bytes, &s.Cold); err != nil {
				return err
			}
			out = append(out, s)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("%s: list sessions: %w", d.Path, err)
	}
	return out, nil
}

// Snapshot is what Fetch read of a session: the rows in seq order, each
// with the length and SHA-256 of its event JSON. Replace writes only over
// the rows a Snapshot describes.
type Snapshot struct {
	// Session is the id of the session read.
	Session string
	rows    []rowSum
}

// rowSum identifies the content of one row.
type rowSum struct {
	seq  int64
	size int
	sum  [sha256.Size]byte
}

// Rows returns how many rows, and so how many lines, were fetched.
func (s *Snapshot) Rows() int { return len(s.rows) }

// sumOf returns the rowSum of a row's event.
func sumOf(seq int64, event []byte) rowSum {
	return rowSum{seq: seq, size: len(event), sum: sha256.Sum256(event)}
}

// Fetch writes the rows of session id to w, in seq order, one line each:
// the row's event JSON exactly, then "\n". It returns the Snapshot that
// Replace needs. The rows are read in one read transaction, so that they
// are one state of the session even while an OpenClaw process writes to
// it. A session in a cold archive fails with ErrCold, an unknown one with
// ErrNotFound, a row that cannot be one line with ErrCorrupt.
func (d *Database) Fetch(ctx context.Context, id string, w io.Writer) (*Snapshot, error) {
	snap := &Snapshot{Session: id}
	err := d.read(ctx, func(tx *sql.Tx) error {
		if err := hot(ctx, tx, id); err != nil {
			return err
		}
		return eachRow(ctx, tx, id, func(seq int64, event []byte) error {
			snap.rows = append(snap.rows, sumOf(seq, event))
			if _, err := w.Write(event); err != nil {
				return err
			}
			_, err := w.Write([]byte{'\n'})
			return err
		})
	})
	if err != nil {
		return nil, fmt.Errorf("%s: fetch session %s: %w", d.Path, id, err)
	}
	return snap, nil
}

// read runs fn in a read transaction of the database, after checking its
// schema.
func (d *Database) read(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return readTx(ctx, d.Path, func(tx *sql.Tx) error {
		if err := checkSchema(ctx, tx); err != nil {
			return err
		}
		return fn(tx)
	})
}

// hot fails with ErrCold when session id is in a cold archive, and with
// ErrNotFound when the database knows no such session.
func hot(ctx context.Context, q querier, id string) error {
	var window, cold bool
	err := q.QueryRowContext(ctx, `SELECT
		EXISTS (SELECT 1 FROM session_windows WHERE session_id = ?1),
		EXISTS (SELECT 1 FROM session_transcript_cold_archives WHERE session_id = ?1)`, id).Scan(&window, &cold)
	switch {
	case err != nil:
		return err
	case cold:
		return ErrCold
	case !window:
		return ErrNotFound
	}
	return nil
}

// eachRow calls fn with the seq and event JSON of every row of session id,
// in seq order. A row whose event cannot be one JSONL line stops it with
// ErrCorrupt.
func eachRow(ctx context.Context, q querier, id string, fn func(seq int64, event []byte) error) error {
	rows, err := q.QueryContext(ctx, `SELECT seq, event_json, event_zstd, event_utf8_bytes
		FROM transcript_events WHERE session_id = ? ORDER BY seq`, id)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			seq   int64
			text  sql.NullString
			frame []byte
			size  sql.NullInt64
		)
		if err := rows.Scan(&seq, &text, &frame, &size); err != nil {
			return err
		}
		ev, err := event(text, frame, size)
		if err == nil && bytes.IndexByte(ev, '\n') >= 0 {
			err = fmt.Errorf("%w: its JSON holds a line break", ErrCorrupt)
		}
		if err != nil {
			return fmt.Errorf("row %d: %w", seq, err)
		}
		if err := fn(seq, ev); err != nil {
			return err
		}
	}
	return rows.Err()
}
