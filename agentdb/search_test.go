package agentdb

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// imagesMigrated returns session C's lines with each image replaced as
// migrate replaces a user's image: by a text block naming the artifact,
// the entry gaining the marker member.
func imagesMigrated(lines []string) []string {
	image := `{"type":"image","data":"` + pixel + `","mimeType":"image/png"}`
	text := `{"type":"text","text":"[Image omitted: stored as artifact]\npath: /artifacts/objects/f0/f0"}`
	out := append([]string(nil), lines...)
	for i, l := range out {
		if strings.Contains(l, image) {
			l = strings.ReplaceAll(l, image, text)
			out[i] = l[:len(l)-1] + `,"transcriptTool":{"v":1}}`
		}
	}
	return out
}

// search is what a session's search projection holds: its full-text
// rows (sorted: their rowids' order is not part of what they say), its
// active events and its index state but for the time it was written.
type search struct {
	fts, active []string
	state       string
}

func readSearch(t *testing.T, path, session string) search {
	t.Helper()
	db := sqlDB(t, path)
	var s search
	for _, q := range []struct {
		sql string
		to  *[]string
	}{
		{`SELECT f.message_id || '|' || f.role || '|' || f.timestamp || '|' || f.text FROM session_transcript_fts AS f
			JOIN session_transcript_fts_rows AS r ON r.id = f.rowid WHERE r.session_id = ?`, &s.fts},
		{`SELECT active_position || '|' || event_seq || '|' || coalesce(message_position, '') || '|' || coalesce(context_eligible, '')
			FROM session_transcript_active_events WHERE session_id = ? ORDER BY active_position`, &s.active},
	} {
		rows, err := db.Query(q.sql, session)
		require.NoError(t, err)
		for rows.Next() {
			var v string
			require.NoError(t, rows.Scan(&v))
			*q.to = append(*q.to, v)
		}
		require.NoError(t, rows.Err())
		rows.Close()
	}
	sort.Strings(s.fts)
	require.NoError(t, db.QueryRow(`SELECT indexed_seq || '|' || coalesce(leaf_event_id, '') || '|' || needs_rebuild || '|' ||
		active_event_count || '|' || active_message_count FROM session_transcript_index_state WHERE session_id = ?`, session).Scan(&s.state))
	return s
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

// rebuiltByOpenClaw returns the search projection of session that
// OpenClaw's own rebuild makes of the rows of the database at path, in a
// copy of it.
func rebuiltByOpenClaw(t *testing.T, path, session string) search {
	t.Helper()
	bin, pathEnv := openclawEnv(t)
	mods, _ := filepath.Glob(filepath.Join(filepath.Dir(filepath.Dir(bin)), "openclaw", "dist", "session-transcript-index-*.mjs"))
	require.Len(t, mods, 1, "OpenClaw's search projection module")
	dir := t.TempDir()
	cp := filepath.Join(dir, FileName)
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(path + suffix)
		if suffix != "" && os.IsNotExist(err) {
			continue
		}
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(cp+suffix, b, 0o600))
	}
	script := filepath.Join(dir, "rebuild.mjs")
	require.NoError(t, os.WriteFile(script, []byte(rebuildJS), 0o600))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	node := filepath.Join(strings.Split(pathEnv, ":")[0], "node")
	out, err := exec.CommandContext(ctx, node, script, mods[0], cp, session).CombinedOutput()
	require.NoError(t, err, "%s", out)
	return readSearch(t, cp, session)
}

// TestSearchAsOpenClawRebuilds checks that after a replace the search
// projection holds what OpenClaw's own rebuild of it makes, without a
// rebuild: a user's image that became text is searched, and no longer
// once restored; tool results, which are not searched, leave it as it is.
func TestSearchAsOpenClawRebuilds(t *testing.T) {
	d := fixtureDB(t)
	ctx := context.Background()
	step := func(session string, lines []string) {
		t.Helper()
		snap, _, _ := fetchFile(t, d, session)
		_, err := d.Replace(ctx, snap, writeLines(t, lines))
		require.NoError(t, err)
		got := readSearch(t, d.Path, session)
		assert.Equal(t, rebuiltByOpenClaw(t, d.Path, session), got)
		assert.Equal(t, "0", strings.Split(got.state, "|")[2], "not left for OpenClaw to rebuild")
	}
	origC := fixtureLines()[sessionC]
	before := readSearch(t, d.Path, sessionC)
	require.Len(t, before.fts, 3, "fixture: two texts and the user's text beside the image")

	step(sessionC, imagesMigrated(origC))
	fts := fmt.Sprint(readSearch(t, d.Path, sessionC).fts)
	assert.Contains(t, fts, "c1|user|1795132801000.0|look at this\n[Image omitted")
	assert.Contains(t, fts, "c3|user|1795132803000.0|[Image omitted")

	step(sessionC, origC)
	assert.Equal(t, before.fts, readSearch(t, d.Path, sessionC).fts)

	step(sessionA, migrated(fixtureLines()[sessionA]))
}
