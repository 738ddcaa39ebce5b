// Package registry is the append-only registry of where each artifact of
// a store came from. A Store is a store's objects (package store, over a
// store.Backend) together with its registry; the registry's files are
// kept in the store's local folder.
//
// # Layout
//
//	<store>/objects/<hh>/<64 hex>      artifact bytes, named by their SHA-256
//	<store>/registry/<writer>.jsonl    append-only segments, one per writer, merged on read
//	<store>/registry/<writer>.idx      a segment's index, a cache (see # Indexes)
//	<store>/registry.jsonl             the single-file registry of earlier versions, still read
//	<store>/lock                       held shared by writers, exclusively by gc
//
// A registry file holds one Record per line, as JSON. A writer's id
// (Writer.ID) names the time its segment was started, its host, its
// process id, a sequence number that tells apart the writers of one
// process (each Store is one, even two Stores of one process on one
// store), and its shard, if it has one.
//
// # Guarantees
//
// Objects are package store's: every read re-hashes, a damaged object is
// reported as store.ErrCorrupt, never served, and Put replaces it; Flush
// makes what was stored durable (see store.Backend).
//
// A Store appends only to its own segment, so no two writers, on one
// machine or on several sharing the store, ever append to one file. The
// segment is created with O_EXCL on the first Append that has a line to
// write (a crash leaves it empty or with whole lines and perhaps a torn
// last one, never a half-named file); its lines are written one write
// each, after the objects they name are durable, and fsynced, with the
// segment's directory entry, before Append returns: before the caller
// renames the transcript that refers to them into place. A Store never
// appends after a torn line: when a write or fsync fails it leaves that
// segment and starts another. A record the registry already holds
// (equal but for its creation time) is not appended again, so a run that
// was killed and run again leaves the registry holding what one run
// would. The single-file registry is never appended to.
//
// # Reading
//
// Readers merge the single-file registry first, then the segments sorted
// by name: a deterministic order that, with the start time first in a
// writer's id, is roughly the order the writers started in. A torn last
// line of any file is skipped (its writer is dead, or will not append
// after it); a bad line elsewhere is reported with its file, line and
// byte offset, never dropped silently. A line over 1 MiB is such a bad
// line, passed over without being held (a record takes a few hundred
// bytes; Append splits the places of one that would not fit). Readers
// take no lock.
//
// # Indexes
//
// A segment of a local store of at least 1 MiB may have an index beside
// it, the segment's name with ".idx" for ".jsonl", which RecordsMatching
// uses to read only the lines that may hold the records it looks for. It
// writes the index of such a segment that it had to read whole (or whose
// index covers less than seven eighths of it), and Compact writes the
// merged segment's; both write it atomically (a hidden temporary file,
// fsynced, renamed, the directory fsynced) and ignore a failure to: a
// reader of a store it may not write to reads whole. Compact removes the
// indexes of the segments it removed, and any whose segment is gone.
//
// An index is only a cache, never trusted over its segment. Each read
// checks its CRC-32C, its version, the segment's inode, that the segment
// is at least as long as the bytes it covers, and the SHA-256 of samples
// of those bytes (the first and last 64 KiB and 4 KiB at 16 places
// between): segments are only appended to, so a segment made anew, cut
// or rewritten is told from the one indexed. An index that fails a check
// is ignored (and replaced by the next reader that can). A line it names
// must be one line, starting just after a newline and ending with its
// only one; if it is not (the segment was changed in place where no
// sample looks), the segment is read whole after all, its index written
// anew, and each record is still passed on once. The lines appended after the bytes it covers are read as
// they are, so a record appended since is never missed.
//
// The format, integers little-endian: "ttregidx", a uint32 version (1),
// uint64 length covered, uint64 inode, the 32-byte sample SHA-256, uint64
// number of lines; then four sections, each a uint64 length and its bytes:
// the length of each line covered, as uvarints (the header line
// included); the keys, 16 bytes each sorted by the first 8, a key's
// fingerprint (FNV-1a 64 of the field's number and the value) then either
// 1<<63 | the number (from 0) of its one line or the offset of its list in
// the next section; the lists, each a uvarint count and the line numbers
// as uvarint differences; the list of lines always read (lines that are
// not records, or whose hash is not an artifact id, so that readers
// report them as they would reading whole); and a CRC-32C of all that.
// A record's keys are its hash, session, source and, for each of its
// places, its tool, tool call id and entry (one field, FieldID).
//
// # Compaction
//
// Compact, which gc runs holding the store's lock exclusively, merges
// every file of the registry into one new segment and only then removes
// the files it merged. The new segment starts with a header line,
// {"compacts":[{"file":...,"size":...,"sha256":...}]}, naming each file it
// merged with the length it merged (up to its last whole line) and the
// SHA-256 of its bytes up to there. The argument that no reader loses or
// doubles a record:
//
//   - The new segment is written to a hidden temporary file, fsynced,
//     renamed into place and its directory fsynced before any file it
//     merged is removed. So at every instant the files present hold every
//     record: first the old files; then the old files and the new
//     segment; then the new segment and fewer old files; then the new
//     segment.
//   - A reader lists the files and opens them all before it reads a line.
//     If a file it listed is gone when it opens it, a compaction removed
//     it, and had renamed its new segment into place first: the reader
//     closes everything and lists again (it has passed nothing on yet).
//     Once every file is open, removals no longer matter: an open file
//     stays readable. Each file is read up to its size when opened.
//   - A file named in the header of a segment the reader opened, that
//     still has the bytes the header describes, is read only past them:
//     the new segment holds those lines. So a reader that opens both the
//     new segment and files it merged, not yet removed (or left by a
//     compaction killed before its removals), passes each line on once.
//     The hash, not the name alone, identifies the file merged: a writer
//     of an earlier version that makes registry.jsonl anew after a
//     compaction removed it has its records read, not taken as merged.
//   - No writer appends to a file while it is merged: writers of this
//     version append only while holding the store's lock shared, and of
//     earlier versions hold the single-file registry's own lock, which
//     Compact holds until it has removed that file. A writer whose
//     segment was compacted away finds it gone at its next Append and
//     starts a new segment with a new id; segment names are never used
//     twice. Against writers that take no lock, Compact keeps any file
//     that is not at its path with the size it had when opened, just
//     before removing it, and readers read past the length merged.
//   - A torn last line is copied to a file beside its own before the file
//     is removed.
//
// Compaction thus costs one pass over the registry to hash it and one to
// copy it; a reader pays for the header check only while files a
// compaction merged are still there.
//
// # Locking
//
// A local store's lock is a flock(2) lock on a file in its folder, an S3
// store's a set of leases (see store.Locker and packages store/local and
// store/s3): a Store that writes (Put, PutSum, PutStream, Append) takes
// it shared before its first write looks for an object, and keeps it
// until Release, so that a collector, which takes it exclusively
// (LockExclusive), never runs between a writer's finding or writing an
// object and the transcript that refers to it being in place, nor while a
// writer appends to its segment; see package fsck, # Collection. Writers
// do not hinder one another. An object found (to deduplicate onto it)
// has its modification time set to now before anything refers to it, for
// collectors that do not take the lock and count a grace period instead.
// Readers take no lock.
//
// Temporary files of writers killed before their rename are hidden
// (".<name>.tmp-<digits>") and removed by RemoveStaleTemps once they are
// old enough that no live writer can own them.
//
// Append makes the objects its records name durable first (Flush), then
// writes the records: SPEC's order, objects before records before the
// transcript that refers to them.
//
// Store and its methods are safe for concurrent use, also by several
// processes on one store.
package registry
