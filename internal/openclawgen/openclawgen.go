// Package openclawgen writes OpenClaw state folders for tests that cannot
// run OpenClaw itself: an agent database of schema 23 whose sessions are
// stored as OpenClaw 2026.9.6 stores them (entries as JSON text, or as a
// zstd frame with its navigation summary once compressing saves enough),
// with the derived state the tool keeps true (full-text rows, active
// events, index state, rewrite watermark), and the state folder's shared
// database of leases. The tables hold the columns the tool reads and
// writes, not OpenClaw's whole schema; the entries have the shapes a real
// OpenClaw run wrote (session version 4, model snapshot and cache-ttl
// custom entries, exec tool calls and results).
//
// Every function writes the same rows for the same arguments.
package openclawgen

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"
	_ "modernc.org/sqlite" // the database/sql driver "sqlite"

	"github.com/transcript-tool/transcript-tool/internal/testsession"
)

// Session is a session to write: its id, the session key it is filed
// under, and its entries, one JSON object each.
type Session struct {
	ID, Key string
	Lines   []string
}

// Workload returns a session as OpenClaw writes one whose model ran n
// shell commands, each printing size bytes: the header, model and
// thinking level changes, a model snapshot, the user's request, then for
// each command the assistant's exec call, its result and a cache-ttl
// entry, and the assistant's last answer.
func Workload(id, key string, n, size int) Session {
	s := Session{ID: id, Key: key}
	parent := ""
	sec := 0
	// add appends an entry of type kind: its own members, then id,
	// parentId and timestamp, but for a message, whose message member
	// comes last.
	add := func(kind, body string) {
		sec++
		eid := fmt.Sprintf("%s-%04d", id[:8], sec)
		p := "null"
		if parent != "" {
			p = jq(parent)
		}
		ids := fmt.Sprintf(`"id":%s,"parentId":%s,"timestamp":%s`, jq(eid), p, jq(stamp(sec)))
		if kind == "message" {
			s.Lines = append(s.Lines, fmt.Sprintf(`{"type":"message",%s,%s}`, ids, body))
		} else {
			s.Lines = append(s.Lines, fmt.Sprintf(`{"type":%s,%s%s}`, jq(kind), body, ids))
		}
		parent = eid
	}
	s.Lines = append(s.Lines, fmt.Sprintf(`{"type":"session","version":4,"id":%s,"timestamp":%s,"cwd":"/home/user/project"}`, jq(id), jq(stamp(0))))
	add("model_change", `"provider":"standin","modelId":"standin-model",`)
	add("thinking_level_change", `"thinkingLevel":"off",`)
	add("custom", `"customType":"model-snapshot","data":{"timestamp":1795735215139,"provider":"standin","modelApi":"anthropic-messages","modelId":"standin-model"},`)
	msg := func(m string) { add("message", `"message":`+m) }
	msg(fmt.Sprintf(`{"role":"user","content":"Run the workload.","timestamp":%d,"__openclaw":{"senderIsOwner":true},"idempotencyKey":"%s:user"}`, millis(sec+1), id))
	for i := 1; i <= n; i++ {
		call := fmt.Sprintf("toolu_standin_%04d_0", i)
		msg(fmt.Sprintf(`{"role":"assistant","content":[{"type":"toolCall","id":%s,"name":"exec","arguments":{"command":"cat file%d.txt"}}],"api":"anthropic-messages","provider":"standin","model":"standin-model","stopReason":"toolUse","timestamp":%d}`,
			jq(call), i, millis(sec+1)))
		msg(fmt.Sprintf(`{"role":"toolResult","toolCallId":%s,"toolName":"exec","content":[{"type":"text","text":%s}],"details":{"status":"completed","exitCode":0,"cwd":"/home/user/project"},"isError":false,"timestamp":%d,"__openclaw":{"runId":"run-%s"}}`,
			jq(call), jq(testsession.Text(i, size)), millis(sec+1), id[:8]))
		add("custom", fmt.Sprintf(`"customType":"openclaw.cache-ttl","data":{"prunedToolResults":[],"frozenToolResults":[{"key":"tool:%s:%d","sourceHash":"h%04d"}]},`, call, millis(sec), i))
	}
	msg(fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":"Done."}],"api":"anthropic-messages","provider":"standin","model":"standin-model","stopReason":"stop","timestamp":%d}`, millis(sec+1)))
	return s
}

// DBPath returns where the agent database of agent id lies in the state
// folder state.
func DBPath(state, agent string) string {
	return filepath.Join(state, "agents", agent, "agent", "openclaw-agent.sqlite")
}

// Write makes the state folder state (which must not hold an agent
// database of agent yet) with the sessions in agent's database.
func Write(state, agent string, sessions []Session) error {
	path := DBPath(state, agent)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(state, "state"), 0o700); err != nil {
		return err
	}
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("%s exists", path)
	}
	if err := exec(filepath.Join(state, "state", "openclaw.sqlite"), []string{stateSchema}); err != nil {
		return err
	}
	stmts := []string{agentSchema, fmt.Sprintf(`INSERT INTO schema_meta VALUES ('primary', 'agent', 23, %s, '2026.9.6', 1795735195338, 1795735195338)`, quote(agent))}
	for _, s := range sessions {
		st, err := sessionRows(s)
		if err != nil {
			return fmt.Errorf("session %s: %w", s.ID, err)
		}
		stmts = append(stmts, st...)
	}
	return exec(path, stmts)
}

// Append adds an entry to the end of session id, as OpenClaw appends one,
// in the agent database at path: the row and its active event.
func Append(path, id, line string) error {
	return exec(path, []string{fmt.Sprintf(`INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_utf8_bytes)
		SELECT %[1]s, max(seq) + 1, %[2]s, 1795735299000, %[3]d FROM transcript_events WHERE session_id = %[1]s`, quote(id), quote(line), len(line))})
}

// exec runs stmts in one transaction of the database at path, made if
// need be as OpenClaw makes its databases: in WAL mode, with incremental
// auto-vacuum (which only a database without tables takes). It waits
// up to 10 s for another writer's transaction to end rather than fail at
// once: tests write with it while migrate rewrites another session.
func exec(path string, stmts []string) error {
	db, err := sql.Open("sqlite", (&url.URL{Scheme: "file", Path: path, RawQuery: url.Values{"_pragma": {"busy_timeout(10000)", "auto_vacuum(INCREMENTAL)", "journal_mode(WAL)"}}.Encode()}).String())
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, s := range stmts {
		if _, err := tx.Exec(s); err != nil {
			return fmt.Errorf("%s: %w\n%.300s", path, err, s)
		}
	}
	return errors.Join(tx.Commit(), db.Close())
}

// entry is what the derived tables need of an entry.
type entry struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	Timestamp string `json:"timestamp"`
	Message   *struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// sessionRows returns the statements that insert session s: its window,
// its rows, and the derived state of a session whose entries form one
// branch, as OpenClaw's projection makes it: every entry but the header
// an active event, a full-text row for each user or assistant text.
func sessionRows(s Session) ([]string, error) {
	const created = 1795735196002
	stmts := []string{fmt.Sprintf(`INSERT INTO session_windows (session_id, session_key, created_at, updated_at, transcript_updated_at, transcript_observed_at)
		VALUES (%s, %s, %d, %d, %d, %d)`, quote(s.ID), quote(s.Key), created, created, created, created)}
	var leaf string
	messages := 0
	for seq, line := range s.Lines {
		var e entry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			return nil, fmt.Errorf("line %d: %w", seq+1, err)
		}
		at, err := time.Parse(time.RFC3339Nano, e.Timestamp)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", seq+1, err)
		}
		stmts = append(stmts, row(s.ID, seq, line, at.UnixMilli(), e.Type == "session"))
		if e.Type == "session" {
			continue
		}
		leaf = e.ID
		msgPos := "NULL"
		if e.Type == "message" {
			msgPos = fmt.Sprint(messages)
			messages++
		}
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO session_transcript_active_events VALUES (%s, %d, %d, %s, 1)`, quote(s.ID), seq-1, seq, msgPos))
		if text := searchText(e); text != "" {
			stmts = append(stmts,
				fmt.Sprintf(`INSERT INTO session_transcript_fts_rows (session_id, message_id) VALUES (%s, %s)`, quote(s.ID), quote(e.ID)),
				fmt.Sprintf(`INSERT INTO session_transcript_fts (rowid, text, session_id, message_id, role, timestamp) VALUES (last_insert_rowid(), %s, %s, %s, %s, %d.0)`,
					quote(text), quote(s.ID), quote(e.ID), quote(e.Message.Role), at.UnixMilli()))
		}
	}
	last := len(s.Lines) - 1
	stmts = append(stmts,
		fmt.Sprintf(`INSERT INTO session_transcript_index_state VALUES (%s, %d, %s, 0, %d, %d, %d)`, quote(s.ID), last, quote(leaf), last, messages, created),
		fmt.Sprintf(`INSERT INTO transcript_rewrite_watermarks VALUES (%s, 'eb65e8d2784c43469aa5176d0515c05f', %d)`, quote(s.ID), created))
	return stmts, nil
}

// searchText returns the text OpenClaw indexes of a user's or assistant's
// message: its content string, or its text blocks joined by line breaks.
func searchText(e entry) string {
	if e.Message == nil || e.Message.Role != "user" && e.Message.Role != "assistant" {
		return ""
	}
	var s string
	if json.Unmarshal(e.Message.Content, &s) == nil {
		return strings.TrimSpace(s)
	}
	var blocks []struct{ Type, Text string }
	_ = json.Unmarshal(e.Message.Content, &blocks)
	var texts []string
	for _, b := range blocks {
		if b.Type == "text" && strings.TrimSpace(b.Text) != "" {
			texts = append(texts, strings.TrimSpace(b.Text))
		}
	}
	return strings.Join(texts, "\n")
}

// row returns the statement inserting entry line as row seq, as OpenClaw
// stores it (prepareTranscriptPayload): as text when it is the header,
// shorter than 1 KiB or holds a \u escape, or when its zstd frame (level
// 1, with checksum) and navigation summary do not save a tenth of it, at
// least 64 bytes; otherwise as the frame.
func row(id string, seq int, line string, created int64, header bool) string {
	n := len(line)
	if !header && n >= 1024 && !strings.Contains(line, `\u`) {
		frame := encoder.EncodeAll([]byte(line), nil)
		nav := fmt.Sprintf(`{"version":1,"report":{"kind":"canonical"},"navigation":{},"reset":{},"model":{},"modelBytes":%[1]d,"modelWithoutCheckpointBytes":%[1]d,"withoutCustomDataBytes":%[1]d}`, n)
		if len(frame)+len(nav) <= n-max(64, (n+9)/10) {
			return fmt.Sprintf(`INSERT INTO transcript_events (session_id, seq, event_zstd, created_at, event_utf8_bytes, navigation_json) VALUES (%s, %d, X'%X', %d, %d, %s)`,
				quote(id), seq, frame, created, n, quote(nav))
		}
	}
	return fmt.Sprintf(`INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_utf8_bytes) VALUES (%s, %d, %s, %d, %d)`,
		quote(id), seq, quote(line), created, n)
}

// encoder makes frames as OpenClaw's: level 1, with a checksum.
var encoder, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderCRC(true))

// quote returns s as an SQL string literal.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// stamp returns the timestamp of the entry written sec seconds into the
// session.
func stamp(sec int) string {
	return time.UnixMilli(millis(sec)).UTC().Format("2006-01-02T15:04:05.000Z")
}

// millis returns the Unix time in milliseconds sec seconds into the
// session.
func millis(sec int) int64 { return 1795735212530 + int64(sec)*1000 }

// jq returns s as a JSON string, escaped as JavaScript's JSON.stringify
// escapes it.
func jq(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// agentSchema makes the tables of an agent database that the tool reads
// and writes, with their keys, and the trigger by which deleting a
// full-text row's owner deletes the row.
const agentSchema = `
PRAGMA user_version = 23;
CREATE TABLE schema_meta (meta_key TEXT NOT NULL PRIMARY KEY, role TEXT NOT NULL, schema_version INTEGER NOT NULL,
	agent_id TEXT, app_version TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL) STRICT;
CREATE TABLE session_windows (session_id TEXT NOT NULL PRIMARY KEY, session_key TEXT NOT NULL,
	created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
	transcript_updated_at INTEGER DEFAULT NULL, transcript_observed_at INTEGER DEFAULT NULL) STRICT;
CREATE TABLE transcript_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT, created_at INTEGER NOT NULL,
	event_zstd BLOB, event_utf8_bytes INTEGER, navigation_json TEXT,
	PRIMARY KEY (session_id, seq), FOREIGN KEY (session_id) REFERENCES session_windows(session_id) ON DELETE CASCADE,
	CHECK ((event_json IS NOT NULL AND event_zstd IS NULL) OR
		(event_json IS NULL AND event_zstd IS NOT NULL AND event_utf8_bytes IS NOT NULL AND navigation_json IS NOT NULL))) STRICT;
CREATE TABLE transcript_rewrite_watermarks (session_id TEXT NOT NULL PRIMARY KEY, generation TEXT NOT NULL, updated_at INTEGER NOT NULL,
	FOREIGN KEY (session_id) REFERENCES session_windows(session_id) ON DELETE CASCADE) STRICT;
CREATE TABLE session_transcript_index_state (session_id TEXT NOT NULL PRIMARY KEY, indexed_seq INTEGER NOT NULL, leaf_event_id TEXT,
	needs_rebuild INTEGER NOT NULL DEFAULT 0, active_event_count INTEGER NOT NULL DEFAULT 0,
	active_message_count INTEGER NOT NULL DEFAULT 0, updated_at INTEGER NOT NULL) STRICT;
CREATE TABLE session_transcript_active_events (session_id TEXT NOT NULL, active_position INTEGER NOT NULL, event_seq INTEGER NOT NULL,
	message_position INTEGER, context_eligible INTEGER, PRIMARY KEY (session_id, active_position),
	FOREIGN KEY (session_id, event_seq) REFERENCES transcript_events(session_id, seq) ON DELETE CASCADE) STRICT;
CREATE VIRTUAL TABLE session_transcript_fts USING fts5(text, session_id UNINDEXED, message_id UNINDEXED, role UNINDEXED,
	timestamp UNINDEXED, tokenize = 'unicode61 remove_diacritics 2');
CREATE TABLE session_transcript_fts_rows (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, message_id TEXT) STRICT;
CREATE TRIGGER session_transcript_fts_rows_after_delete AFTER DELETE ON session_transcript_fts_rows
	BEGIN DELETE FROM session_transcript_fts WHERE rowid = OLD.id; END;
CREATE TABLE session_transcript_cold_archives (session_id TEXT NOT NULL PRIMARY KEY, generation TEXT NOT NULL,
	archive_name TEXT NOT NULL UNIQUE, archive_sha256 TEXT NOT NULL, event_count INTEGER NOT NULL, raw_bytes INTEGER NOT NULL,
	archive_bytes INTEGER NOT NULL, last_seq INTEGER NOT NULL, archived_at INTEGER NOT NULL, storage TEXT NOT NULL,
	archive_blob BLOB) STRICT;
`

// stateSchema makes the lease tables of the state folder's shared
// database.
const stateSchema = `
CREATE TABLE IF NOT EXISTS state_leases (scope TEXT NOT NULL, lease_key TEXT NOT NULL, owner TEXT NOT NULL, expires_at INTEGER,
	heartbeat_at INTEGER, payload_json TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
	PRIMARY KEY (scope, lease_key)) STRICT;
CREATE TABLE IF NOT EXISTS agent_database_leases (lease_id TEXT PRIMARY KEY, agent_id TEXT NOT NULL, path TEXT NOT NULL,
	owner_pid INTEGER NOT NULL, owner_start_time INTEGER, opened_at INTEGER NOT NULL) STRICT;
`
