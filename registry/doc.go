// Package registry is the content-addressed artifact store and its
// append-only registry.
//
// # Layout
//
//	<store>/objects/<hh>/<64 hex>   artifact bytes, named by their SHA-256
//	<store>/registry.jsonl          one Record per line, append-only
//	<store>/lock                    held shared by writers, exclusively by gc
//
// # Guarantees
//
// An object is written to a temporary file in its shard directory, fsynced
// and renamed; Sync fsyncs the directories touched since the last Sync, so a
// caller batches directory syncs and still knows when objects are durable.
// Every read re-hashes the bytes: an object whose bytes do not match its
// name is reported as ErrCorrupt, never served, and Put replaces it.
//
// Registry lines are appended under an exclusive file lock, one write per
// line, and fsynced. A torn last line (a crash mid-append) is set aside in a
// file beside the registry and truncated before anything is appended after
// it; readers skip it. A bad line elsewhere is reported to the reader, never
// dropped silently. A record the registry already holds (equal but for its
// creation time) is not appended again, so a run that was killed and run
// again leaves the registry as one run would.
//
// # Locking
//
// The file lock in the store's root is a flock(2) lock: a Store that
// writes (Put, PutSum, PutStream, Append) takes it shared before its first
// write looks for an object, and keeps it until Release, so that a
// collector, which takes it exclusively (LockExclusive), never runs
// between a writer's finding or writing an object and the transcript that
// refers to it being in place; see package fsck, # Collection. Writers do
// not hinder one another. An object found (to deduplicate onto it) has its
// modification time set to now before anything refers to it, for
// collectors that do not take the lock and count a grace period instead.
// Readers take no lock.
//
// Temporary files of writers killed before their rename are hidden
// (".<name>.tmp-<digits>") and removed by RemoveStaleTemps once they are
// old enough that no live writer can own them.
//
// Store and its methods are safe for concurrent use, also by several
// processes on one store.
package registry
