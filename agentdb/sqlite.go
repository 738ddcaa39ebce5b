package agentdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Errors of the package's functions, wrapped with the database and
// session they concern.
var (
	// ErrUnknownSchema is the error of a database whose schema version is
	// not the one this package was tested against.
	ErrUnknownSchema = errors.New("unknown OpenClaw agent database schema")
	// ErrNotFound is the error of a session the database does not hold.
	ErrNotFound = errors.New("no such session")
	// ErrCold is the error of a session OpenClaw moved to a cold archive:
	// its events are no longer rows of the database.
	ErrCold = errors.New("session is in a cold archive, not rewritten")
	// ErrCorrupt is the error of a row whose event cannot be read as one
	// JSONL line: a frame that does not decode to its recorded length, or
	// JSON holding a line break.
	ErrCorrupt = errors.New("transcript row cannot be read")
	// ErrChanged is the error of a session whose rows changed since they
	// were fetched: nothing was written.
	ErrChanged = errors.New("session changed since it was fetched; left as it is")
	// ErrInUse is the error of a database an OpenClaw process holds; it
	// comes as a *HeldError that names the process.
	ErrInUse = errors.New("an OpenClaw process holds the database")
)

// SchemaVersion is the agent schema (PRAGMA user_version) of the
// databases this package reads and writes: that of OpenClaw 2026.9.6,
// the first released with transcripts compressed in SQLite.
const SchemaVersion = 23

// maxEventBytes is the largest event OpenClaw stores compressed
// (MAX_COMPRESSED_EVENT_BYTES, also a CHECK of transcript_events).
const maxEventBytes = 4 << 20

// dsn returns the URI that opens the existing database file at path
// (never creating one) with the given query parameters. The path is
// escaped as a URI path, so that `?` or `#` in it stay part of the name.
func dsn(path string, params url.Values) string {
	return (&url.URL{Scheme: "file", Path: path, RawQuery: params.Encode()}).String()
}

// openRead opens the database at path to read it. SQLite's read-only
// mode takes no write lock and never checkpoints, so an OpenClaw process
// may have the database open meanwhile. A read waits up to readBusy for
// a commit under way to end: in a rollback journal, a reader is refused
// while a writer (OpenClaw, or this run replacing another session of the
// database) commits, and a fetch must not fail for that.
func openRead(path string) (*sql.DB, error) {
	return sql.Open("sqlite", dsn(path, url.Values{"mode": {"ro"}, "_pragma": {fmt.Sprintf("busy_timeout(%d)", readBusy.Milliseconds())}}))
}

// readBusy bounds a read's wait for a commit to end.
const readBusy = 5 * time.Second

// readTx runs fn in a read transaction of the database at path, opened
// with openRead.
func readTx(ctx context.Context, path string, fn func(tx *sql.Tx) error) error {
	db, err := openRead(path)
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return fn(tx)
}

// openWrite opens the database at path to change it on one connection:
// transactions begin with BEGIN IMMEDIATE, which takes the write lock at
// once; a lock held by another process fails at once (busy timeout 0)
// rather than waiting; commits are synced (synchronous FULL, in WAL mode
// as in rollback mode); foreign keys are enforced as OpenClaw enforces
// them. The journal mode is left as the database has it.
func openWrite(path string, busyMillis int) (*sql.DB, error) {
	db, err := sql.Open("sqlite", dsn(path, url.Values{
		"mode":    {"rw"},
		"_txlock": {"immediate"},
		"_pragma": {fmt.Sprintf("busy_timeout(%d)", busyMillis), "synchronous(FULL)", "foreign_keys(1)"},
	}))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// querier is a *sql.DB, *sql.Conn or *sql.Tx.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// checkSchema fails with ErrUnknownSchema unless the database is an
// OpenClaw agent database of SchemaVersion.
func checkSchema(ctx context.Context, q querier) error {
	var v int
	if err := q.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return err
	}
	if v != SchemaVersion {
		return fmt.Errorf("%w: version %d, this transcript-tool knows %d", ErrUnknownSchema, v, SchemaVersion)
	}
	var role string
	err := q.QueryRowContext(ctx, "SELECT role FROM schema_meta WHERE meta_key = 'primary'").Scan(&role)
	if err != nil || role != "agent" {
		return fmt.Errorf("%w: not an agent database (schema_meta: %q, %v)", ErrUnknownSchema, role, err)
	}
	return nil
}

// tableExists reports whether the database has the table name.
func tableExists(ctx context.Context, q querier, name string) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?", name).Scan(&n)
	return n > 0, err
}

// busy reports whether err is SQLite's "database is locked": another
// connection holds a lock that excludes the one asked for.
func busy(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	c := se.Code() & 0xff
	return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
}

// zstdDecoder decodes event_zstd frames. DecodeAll may be called from
// several goroutines at once.
var zstdDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderMaxMemory(2*maxEventBytes))
})

// event returns a row's event JSON: event_json, or else event_zstd
// decoded, which must give exactly event_utf8_bytes bytes.
func event(text sql.NullString, frame []byte, size sql.NullInt64) ([]byte, error) {
	if text.Valid {
		return []byte(text.String), nil
	}
	if frame == nil || !size.Valid || size.Int64 < 1 || size.Int64 > maxEventBytes {
		return nil, fmt.Errorf("%w: neither event_json nor a bounded event_zstd", ErrCorrupt)
	}
	dec, err := zstdDecoder()
	if err != nil {
		return nil, err
	}
	out, err := dec.DecodeAll(frame, make([]byte, 0, size.Int64))
	if err != nil {
		return nil, fmt.Errorf("%w: event_zstd: %w", ErrCorrupt, err)
	}
	if int64(len(out)) != size.Int64 {
		return nil, fmt.Errorf("%w: event_zstd decodes to %d bytes, event_utf8_bytes says %d", ErrCorrupt, len(out), size.Int64)
	}
	return out, nil
}
