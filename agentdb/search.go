package agentdb

import (
	"context"
	"database/sql"
)

// keepSearch keeps the session's search projection true after rows were
// rewritten. A rewritten entry keeps every member its active event is
// derived from (sameEntry), so only its full-text row can change: a
// user's image that became text adds that text. While the projection is
// current, the rows are changed in place to what OpenClaw's rebuild of
// the projection writes. Otherwise, or when a row's timestamp cannot be
// derived here, the projection is marked for rebuild (needs_rebuild),
// which OpenClaw then makes itself; until it has, `openclaw agent`
// refuses the session ("projection is rebuilding"), so this is the last
// resort.
func keepSearch(ctx context.Context, tx *sql.Tx, session string, rows []rewritten, now int64) error {
	var changed []rewritten
	for _, r := range rows {
		if !sameSearch(r.old.search, r.new.search) {
			changed = append(changed, r)
		}
	}
	if len(changed) == 0 {
		return nil
	}
	var current bool
	err := tx.QueryRowContext(ctx, `SELECT coalesce((SELECT needs_rebuild = 0 AND indexed_seq =
			(SELECT max(seq) FROM transcript_events WHERE session_id = ?1)
		FROM session_transcript_index_state WHERE session_id = ?1), 0)
		AND NOT EXISTS (SELECT 1 FROM session_transcript_active_events WHERE session_id = ?1 AND context_eligible IS NULL)`,
		session).Scan(&current)
	if err != nil {
		return err
	}
	for _, r := range changed {
		if !current {
			break
		}
		if current, err = updateSearch(ctx, tx, session, r); err != nil {
			return err
		}
	}
	if current {
		return nil
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO session_transcript_index_state
		(session_id, indexed_seq, leaf_event_id, needs_rebuild, active_event_count, active_message_count, updated_at)
		VALUES (?, -1, NULL, 1, 0, 0, ?)
		ON CONFLICT (session_id) DO UPDATE SET needs_rebuild = 1, updated_at = excluded.updated_at`, session, now)
	return err
}

// updateSearch changes the full-text row of a rewritten entry to what a
// rebuild of the projection writes: one row (session_transcript_fts, and
// its owner in session_transcript_fts_rows) for an entry on the
// session's active branch that has text, none for another. It returns
// false, having changed nothing, when the projection does not hold what
// the old entry gives or the new row's timestamp cannot be derived here.
func updateSearch(ctx context.Context, tx *sql.Tx, session string, r rewritten) (bool, error) {
	var (
		onPath    bool
		createdAt float64
	)
	err := tx.QueryRowContext(ctx, `SELECT
		EXISTS (SELECT 1 FROM session_transcript_active_events WHERE session_id = ?1 AND event_seq = ?2),
		(SELECT created_at FROM transcript_events WHERE session_id = ?1 AND seq = ?2)`, session, r.seq).Scan(&onPath, &createdAt)
	if err != nil {
		return false, err
	}
	var ids []int64
	if r.old.search != nil {
		rows, err := tx.QueryContext(ctx, `SELECT id FROM session_transcript_fts_rows WHERE session_id = ? AND message_id = ?`,
			session, r.old.search.messageID)
		if err != nil {
			return false, err
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return false, err
			}
			ids = append(ids, id)
		}
		if err := rows.Close(); err != nil {
			return false, err
		}
	}
	if len(ids) > 1 || (len(ids) == 1) != (onPath && r.old.search != nil) {
		return false, nil
	}
	if !onPath {
		return true, nil // off the branch: no row, before or after
	}
	old, now := r.old.search, r.new.search
	if old != nil && now != nil && old.messageID == now.messageID && old.role == now.role {
		_, err := tx.ExecContext(ctx, `UPDATE session_transcript_fts SET text = ? WHERE rowid = ?`, now.text, ids[0])
		return err == nil, err
	}
	var ts float64
	if now != nil {
		var ok bool
		if ts, ok = searchTimestamp(now.timestamp, createdAt); !ok {
			return false, nil
		}
	}
	if old != nil {
		// The row's owner; its trigger deletes the row itself.
		if _, err := tx.ExecContext(ctx, `DELETE FROM session_transcript_fts_rows WHERE id = ?`, ids[0]); err != nil {
			return false, err
		}
	}
	if now == nil {
		return true, nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO session_transcript_fts_rows (session_id, message_id) VALUES (?, ?)`,
		session, now.messageID); err != nil {
		return false, err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO session_transcript_fts (rowid, text, session_id, message_id, role, timestamp)
		VALUES (last_insert_rowid(), ?, ?, ?, ?, ?)`, now.text, session, now.messageID, now.role, ts)
	return err == nil, err
}
