// Package registry is the append-only registry of where each artifact of
// a store came from. A Store is a store's objects (package store)
// together with its registry, both kept in the files of one
// store.Backend: a local folder, a bucket of object storage, or memory.
//
// A registry file holds one Record per line, as JSON. Each writer appends
// to segments of its own (registry/<writer>.jsonl, see Writer.ID): in
// place where the backend appends (store.Appender), else one whole
// segment per Append. Append makes the objects its records name durable
// first, and its records durable before it returns, so that a
// transcript that refers to them is renamed into place last; a record
// the registry holds already is not appended again. Readers (Records,
// RecordsAt, RecordsMatching) merge the single-file registry of earlier
// versions and the segments sorted by name, skip torn last lines and
// report bad ones with their file, line and byte offset. Large segments
// have indexes where the backend tells files apart (a local folder),
// caches that RecordsMatching checks before it trusts them. Compact,
// which gc runs under the store's exclusive lock, merges every file into
// one segment without losing or doubling a record for a reader
// meanwhile.
//
// The design, with the index format and the argument for compaction, is
// in docs/registry-index.md.
//
// Store and its methods are safe for concurrent use, also by several
// processes on one store.
package registry
