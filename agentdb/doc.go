// Package agentdb reaches transcripts that an agent keeps as rows of its
// own SQLite database instead of files. OpenClaw (2026.8 and later, agent
// schema 23) keeps each session in agents/<id>/agent/openclaw-agent.sqlite,
// one row of transcript_events an entry, the entry's JSON stored as text
// (event_json) or as a zstd frame (event_zstd).
//
// Open names a database, Sessions lists its
// sessions, Fetch writes one session's rows as JSONL lines, and Replace
// writes a rewritten copy of those lines back into the rows. A session
// thus takes the path a transcript in a bucket takes through the
// commands: fetch to a local file, rewrite the file, replace the original
// only if it is unchanged.
//
// # Guarantees
//
// A fetched line is its row's event JSON byte for byte (decompressed and
// checked against the recorded length), so an exact-restore marker made
// from the line restores the row exactly. Replace changes a session in
// one SQLite transaction begun with BEGIN IMMEDIATE and no busy wait:
// whenever the process dies, every row holds either its old or its new
// JSON, whole. It writes only if every row of the session still holds
// what Fetch read (ErrChanged), and only while no OpenClaw process holds
// the database (ErrInUse, as a *HeldError naming the process and the
// lock), judged by OpenClaw's own rules: its lifecycle coordinators, its
// gateway lock, its agent database leases, its maintenance lease. While
// it writes, it holds that maintenance lease itself, so that no OpenClaw
// process opens the database meanwhile, and it deletes OpenClaw's proof
// of the database's integrity first, as OpenClaw's own maintenance does.
// It keeps OpenClaw's derived state true as OpenClaw's exact rewrite of
// rows does: it rotates the session's rewrite watermark, advances its
// recency, and changes the session's full-text search rows to what
// OpenClaw's rebuild of them makes, rather than leave the rebuild to
// OpenClaw, whose `agent` command refuses a session until it is done.
// A rewritten row is stored as identity text, a form OpenClaw writes and
// reads itself.
//
// Sessions that OpenClaw moved to a cold archive are listed but never
// fetched nor rewritten (ErrCold). A database of a schema version this
// package was not tested against is refused (ErrUnknownSchema). Nothing
// is written but the state folder's own databases, through SQLite, and
// each keeps the journal mode OpenClaw gave it.
//
// The functions may be called from several goroutines at once; Replace
// calls on one database run one at a time.
package agentdb
