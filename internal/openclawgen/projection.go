package openclawgen

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	osexec "os/exec"
	"path/filepath"
	"sort"
)

// Projection is what a session's search projection, the state OpenClaw
// derives from its rows, holds: its full-text rows (sorted: their
// rowids' order is not part of what they say), its active events, and its
// index state but for the time it was written.
type Projection struct {
	FTS, Active []string
	State       string
}

// ReadProjection returns the search projection of session in the agent
// database at path, read only.
func ReadProjection(path, session string) (Projection, error) {
	db, err := sql.Open("sqlite", (&url.URL{Scheme: "file", Path: path, RawQuery: "mode=ro"}).String())
	if err != nil {
		return Projection{}, err
	}
	defer db.Close()
	var p Projection
	for _, q := range []struct {
		sql string
		to  *[]string
	}{
		{`SELECT f.message_id || '|' || f.role || '|' || f.timestamp || '|' || f.text FROM session_transcript_fts AS f
			JOIN session_transcript_fts_rows AS r ON r.id = f.rowid WHERE r.session_id = ?`, &p.FTS},
		{`SELECT active_position || '|' || event_seq || '|' || coalesce(message_position, '') || '|' || coalesce(context_eligible, '')
			FROM session_transcript_active_events WHERE session_id = ? ORDER BY active_position`, &p.Active},
	} {
		if *q.to, err = column(db, q.sql, session); err != nil {
			return Projection{}, fmt.Errorf("%s: %w", path, err)
		}
	}
	sort.Strings(p.FTS)
	err = db.QueryRow(`SELECT indexed_seq || '|' || coalesce(leaf_event_id, '') || '|' || needs_rebuild || '|' ||
		active_event_count || '|' || active_message_count FROM session_transcript_index_state WHERE session_id = ?`, session).Scan(&p.State)
	if err != nil {
		return Projection{}, fmt.Errorf("%s: index state of session %s: %w", path, session, err)
	}
	return p, nil
}

// column returns the one column of the rows query selects.
func column(db *sql.DB, query string, args ...any) ([]string, error) {
	rows, err := db.Query(query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// rebuildJS marks a session's search projection dirty and rebuilds it
// with OpenClaw's own functions, found by name in its bundle.
const rebuildJS = `import { DatabaseSync } from "node:sqlite";
import { pathToFileURL } from "node:url";
const [mod, dbPath, sessionId] = process.argv.slice(2);
const m = await import(pathToFileURL(mod));
const fn = (name) => {
  const f = Object.values(m).find((v) => typeof v === "function" && v.name === name);
  if (!f) throw new Error(mod + " has no " + name);
  return f;
};
const db = new DatabaseSync(dbPath);
db.exec("PRAGMA foreign_keys = ON; BEGIN IMMEDIATE");
fn("markSessionTranscriptIndexDirtyInTransaction")(db, sessionId);
if (!fn("reconcileSessionTranscriptIndexInTransaction")(db, sessionId)) throw new Error("nothing rebuilt");
db.exec("COMMIT");
db.close();
`

// Rebuilt returns the search projection that OpenClaw's own rebuild
// makes of the rows of session in the agent database at path: it runs
// OpenClaw's functions, from the openclaw package folder pkg, with the
// Node executable node, on a copy of the database (and its WAL) in the
// folder scratch, and reads the copy.
func Rebuilt(ctx context.Context, node, pkg, path, session, scratch string) (Projection, error) {
	mods, err := filepath.Glob(filepath.Join(pkg, "dist", "session-transcript-index-*.mjs"))
	if err != nil || len(mods) != 1 {
		return Projection{}, fmt.Errorf("%s: not one module of OpenClaw's search projection: %v %w", pkg, mods, err)
	}
	cp := filepath.Join(scratch, filepath.Base(path))
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(path + suffix)
		if suffix != "" && os.IsNotExist(err) {
			continue
		}
		if err == nil {
			err = os.WriteFile(cp+suffix, b, 0o600)
		}
		if err != nil {
			return Projection{}, err
		}
	}
	script := filepath.Join(scratch, "rebuild.mjs")
	if err := os.WriteFile(script, []byte(rebuildJS), 0o600); err != nil {
		return Projection{}, err
	}
	if out, err := osexec.CommandContext(ctx, node, script, mods[0], cp, session).CombinedOutput(); err != nil {
		return Projection{}, fmt.Errorf("OpenClaw's rebuild of session %s in a copy of %s: %w\n%s", session, path, err, out)
	}
	return ReadProjection(cp, session)
}
